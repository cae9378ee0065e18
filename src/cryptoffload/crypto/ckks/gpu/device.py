"""The array module a backend runs on: NumPy (the CPU twin) or CuPy (a CUDA GPU), found lazily.

CuPy is not a dependency of this package: it is imported only when the ``gpu`` backend is
built, and its absence -- or a machine without a CUDA device or driver -- is a
:class:`~cryptoffload.errors.BackendUnavailable` with a one-line reason that names the twin.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cryptoffload.errors import BackendUnavailable

TWIN_HINT = "the rns-numpy backend runs the same code on the CPU"


def gpu_reason() -> str | None:
    """None when CuPy imports and sees a CUDA device, else why not (one line)."""
    try:
        import cupy  # noqa: PLC0415 -- optional, lazily imported
    except Exception as exc:  # ImportError, or a CUDA library failing to load
        return f"CuPy is not importable ({type(exc).__name__}: {exc}); install cupy-cuda13x on a CUDA machine"
    try:
        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as exc:  # CUDARuntimeError without a driver or device
        return f"CuPy finds no CUDA device ({type(exc).__name__}: {exc})"
    return None if count > 0 else "CuPy finds no CUDA device"


def array_module(kind: str) -> Any:
    """``numpy`` for ``"numpy"``; ``cupy`` for ``"cupy"`` or :class:`BackendUnavailable`."""
    if kind == "numpy":
        return np
    reason = gpu_reason()
    if reason is not None:
        raise BackendUnavailable(f"the gpu CKKS backend is unavailable: {reason}; {TWIN_HINT}")
    import cupy  # noqa: PLC0415

    return cupy
