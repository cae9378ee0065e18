"""Build ``kernels.cu`` (with ``kernels_host.cpp``) as a host library and run :mod:`arith_cuda`
on it: every launch of ``arith_cuda`` goes to a C function that loops over the blocks and
threads the GPU would run (see ``kernels_host.cpp``). What this checks without a GPU: the
kernels' arithmetic and indexing, and ``arith_cuda``'s launch shapes, bit for bit against the
twin. What it cannot check: the GPU itself (that is the device tests' job)."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np

from cryptoffload.crypto.ckks.gpu import arith_cuda
from cryptoffload.crypto.ckks.gpu.arith import Arith

HARNESS = Path(__file__).with_name("kernels_host.cpp")


def compiler() -> str | None:
    return shutil.which("g++") or shutil.which("c++")


def build(out_dir: Path) -> ctypes.CDLL:
    """Compile the host library into ``out_dir`` (the kernels' source comes from the package)."""
    (out_dir / "kernels.cu").write_text(arith_cuda.source(), encoding="utf-8")
    lib = out_dir / "libkernels_host.so"
    cmd = [compiler(), "-O2", "-std=c++17", "-shared", "-fPIC", "-ffp-contract=off", f"-I{out_dir}",
           str(HARNESS), "-o", str(lib)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return ctypes.CDLL(str(lib))


def _c(arg: Any) -> Any:
    if isinstance(arg, np.ndarray):
        if not arg.flags.c_contiguous:
            raise AssertionError("a kernel argument is not C-contiguous")
        return ctypes.c_void_p(arg.ctypes.data)
    if isinstance(arg, np.int32):
        return ctypes.c_int(int(arg))
    if isinstance(arg, np.int64):
        return ctypes.c_longlong(int(arg))
    raise AssertionError(f"kernel argument of type {type(arg).__name__}: pass NumPy scalars of a fixed width")


def host_kernels(lib: ctypes.CDLL) -> Any:
    """A replacement for ``arith_cuda._kernel``: name -> a launch emulated on the host."""
    def kernel(name: str) -> Any:
        fn = getattr(lib, f"launch_{name}")

        def launch(grid: tuple[int, ...], block: tuple[int, ...], args: tuple[Any, ...], shared_mem: int = 0) -> None:
            gy = grid[1] if len(grid) > 1 else 1
            fn(ctypes.c_int(grid[0]), ctypes.c_int(gy), ctypes.c_int(block[0]), *[_c(a) for a in args])

        return launch

    return kernel


def cuda_on_host(ar: Arith) -> Arith:
    """``ar`` (a NumPy Arith) switched to the CUDA kernel set run on the host."""
    ar.impl = arith_cuda
    ar.kernels = "cuda-host"
    return ar

