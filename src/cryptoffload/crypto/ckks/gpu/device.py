"""The array module a backend runs on: NumPy (the CPU twin) or CuPy (a CUDA GPU), found lazily.

CuPy is not a dependency of this package: it is reached through :mod:`cryptoffload.cuda` only
when the ``gpu`` backend is built, and its absence -- or a machine without a CUDA device or
driver, or one where NVRTC cannot build ``kernels.cu`` -- is a
:class:`~cryptoffload.errors.BackendUnavailable` with a one-line reason that names the twin.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from cryptoffload import cuda
from cryptoffload.crypto.ckks.gpu.arith_cuda import PROBE_KERNEL
from cryptoffload.crypto.ckks.gpu.launch import nvrtc_options, source
from cryptoffload.errors import BackendUnavailable

TWIN_HINT = "the gpu-twin backend runs the same code on the CPU"


def gpu_reason() -> str | None:
    """None when a CUDA GPU is usable and NVRTC builds and loads ``kernels.cu`` on it, else why
    not (one line; the build is tried once per process)."""
    return cuda.build_reason(source(), nvrtc_options(), PROBE_KERNEL, "the CKKS kernels (kernels.cu)")


def array_module(kind: str) -> ModuleType:
    """``numpy`` for ``"numpy"``; ``cupy`` for ``"cupy"`` or :class:`BackendUnavailable`."""
    if kind == "numpy":
        return np
    reason = gpu_reason()
    if reason is not None:
        raise BackendUnavailable(f"the gpu CKKS backend is unavailable: {reason}; {TWIN_HINT}")
    return cuda.cupy()
