"""The CPU twin of the Paillier GPU kernels: ``paillier_gpu.cu`` compiled by g++ through cffi
(the extension ``_paillier_gpu``, built by ``pip install``), run in the calling thread.

``gpu_portable.h`` fixes ``threadIdx``/``blockIdx`` to 0 and ``blockDim``/``gridDim`` to 1, so
each kernel's grid-stride loop visits every instance; a "stream" is an in-order queue that runs
each operation when it is issued (the GIL is released during each call). It is a correctness
twin, not a fast CPU path (the GMP/IFMA core is that).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from cryptoffload.crypto._native.gpu_interface import KernelArg, Runtime, Stream, check_args
from cryptoffload.crypto._native.gpu_kernels import symbol
from cryptoffload.errors import BackendUnavailable

try:  # built by `pip install` (setup.py's cffi_modules); absent in a never-built checkout
    from cryptoffload.crypto._native import _paillier_gpu  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - exercised only on a broken install (or without cffi)
    _paillier_gpu = None


def twin_reason() -> str | None:
    """None when the CPU twin is built, else why not."""
    if _paillier_gpu is None:
        return "the GPU kernels' CPU twin is not built (reinstall with g++ present: pip install -e .)"
    return None


class _TwinStream(Stream):
    """Operations ran when issued; nothing to wait for."""

    def synchronize(self) -> None:
        return None


class TwinRuntime(Runtime):
    """The kernels compiled for the CPU, run in the calling thread (see the module docstring)."""

    device = "cpu-twin"

    def __init__(self) -> None:
        reason = twin_reason()
        if reason is not None:
            raise BackendUnavailable(reason)
        self._ffi = _paillier_gpu.ffi
        self._lib = _paillier_gpu.lib

    def describe(self) -> str:
        return "CPU twin of the GPU kernels (g++, one instance at a time)"

    def stream(self) -> Stream:
        return _TwinStream()

    def upload(self, host: np.ndarray, stream: Stream) -> np.ndarray:
        return np.array(host, dtype=np.uint32, order="C", copy=True)

    def upload_secret(self, host: np.ndarray, stream: Stream) -> np.ndarray:
        return self.upload(host, stream)   # one copy, the "device" one: nothing else to zero

    def wipe(self, dev: np.ndarray, stream: Stream) -> None:
        dev.fill(0)

    def empty(self, shape: tuple[int, ...], stream: Stream) -> np.ndarray:
        return np.empty(shape, dtype=np.uint32)

    def download(self, dev: np.ndarray, stream: Stream) -> np.ndarray:
        return np.array(dev, copy=True)

    def launch(self, kernel: str, width: int, instances: int, args: Sequence[KernelArg], stream: Stream) -> None:
        spec = check_args(kernel, width, args)
        ffi = self._ffi
        converted = [ffi.from_buffer("unsigned int[]", value, require_writable=kind == "out")
                     if kind in ("in", "out") else int(value) for (_, kind), value in zip(spec, args)]
        getattr(self._lib, symbol(kernel, width))(*converted)
