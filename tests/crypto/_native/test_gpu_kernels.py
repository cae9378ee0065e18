"""The CUDA source compiles for the GPU (nvcc, sm_90) and in NVRTC's dialect; the kernel table
matches what was built."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cryptoffload.crypto._native import gpu_kernels
from cryptoffload.crypto._native.gpu_interface import kernel_source
from cryptoffload.crypto._native.gpu_twin import _paillier_gpu

NVCC = shutil.which("nvcc")
CPP = shutil.which("cpp")


@pytest.fixture(scope="module")
def nvrtc_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The exact text the CUDA runtime hands NVRTC (header inlined)."""
    path = tmp_path_factory.mktemp("cu") / "paillier_gpu_nvrtc.cu"
    path.write_text(kernel_source())
    return path


def test_nvrtc_text_includes_nothing_of_ours() -> None:
    src = kernel_source()
    assert '#include "gpu_portable.h"' not in src
    assert "COPG_PORTABLE_H" in src


@pytest.mark.skipif(CPP is None, reason="no C preprocessor (cpp) on PATH")
def test_gpu_code_path_needs_no_header(nvrtc_source: Path) -> None:
    """NVRTC compiles without the host's system headers: preprocessing the GPU path with no
    include directory at all must succeed. The CPU path (which includes <stdint.h>) must fail
    the same check, which shows the check can fail."""
    gpu = subprocess.run([CPP, "-P", "-undef", "-nostdinc", "-D__CUDACC_RTC__", str(nvrtc_source), "-o", "/dev/null"],
                         capture_output=True, text=True)
    assert gpu.returncode == 0, gpu.stderr
    cpu = subprocess.run([CPP, "-P", "-undef", "-nostdinc", str(nvrtc_source), "-o", "/dev/null"],
                         capture_output=True, text=True)
    assert cpu.returncode != 0 and "stdint.h" in cpu.stderr


@pytest.mark.skipif(NVCC is None, reason="nvcc not on PATH (the CUDA compile check runs where the CUDA toolkit is installed)")
def test_kernels_compile_for_sm90(nvrtc_source: Path, tmp_path: Path) -> None:
    """Compile (through ptxas) for the H100's sm_90. One width: the kernels are templates, so
    every width is the same code; 16 limbs keeps the check to seconds."""
    ptx = tmp_path / "k.ptx"
    run = subprocess.run([NVCC, "-arch=sm_90", "--ptx", "-std=c++17", "-DCOPG_ONLY_WIDTH=16", "-x", "cu",
                          str(nvrtc_source), "-o", str(ptx)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    entries = set(re.findall(r"\.entry\s+(\w+)\(", ptx.read_text()))
    assert entries == {gpu_kernels.symbol(k, 16) for k in gpu_kernels.KERNELS}
    obj = subprocess.run([NVCC, "-arch=sm_90", "-c", "-std=c++17", "-DCOPG_ONLY_WIDTH=16", "-x", "cu",
                          str(nvrtc_source), "-o", str(tmp_path / "k.o")], capture_output=True, text=True, timeout=600)
    assert obj.returncode == 0, obj.stderr


@pytest.mark.skipif(_paillier_gpu is None, reason="CPU twin not built")
def test_twin_has_every_kernel_at_every_width() -> None:
    for width in gpu_kernels.WIDTHS:
        for name in gpu_kernels.KERNELS:
            assert callable(getattr(_paillier_gpu.lib, gpu_kernels.symbol(name, width)))


def test_cdef_declares_every_kernel_once() -> None:
    decl = gpu_kernels.cdef()
    assert decl.count("void copg_") == len(gpu_kernels.WIDTHS) * len(gpu_kernels.KERNELS)
    assert "void copg_fb_encrypt_64(unsigned long long count, const unsigned int * msg" in decl
