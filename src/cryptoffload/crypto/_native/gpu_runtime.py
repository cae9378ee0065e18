"""Where the Paillier GPU kernels run: a CUDA device through CuPy, or the CPU twin.

Why two runtimes behind one interface: the algorithms in :mod:`cryptoffload.crypto.paillier_gpu`
are written once against :class:`Runtime` (upload, launch, download, on a stream), and run
either on a GPU or on the twin -- the same ``paillier_gpu.cu`` compiled by g++ through cffi,
where a "stream" is an in-order queue that runs each operation at once in the calling thread.
So every algorithm, not only every kernel, is tested on machines without a GPU.

* :class:`CupyRuntime` compiles the kernels at run time with NVRTC (``cupy.RawModule``), one
  module per limb width, on first use (nothing is built at install; CuPy caches the binary on
  disk). Each :class:`Stream` is a non-blocking CUDA stream with its own pinned host staging
  buffers: an upload copies the caller's array into pinned memory and starts an asynchronous
  copy, so a dispatcher thread can encode the next batch while the GPU copies and computes
  this one; the staging buffers are kept alive until that stream is next synchronised.
* :class:`TwinRuntime` calls the cffi module ``_paillier_gpu`` (GIL released during each call).

CuPy is optional and imported lazily, here only: without it, or without a device, asking for
the CUDA runtime raises :class:`~cryptoffload.errors.BackendUnavailable` with a one-line
reason (:func:`cuda_reason`).
"""

from __future__ import annotations

import importlib.util
import threading
from abc import ABC, abstractmethod
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from cryptoffload.crypto._native.gpu_kernels import KERNELS, WIDTHS, symbol
from cryptoffload.errors import BackendUnavailable, ConfigError

HERE = Path(__file__).resolve().parent
DEVICES = ("cuda", "cpu-twin")
THREADS_PER_BLOCK = 128

try:  # built by `pip install` (setup.py's cffi_modules); absent in a never-built checkout
    from cryptoffload.crypto._native import _paillier_gpu  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - exercised only on a broken install
    _paillier_gpu = None


def twin_reason() -> str | None:
    """None when the CPU twin is built, else why not."""
    if _paillier_gpu is None:
        return "the GPU kernels' CPU twin is not built (reinstall with g++ present: pip install -e .)"
    return None


@lru_cache(maxsize=1)
def cuda_reason() -> str | None:
    """None when CuPy imports and sees a CUDA device, else a one-line reason. Cached: the
    answer does not change within a process."""
    if importlib.util.find_spec("cupy") is None:
        return "CuPy is not installed (pip install 'cryptoffload[gpu]' on a machine with a CUDA GPU)"
    try:
        import cupy

        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # noqa: BLE001 - CuPy raises its own types for a missing driver/device
        return f"CuPy sees no CUDA device ({' '.join(str(exc).split()) or type(exc).__name__})"
    if count < 1:
        return "CuPy sees no CUDA device"
    return None


def kernel_source() -> str:
    """``paillier_gpu.cu`` with the portability header inlined: what NVRTC compiles (it has no
    include path of ours)."""
    src = (HERE / "paillier_gpu.cu").read_text()
    header = (HERE / "gpu_portable.h").read_text()
    return src.replace('#include "gpu_portable.h"', header, 1)


def width_for_bits(bits: int) -> int:
    """The smallest kernel width (32-bit limbs) holding a ``bits``-bit number."""
    need = -(-bits // 32)
    for w in WIDTHS:
        if w >= need:
            return w
    raise ConfigError(f"a {bits}-bit modulus exceeds the GPU kernels' largest width "
                      f"({32 * WIDTHS[-1]} bits, n = {16 * WIDTHS[-1]}-bit keys)")


class Stream(ABC):
    """An in-order queue of uploads, launches and downloads on one runtime."""

    @abstractmethod
    def synchronize(self) -> None: ...


class Runtime(ABC):
    """Device memory, kernel launches and copies; arrays are 2-D ``uint32`` (limbs x count,
    limb-major as the kernels read them) or 1-D (contiguous shared data)."""

    #: "cuda" or "cpu-twin"
    device: str = ""

    @abstractmethod
    def describe(self) -> str:
        """One line naming the device (the GPU's name, or the twin)."""

    @abstractmethod
    def stream(self) -> Stream: ...

    @abstractmethod
    def upload(self, host: np.ndarray, stream: Stream) -> Any:
        """A device copy of ``host`` (``uint32``); asynchronous on a GPU stream."""

    @abstractmethod
    def empty(self, shape: tuple[int, ...], stream: Stream) -> Any: ...

    @abstractmethod
    def download(self, dev: Any, stream: Stream) -> np.ndarray:
        """``dev`` on the host; waits for ``stream``."""

    @abstractmethod
    def launch(self, kernel: str, width: int, instances: int, args: Sequence[Any], stream: Stream) -> None:
        """Run ``kernel`` at ``width`` over ``instances`` threads' worth of work, with ``args``
        in the order of :data:`~cryptoffload.crypto._native.gpu_kernels.KERNELS`."""

    def info(self) -> dict[str, object]:
        """Plain facts about the device for a result's ``machine`` block."""
        return {"device": self.device, "name": self.describe()}


def _check_args(kernel: str, width: int, args: Sequence[Any]) -> tuple[tuple[str, str], ...]:
    spec = KERNELS[kernel]
    if width not in WIDTHS:
        raise ConfigError(f"no GPU kernels for a width of {width} limbs (widths: {WIDTHS})")
    if len(args) != len(spec):
        raise TypeError(f"{kernel} takes {len(spec)} arguments, got {len(args)}")
    return spec


# ------------------------------------------------------------------------------------------
# CPU twin


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

    def empty(self, shape: tuple[int, ...], stream: Stream) -> np.ndarray:
        return np.empty(shape, dtype=np.uint32)

    def download(self, dev: np.ndarray, stream: Stream) -> np.ndarray:
        return np.array(dev, copy=True)

    def launch(self, kernel: str, width: int, instances: int, args: Sequence[Any], stream: Stream) -> None:
        spec = _check_args(kernel, width, args)
        ffi = self._ffi
        converted = []
        for (name, kind), value in zip(spec, args):
            if kind in ("in", "out"):
                if not isinstance(value, np.ndarray) or value.dtype != np.uint32 or not value.flags.c_contiguous:
                    raise TypeError(f"{kernel}: argument {name} must be a C-contiguous uint32 array")
                if kind == "out" and not value.flags.writeable:
                    raise TypeError(f"{kernel}: argument {name} must be writable")
                converted.append(ffi.from_buffer("unsigned int[]", value, require_writable=kind == "out"))
            else:
                converted.append(int(value))
        getattr(self._lib, symbol(kernel, width))(*converted)


# ------------------------------------------------------------------------------------------
# CUDA through CuPy


_SCALARS = {"u64": np.uint64, "i32": np.int32, "u32": np.uint32}


class _CudaStream(Stream):
    def __init__(self, cupy: Any) -> None:
        self.raw = cupy.cuda.Stream(non_blocking=True)
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
        import cupy
        import cupyx

        self._cp = cupy
        self._cpx = cupyx
        count = cupy.cuda.runtime.getDeviceCount()
        if not isinstance(index, int) or not 0 <= index < count:
            raise ConfigError(f"GPU index {index!r} out of range: this machine has {count} CUDA device(s)")
        self.index = index
        self._device = cupy.cuda.Device(index)
        props = cupy.cuda.runtime.getDeviceProperties(index)
        name = props["name"]
        self.name = name.decode() if isinstance(name, bytes) else str(name)
        self.multiprocessors = int(props["multiProcessorCount"])
        self.memory_bytes = int(props["totalGlobalMem"])
        self.compute_capability = f"{props['major']}.{props['minor']}"
        self._modules: dict[int, Any] = {}
        self._lock = threading.Lock()

    def describe(self) -> str:
        return f"{self.name} (CUDA device {self.index}, sm_{self.compute_capability.replace('.', '')}, " \
               f"{self.multiprocessors} SMs, {self.memory_bytes / 2**30:.0f} GiB)"

    def info(self) -> dict[str, object]:
        return {"device": self.device, "name": self.name, "index": self.index,
                "compute_capability": self.compute_capability, "multiprocessors": self.multiprocessors,
                "memory_bytes": self.memory_bytes, "cupy": self._cp.__version__}

    def _module(self, width: int) -> Any:
        with self._lock:
            mod = self._modules.get(width)
            if mod is None:
                # compiled by NVRTC on the first get_function (cached by CuPy on disk)
                mod = self._cp.RawModule(code=kernel_source(), options=("-std=c++17", f"-DCOPG_ONLY_WIDTH={width}"))
                self._modules[width] = mod
        return mod

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
        assert isinstance(stream, _CudaStream)
        spec = _check_args(kernel, width, args)
        if instances < 1:
            return
        converted = tuple(v if kind in ("in", "out") else _SCALARS[kind](v) for (_, kind), v in zip(spec, args))
        blocks = min(-(-instances // THREADS_PER_BLOCK), self.multiprocessors * 64)
        with self._device, stream.raw:
            fn = self._module(width).get_function(symbol(kernel, width))
            fn((blocks,), (THREADS_PER_BLOCK,), converted)


# ------------------------------------------------------------------------------------------


_RUNTIMES: dict[tuple[str, int], Runtime] = {}
_RUNTIMES_LOCK = threading.Lock()


def get_runtime(device: str = "cuda", index: int = 0) -> Runtime:
    """The (shared) runtime for ``device`` ("cuda" or "cpu-twin"); raises
    :class:`BackendUnavailable` with the reason when it cannot run here."""
    if device not in DEVICES:
        raise ConfigError(f"unknown GPU device {device!r}; choose one of {', '.join(DEVICES)}")
    key = (device, index if device == "cuda" else 0)
    with _RUNTIMES_LOCK:
        rt = _RUNTIMES.get(key)
        if rt is None:
            rt = CupyRuntime(index) if device == "cuda" else TwinRuntime()
            _RUNTIMES[key] = rt
    return rt
