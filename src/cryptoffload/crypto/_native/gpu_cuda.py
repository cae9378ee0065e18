"""The Paillier GPU kernels on a CUDA device, through CuPy.

Kernels are compiled at run time by NVRTC, one kernel at one limb width per module, on first
use (:func:`cryptoffload.cuda.kernel`: once per process, under a lock; CuPy also caches the
binary on disk), so a key compiles only what it runs: n = 1024 needs ``fb_encrypt`` at 64 limbs
and ``crt_decrypt`` at 32, not the other kernels at those widths.

Each :class:`Stream` is a non-blocking CUDA stream with its own pinned host staging buffers: an
upload copies the caller's array into pinned memory and starts an asynchronous copy, so a
dispatcher thread can encode the next batch while the GPU copies and computes this one; the
staging buffers are kept alive until that stream is next synchronised (so they never return
to CuPy's pinned pool while a copy still reads them).

CuPy is optional and reached through :mod:`cryptoffload.cuda` only: without it, or without a
device, or where NVRTC cannot build the smallest kernel, :func:`cuda_reason` says why in one
line and :class:`CupyRuntime` raises :class:`~cryptoffload.errors.BackendUnavailable` with it.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from cryptoffload import cuda
from cryptoffload.crypto._native.gpu_interface import (
    THREADS_PER_BLOCK, Runtime, Stream, check_args, kernel_source, nvrtc_options)
from cryptoffload.crypto._native.gpu_kernels import symbol
from cryptoffload.errors import BackendUnavailable, ConfigError

_SCALARS = {"u64": np.uint64, "i32": np.int32, "u32": np.uint32}
#: The probe's kernel: the smallest module there is (one Montgomery product, 16 limbs).
PROBE = ("mulmod", 16)


def cuda_reason() -> str | None:
    """None when a CUDA GPU is usable here *and* NVRTC builds and loads the smallest Paillier
    kernel on it, else a one-line reason (cached: the answer does not change in a process)."""
    kernel, width = PROBE
    return cuda.build_reason(kernel_source(), nvrtc_options(kernel, width), symbol(kernel, width),
                             "the Paillier kernels (paillier_gpu.cu)")


class _CudaStream(Stream):
    def __init__(self, cp: Any) -> None:
        self.raw = cp.cuda.Stream(non_blocking=True)
        self.keep: list[Any] = []   # pinned staging buffers of copies still in flight

    def synchronize(self) -> None:
        self.raw.synchronize()
        self.keep.clear()


class CupyRuntime(Runtime):  # pragma: no cover - needs a CUDA GPU; run by the GPU session's tests
    """The kernels on CUDA device ``index`` (see the module docstring)."""

    device = "cuda"

    def __init__(self, index: int = 0) -> None:
        reason = cuda_reason()
        if reason is not None:
            raise BackendUnavailable(reason)
        count = cuda.device_count()
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
            raise ConfigError(f"GPU index {index!r} out of range: this machine has {count} CUDA device(s)")
        self._cp = cuda.cupy()
        self._cpx = cuda.cupyx()
        self.index = index
        self._device = self._cp.cuda.Device(index)
        facts = cuda.device_info(index)
        assert facts is not None
        self.facts = facts
        self.name = str(facts["name"])
        self.multiprocessors = int(facts["multiprocessors"])

    def describe(self) -> str:
        f = self.facts
        return (f"{self.name} (CUDA device {self.index}, sm_{str(f['compute_capability']).replace('.', '')}, "
                f"{self.multiprocessors} SMs, {int(f['memory_bytes']) / 2**30:.0f} GiB)")

    def info(self) -> dict[str, object]:
        return {"device": self.device, **self.facts}

    def stream(self) -> Stream:
        with self._device:
            return _CudaStream(self._cp)

    def upload(self, host: np.ndarray, stream: Stream) -> Any:
        assert isinstance(stream, _CudaStream)
        host = np.asarray(host, dtype=np.uint32)
        pinned = self._cpx.empty_pinned(host.shape, dtype=np.uint32)
        np.copyto(pinned, host)
        with self._device, stream.raw:   # allocated on the stream: the pool reuses it in order
            dev = self._cp.empty(host.shape, dtype=np.uint32)
            dev.set(pinned, stream=stream.raw)
        stream.keep.append(pinned)
        return dev

    def upload_secret(self, host: np.ndarray, stream: Stream) -> Any:
        assert isinstance(stream, _CudaStream)
        dev = self.upload(host, stream)
        staging = stream.keep.pop()
        stream.synchronize()
        staging.fill(0)   # before the pinned pool hands this memory to anyone else
        return dev

    def wipe(self, dev: Any, stream: Stream) -> None:
        assert isinstance(stream, _CudaStream)
        with self._device, stream.raw:
            dev.fill(0)
        stream.synchronize()

    def empty(self, shape: tuple[int, ...], stream: Stream) -> Any:
        assert isinstance(stream, _CudaStream)
        with self._device, stream.raw:
            return self._cp.empty(shape, dtype=np.uint32)

    def download(self, dev: Any, stream: Stream) -> np.ndarray:
        assert isinstance(stream, _CudaStream)
        pinned = self._cpx.empty_pinned(dev.shape, dtype=np.uint32)
        with self._device:
            dev.get(stream=stream.raw, out=pinned)
        stream.synchronize()
        return pinned

    def launch(self, kernel: str, width: int, instances: int, args: Sequence[Any], stream: Stream) -> None:
        spec = check_args(kernel, width, args)
        assert isinstance(stream, _CudaStream)
        if instances < 1:
            return
        converted = tuple(v if kind in ("in", "out") else _SCALARS[kind](v) for (_, kind), v in zip(spec, args))
        blocks = min(-(-instances // THREADS_PER_BLOCK), self.multiprocessors * 64)
        with self._device, stream.raw:
            fn = cuda.kernel(kernel_source(), nvrtc_options(kernel, width), symbol(kernel, width))
            fn((blocks,), (THREADS_PER_BLOCK,), converted)
