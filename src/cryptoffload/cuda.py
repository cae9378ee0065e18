"""Is a CUDA GPU usable here, what is it, and the one cache of CUDA modules compiled for it.

Why one module, at the bottom of the layers: the Paillier kernels (``crypto/_native``), the CKKS
backend (``crypto/ckks/gpu``), the engine table's probe, the studies and
:func:`~cryptoffload.machine.machine_info` all ask the same questions, and must get the same
answers. CuPy is an optional dependency (``cryptoffload[gpu]``), imported here, lazily, and
nowhere else by name.

* :func:`cuda_reason` -- None when CuPy imports and sees a CUDA device, else one line saying
  why not (the import is tried on every call, so a test can hide CuPy; the device count is
  asked once per process).
* :func:`cupy` -- the CuPy module, or :class:`~cryptoffload.errors.BackendUnavailable` with
  that reason.
* :func:`kernel` -- a kernel of a CUDA source compiled by NVRTC (``cupy.RawModule``): each
  (source, options) is compiled once per process, under a lock of its own, so threads asking
  at once wait for one compilation instead of starting several (CuPy also caches the binary
  on disk, across processes). Modules are found by the source string itself: Python keeps a
  string's hash, so a lookup costs no pass over the source (a SHA-256 of it on every launch
  cost 7.9 us here); callers that launch often keep the returned kernel anyway.
* :func:`build_reason` -- :func:`cuda_reason`, then "can this source be compiled and loaded
  here": what the GPU back ends' availability probes call, with their smallest kernel, so
  ``auto`` never picks a GPU whose driver cannot run what NVRTC builds (a driver older than
  the toolkit, a missing ``libnvrtc``). Cached per (source, options, kernel).
* :func:`device_info` -- the GPU's name, memory and compute capability, or None.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from types import ModuleType
from typing import Protocol, Sequence

from cryptoffload.errors import BackendUnavailable

INSTALL_HINT = "install cupy-cuda13x (pip install 'cryptoffload[gpu]') on a machine with a CUDA GPU"


def _one_line(exc: BaseException, limit: int = 300) -> str:
    text = " ".join(str(exc).split())
    if len(text) > limit:   # an NVRTC log can be pages long
        text = text[:limit] + " ..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class RawKernel(Protocol):
    """A compiled kernel (``cupy.RawKernel``): ``kernel(grid, block, args, shared_mem=...)``."""

    def __call__(self, grid: tuple[int, ...], block: tuple[int, ...], args: tuple[object, ...], *,
                 shared_mem: int = 0) -> None: ...


class _RawModule(Protocol):
    """A compiled source (``cupy.RawModule``): its kernels by name."""

    def get_function(self, name: str) -> RawKernel: ...


def _import_cupy() -> tuple[ModuleType | None, str | None]:
    """(the CuPy module, None), or (None, why it is not importable: one line)."""
    try:
        import cupy  # noqa: PLC0415 -- optional, imported here only
    except Exception as exc:  # ImportError, or a CUDA library that fails to load
        return None, f"CuPy is not importable ({_one_line(exc)}); {INSTALL_HINT}"
    return cupy, None


@lru_cache(maxsize=1)
def _device_reason() -> str | None:
    cp, why = _import_cupy()
    if cp is None:
        return why
    try:
        count = int(cp.cuda.runtime.getDeviceCount())
    except Exception as exc:  # noqa: BLE001 - CuPy raises its own types without a driver or device
        return f"CuPy sees no CUDA device ({_one_line(exc)})"
    return None if count > 0 else "CuPy sees no CUDA device"


def cuda_reason() -> str | None:
    """None when CuPy imports and sees at least one CUDA device, else why not (one line)."""
    _, why = _import_cupy()
    return why if why is not None else _device_reason()


def cupy() -> ModuleType:
    """The CuPy module; :class:`BackendUnavailable` with :func:`cuda_reason` without one."""
    why = cuda_reason()
    cp, not_importable = _import_cupy()
    if why is not None or cp is None:
        raise BackendUnavailable(why or str(not_importable))
    return cp


def cupyx() -> ModuleType:
    """CuPy's companion package (pinned host memory); as :func:`cupy`."""
    cupy()
    import cupyx as cpx  # noqa: PLC0415 -- ships with CuPy

    return cpx


def device_count() -> int:
    """CUDA devices this process sees (0 without CuPy or a device)."""
    return 0 if cuda_reason() is not None else int(cupy().cuda.runtime.getDeviceCount())


def device_info(index: int = 0) -> dict[str, str | int] | None:
    """Plain facts about CUDA device ``index`` (name, memory, compute capability, SMs, CuPy's
    version), or None where no usable GPU is (what a result's ``machine.gpu`` holds)."""
    if cuda_reason() is not None or not 0 <= index < device_count():
        return None
    cp = cupy()
    props = cp.cuda.runtime.getDeviceProperties(index)
    name = props["name"]
    return {"name": name.decode() if isinstance(name, bytes) else str(name), "index": index,
            "memory_bytes": int(props["totalGlobalMem"]), "compute_capability": f"{props['major']}.{props['minor']}",
            "multiprocessors": int(props["multiProcessorCount"]), "devices": device_count(),
            "cupy": str(cp.__version__)}


class _Module:
    """One (source, options) and its kernels, filled under ``lock``."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.raw: _RawModule | None = None
        self.kernels: dict[str, RawKernel] = {}


_MODULES: dict[tuple[str, tuple[str, ...]], _Module] = {}
_MODULES_LOCK = threading.Lock()
_BUILDS: dict[tuple[str, tuple[str, ...], str], str | None] = {}


def _key(source: str, options: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    return source, tuple(options)


def kernel(source: str, options: Sequence[str], name: str) -> RawKernel:
    """The kernel ``name`` of ``source`` compiled with ``options`` (a ``cupy.RawKernel``);
    NVRTC runs once per (source, options) in this process (module docstring)."""
    key = _key(source, options)
    mod = _MODULES.get(key)
    if mod is None:
        with _MODULES_LOCK:
            mod = _MODULES.setdefault(key, _Module())
    fn = mod.kernels.get(name)
    if fn is None:
        with mod.lock:
            fn = mod.kernels.get(name)
            if fn is None:
                raw = mod.raw
                if raw is None:
                    raw = mod.raw = cupy().RawModule(code=source, options=tuple(options))
                fn = raw.get_function(name)   # compiles (first kernel only) and loads
                mod.kernels[name] = fn
    return fn


def build_reason(source: str, options: Sequence[str], name: str, what: str) -> str | None:
    """None when a GPU is usable and kernel ``name`` of ``source`` compiles and loads on it,
    else why not (one line naming ``what`` was being built). Cached per arguments."""
    why = cuda_reason()
    if why is not None:
        return why
    key = (*_key(source, options), name)
    if key not in _BUILDS:
        try:
            kernel(source, options, name)
            result = None
        except Exception as exc:  # noqa: BLE001 - NVRTC and driver errors have CuPy's own types
            result = f"CuPy sees a CUDA device but {what} cannot be compiled and loaded on it ({_one_line(exc)})"
        _BUILDS[key] = result
    return _BUILDS[key]


__all__ = ["INSTALL_HINT", "RawKernel", "build_reason", "cuda_reason", "cupy", "cupyx", "device_count", "device_info",
           "kernel"]
