"""What both runtimes share: widths, the NVRTC options building one kernel, the argument checks
every launch passes (NumPy and CuPy arrays alike)."""

from __future__ import annotations

import re
import shutil
import subprocess
from types import SimpleNamespace

import numpy as np
import pytest

from cryptoffload.crypto._native import gpu_interface as gi
from cryptoffload.crypto._native.gpu_kernels import KERNELS, WIDTHS, symbol
from cryptoffload.errors import ConfigError

CPP = shutil.which("cpp")


def test_width_for_bits_picks_the_smallest_width() -> None:
    assert gi.width_for_bits(1) == 16
    assert gi.width_for_bits(512) == 16
    assert gi.width_for_bits(513) == 32
    assert gi.width_for_bits(2048) == 64
    assert gi.width_for_bits(2049) == 96
    assert gi.width_for_bits(6144) == 192
    with pytest.raises(ConfigError, match="largest width"):
        gi.width_for_bits(6145)


@pytest.mark.skipif(CPP is None, reason="no C preprocessor (cpp) on PATH")
@pytest.mark.parametrize("kernel", list(KERNELS))
def test_nvrtc_options_select_one_kernel_at_one_width(kernel: str) -> None:
    """What NVRTC is handed for (kernel, width) defines that kernel and nothing else (the GPU
    path, preprocessed as NVRTC would: no include directory)."""
    width = WIDTHS[3]
    defines = [o for o in gi.nvrtc_options(kernel, width) if o.startswith("-D")]
    out = subprocess.run([CPP, "-P", "-undef", "-nostdinc", "-D__CUDACC_RTC__", *defines, "-"],
                         input=gi.kernel_source(), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert re.findall(r"void (copg_\w+)\(", out.stdout) == [symbol(kernel, width)]
    with pytest.raises(ConfigError):
        gi.nvrtc_options(kernel, 24)


def _fake_cupy_array(dtype: type, contiguous: bool) -> SimpleNamespace:
    """What check_args reads of a CuPy array (no ``writeable`` flag: CuPy has none)."""
    return SimpleNamespace(dtype=np.dtype(dtype), flags=SimpleNamespace(c_contiguous=contiguous))


def test_check_args_refuses_what_a_kernel_would_misread() -> None:
    a = np.zeros((16, 2), dtype=np.uint32)
    ctx = np.zeros(3 * 16 + 1, dtype=np.uint32)
    out = np.zeros((16, 2), dtype=np.uint32)
    assert gi.check_args("mulmod", 16, (2, a, a, ctx, out)) == KERNELS["mulmod"]
    with pytest.raises(TypeError, match="takes 5 arguments"):
        gi.check_args("mulmod", 16, (2, a, a, ctx))
    with pytest.raises(TypeError, match="uint32"):
        gi.check_args("mulmod", 16, (2, a.astype(np.int64), a, ctx, out))
    with pytest.raises(TypeError, match="C-contiguous"):
        gi.check_args("mulmod", 16, (2, np.zeros((16, 4), dtype=np.uint32)[:, ::2], a, ctx, out))
    ro = out.copy()
    ro.flags.writeable = False
    with pytest.raises(TypeError, match="writable"):
        gi.check_args("mulmod", 16, (2, a, a, ctx, ro))
    with pytest.raises(TypeError, match="integer"):
        gi.check_args("mulmod", 16, (2.0, a, a, ctx, out))
    with pytest.raises(ConfigError, match="width"):
        gi.check_args("mulmod", 24, (2, a, a, ctx, out))
    # a CuPy-like array is checked the same way
    assert gi.check_args("mulmod", 16, (2, _fake_cupy_array(np.uint32, True), a, ctx, out))
    with pytest.raises(TypeError, match="C-contiguous"):
        gi.check_args("mulmod", 16, (2, _fake_cupy_array(np.uint32, False), a, ctx, out))
    with pytest.raises(TypeError, match="uint32"):
        gi.check_args("mulmod", 16, (2, _fake_cupy_array(np.uint64, True), a, ctx, out))


def test_key_kernels_are_the_modules_a_key_size_launches() -> None:
    assert gi.key_kernels(1024) == [("fb_table", 64), ("fb_encrypt", 64), ("crt_decrypt", 32), ("col_reduce", 64)]
    assert gi.key_kernels(2048, ("encrypt",)) == [("fb_table", 128), ("fb_encrypt", 128)]
    assert gi.key_kernels(3072, ("decrypt",)) == [("crt_decrypt", 96)]
    with pytest.raises(ConfigError, match="unknown Paillier GPU operation"):
        gi.key_kernels(1024, ("sign",))
