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

import multiprocessing as mp
import os
import time
from concurrent.futures import ProcessPoolExecutor
from types import ModuleType
from typing import TYPE_CHECKING, Callable, Sequence, TypeAlias, TypedDict

import numpy as np

from cryptoffload import cuda
from cryptoffload.crypto._native.gpu_interface import (
    THREADS_PER_BLOCK, KernelArg, Runtime, Stream, check_args, kernel_source, nvrtc_options)
from cryptoffload.crypto._native.gpu_kernels import symbol
from cryptoffload.errors import BackendUnavailable, ConfigError

if TYPE_CHECKING:
    import cupy   # the optional GPU extra: its arrays are what this runtime hands out

_SCALARS = {"u64": np.uint64, "i32": np.int32, "u32": np.uint32}
#: The probe's kernel: the smallest module there is (one Montgomery product, 16 limbs).
PROBE = ("mulmod", 16)
#: Relative NVRTC cost of each kernel at one width (CPU seconds at 64 limbs, the table in
#: docs/crypto/paillier-gpu.md); a module's cost grows about with the width squared.
COMPILE_COST = {"mulmod": 1.3, "powm": 3.3, "fb_table": 3.6, "fb_encrypt": 1.6, "col_reduce": 1.0, "crt_decrypt": 9.4}


def cuda_reason() -> str | None:
    """None when a CUDA GPU is usable here *and* NVRTC builds and loads the smallest Paillier
    kernel on it, else a one-line reason (cached: the answer does not change in a process)."""
    kernel, width = PROBE
    return cuda.build_reason(kernel_source(), nvrtc_options(kernel, width), symbol(kernel, width),
                             "the Paillier kernels (paillier_gpu.cu)")


def compile_kernel(kernel: str, width: int) -> float:
    """Build and load ``kernel`` at ``width`` limbs in this process (NVRTC, or CuPy's on-disk
    cache where an earlier process built it); the seconds it took."""
    t = time.perf_counter()
    cuda.kernel(kernel_source(), nvrtc_options(kernel, width), symbol(kernel, width))
    return time.perf_counter() - t


#: A build job: (name, function, its arguments); a function's returned string is its error.
_Job: TypeAlias = tuple[str, Callable[..., object], tuple[object, ...]]


class Precompiled(TypedDict):
    """What :func:`precompile` built: seconds per module, one line per failure."""

    modules: dict[str, float]
    errors: dict[str, str]
    workers: int
    wall_s: float


def _run_job(job: _Job) -> tuple[str, float, str | None]:
    name, fn, args = job
    t = time.perf_counter()
    try:
        got = fn(*args)
    except Exception as exc:  # noqa: BLE001 - NVRTC and driver errors have CuPy's own types
        return name, time.perf_counter() - t, f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
    return name, time.perf_counter() - t, got if isinstance(got, str) else None


def compile_order(pairs: Sequence[tuple[str, int]]) -> list[tuple[str, int]]:
    """``pairs`` without repeats, the costliest compilation first (so the longest one starts at
    once and the short ones fill the other workers)."""
    return sorted(set(pairs), key=lambda p: (-COMPILE_COST.get(p[0], 1.0) * p[1] ** 2, p))


def precompile(pairs: Sequence[tuple[str, int]], also: Sequence[Callable[[], object]] = (),
               workers: int | None = None) -> Precompiled:
    """Build the modules ``pairs`` ((kernel, width) of ``paillier_gpu.cu``), and run the
    callables ``also`` (other sources' builds, e.g. the CKKS kernels' probe, whose returned
    string, if any, is that job's error), concurrently in
    worker processes, so their binaries are in CuPy's disk cache before anything is timed: a
    process that launches them later loads them instead of compiling. Only what is named is
    built (each (kernel, width) is its own NVRTC compilation, up to a minute of CPU).

    Returns ``{"modules": {name: seconds}, "errors": {name: one line}, "workers": n,
    "wall_s": s}``; a module that failed here fails again, with its error, where it is used.
    ``workers`` defaults to the cores less one; 1 builds in this process."""
    reason = cuda_reason()
    if reason is not None:
        raise BackendUnavailable(reason)
    jobs: list[_Job] = [
        (f"{k}@{w}", compile_kernel, (k, w)) for k, w in compile_order(pairs)]
    jobs += [(f"{getattr(fn, '__module__', '')}.{getattr(fn, '__name__', 'build')}", fn, ()) for fn in also]
    n = max(1, min(len(jobs), workers if workers is not None else (os.cpu_count() or 2) - 1))
    t = time.perf_counter()
    if n == 1:
        done = [_run_job(j) for j in jobs]
    else:
        with ProcessPoolExecutor(n, mp_context=mp.get_context("spawn")) as pool:
            done = list(pool.map(_run_job, jobs))
    return {"modules": {name: sec for name, sec, err in done if err is None},
            "errors": {name: err for name, _, err in done if err is not None},
            "workers": n, "wall_s": time.perf_counter() - t}


class _CudaStream(Stream):
    def __init__(self, cp: ModuleType) -> None:
        self.raw = cp.cuda.Stream(non_blocking=True)
        self.keep: list[np.ndarray] = []   # pinned staging buffers of copies still in flight

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

    def upload(self, host: np.ndarray, stream: Stream) -> cupy.ndarray:
        assert isinstance(stream, _CudaStream)
        host = np.asarray(host, dtype=np.uint32)
        pinned = self._cpx.empty_pinned(host.shape, dtype=np.uint32)
        np.copyto(pinned, host)
        with self._device, stream.raw:   # allocated on the stream: the pool reuses it in order
            dev = self._cp.empty(host.shape, dtype=np.uint32)
            dev.set(pinned, stream=stream.raw)
        stream.keep.append(pinned)
        return dev

    def upload_secret(self, host: np.ndarray, stream: Stream) -> cupy.ndarray:
        assert isinstance(stream, _CudaStream)
        dev = self.upload(host, stream)
        staging = stream.keep.pop()
        stream.synchronize()
        staging.fill(0)   # before the pinned pool hands this memory to anyone else
        return dev

    def wipe(self, dev: cupy.ndarray, stream: Stream) -> None:
        assert isinstance(stream, _CudaStream)
        with self._device, stream.raw:
            dev.fill(0)
        stream.synchronize()

    def empty(self, shape: tuple[int, ...], stream: Stream) -> cupy.ndarray:
        assert isinstance(stream, _CudaStream)
        with self._device, stream.raw:
            return self._cp.empty(shape, dtype=np.uint32)

    def download(self, dev: cupy.ndarray, stream: Stream) -> np.ndarray:
        assert isinstance(stream, _CudaStream)
        pinned = self._cpx.empty_pinned(dev.shape, dtype=np.uint32)
        with self._device:
            dev.get(stream=stream.raw, out=pinned)
        stream.synchronize()
        return pinned

    def launch(self, kernel: str, width: int, instances: int, args: Sequence[KernelArg], stream: Stream) -> None:
        spec = check_args(kernel, width, args)
        assert isinstance(stream, _CudaStream)
        if instances < 1:
            return
        converted = tuple(v if kind in ("in", "out") else _SCALARS[kind](v) for (_, kind), v in zip(spec, args))
        blocks = min(-(-instances // THREADS_PER_BLOCK), self.multiprocessors * 64)
        with self._device, stream.raw:
            fn = cuda.kernel(kernel_source(), nvrtc_options(kernel, width), symbol(kernel, width))
            fn((blocks,), (THREADS_PER_BLOCK,), converted)
