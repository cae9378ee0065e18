"""cffi builder of the GPU kernels' CPU twin (run by setuptools through ``cffi_modules``).

Why a twin: the CUDA source ``paillier_gpu.cu`` is compiled here by the host's C++ compiler,
with ``gpu_portable.h`` turning each kernel's grid-stride loop into a loop over all instances,
so the GPU's arithmetic is tested against gmpy2 on every machine, GPU or not. It needs no
library (no GMP): only g++. The declarations come from ``gpu_kernels.py``, loaded by path
because the package's dependencies may not exist yet at build time.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from cffi import FFI

HERE = Path(__file__).resolve().parent


def _kernels_table() -> ModuleType:
    path = HERE / "gpu_kernels.py"
    spec = importlib.util.spec_from_file_location("_copg_gpu_kernels", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the kernel table {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_builder() -> FFI:
    ffibuilder = FFI()
    ffibuilder.cdef(_kernels_table().cdef())
    ffibuilder.set_source(
        "cryptoffload.crypto._native._paillier_gpu",
        (HERE / "paillier_gpu.cu").read_text(),
        source_extension=".cpp",
        include_dirs=[str(HERE)],
        extra_compile_args=["-O2", "-std=c++17", "-fno-exceptions", "-fno-rtti"],
    )
    return ffibuilder


ffibuilder = make_builder()

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
