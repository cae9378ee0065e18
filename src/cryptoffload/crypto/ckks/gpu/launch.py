"""Where every kernel of the CUDA kernel set is launched: one :class:`Launcher` per backend, with
two executors behind it -- the GPU (``cuda``: ``kernels.cu`` through CuPy) and the CPU twin of the
launch code (``cuda-host``: the same source compiled for the host with ``kernels_host.cpp``).

Why one place: the launch code (:mod:`.arith_cuda`: which kernel, which grid, which arguments)
is then the same on the GPU and on the twin, so what the twin counts -- kernel launches per
HE-CNN image, the figure a GPU's host time is made of -- is what the GPU would launch, and a
recording of one program's launches (:meth:`Launcher.recording`) can be replayed on new inputs
on the twin exactly as a CUDA graph replays them on the GPU (:mod:`.capture`).

Kernel lookup costs a dict access: each executor resolves a kernel name once (the GPU's
through :func:`cryptoffload.cuda.kernel`, which compiles ``kernels.cu`` once per process), so no
launch hashes the source again.

The host library is compiled once per source version into the user's cache directory
(``$XDG_CACHE_HOME/cryptoffload`` or ``~/.cache/cryptoffload``, or ``$CRYPTOFFLOAD_CACHE``),
written under a temporary name and renamed, so concurrent processes (pytest workers) never load a
half-written file.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import threading
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Callable, Protocol, TypeAlias

import numpy as np
import numpy.typing as npt

from cryptoffload import cuda
from cryptoffload.errors import BackendUnavailable

#: -O3 -march=native: the CPU launches' loops (the NTT stages) vectorise (AVX-512 where the CPU
#: has it); integer arithmetic is exact whatever the instructions, and without contracted
#: multiply-adds the few floating-point steps round as the GPU's do. The library is cached per
#: CPU (its flags are part of the cache key), so a cache shared by other machines is safe.
HOST_FLAGS = ("-O3", "-march=native", "-std=c++17", "-shared", "-fPIC", "-ffp-contract=off")
_HOST_LOCK = threading.Lock()


def _package_text(name: str) -> str:
    return resources.files("cryptoffload.crypto.ckks.gpu").joinpath(name).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def source() -> str:
    """The CUDA source (what NVRTC compiles on a GPU and the host compiler compiles here)."""
    return _package_text("kernels.cu")


def nvrtc_options() -> tuple[str, ...]:
    return ("--std=c++17",)


def cache_dir() -> Path:
    """Where compiled host libraries are kept between processes."""
    env = os.environ.get("CRYPTOFFLOAD_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cryptoffload"


def host_compiler() -> str | None:
    return shutil.which("g++") or shutil.which("c++")


def host_reason() -> str | None:
    """None when the CUDA kernels can be built for the host here, else why not (one line)."""
    if host_compiler() is None:
        return "no C++ compiler (g++) on PATH to build the CUDA kernels for the CPU (apt-get install g++)"
    return None


@lru_cache(maxsize=1)
def host_library() -> ctypes.CDLL:
    """``kernels.cu`` + ``kernels_host.cpp`` compiled for this CPU (cached on disk, see the module
    docstring); :class:`BackendUnavailable` without a compiler."""
    why = host_reason()
    if why is not None:
        raise BackendUnavailable(f"the cuda-host kernel set is unavailable: {why}")
    harness = _package_text("kernels_host.cpp")
    digest = hashlib.sha256((source() + harness + " ".join(HOST_FLAGS) + _cpu_signature()).encode()).hexdigest()[:16]
    target = cache_dir() / f"ckks_kernels_host_{digest}.so"
    with _HOST_LOCK:
        if not target.exists():
            _compile_host(harness, target)
    return ctypes.CDLL(str(target))


def _cpu_signature() -> str:
    """What ``-march=native`` compiles for: the CPU's model and flags (Linux), else the platform."""
    try:
        info = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return platform.machine() + platform.processor()
    keep = [line for line in info.splitlines() if line.startswith(("model name", "flags"))]
    return "\n".join(sorted(set(keep)))


def _compile_host(harness: str, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "kernels.cu").write_text(source(), encoding="utf-8")
        (Path(tmp) / "kernels_host.cpp").write_text(harness, encoding="utf-8")
        out = Path(tmp) / "lib.so"
        cmd = [str(host_compiler()), *HOST_FLAGS, f"-I{tmp}", str(Path(tmp) / "kernels_host.cpp"), "-o", str(out)]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:   # a bug in kernels.cu, not a user error: keep the compiler's words
            raise RuntimeError(f"building the CUDA kernels for the host failed:\n{run.stderr[-4000:]}")
        staged = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        shutil.copyfile(out, staged)
        os.replace(staged, target)


#: What a kernel takes: arrays (passed by pointer) and NumPy scalars of a fixed width (by value;
#: a ``uint64`` is a pointer passed by value).
KernelArg: TypeAlias = "npt.NDArray[np.generic] | np.int32 | np.int64 | np.uint64"
#: A resolved kernel: ``fn(grid, block, args, shared_mem)``.
KernelFn: TypeAlias = Callable[[tuple[int, ...], tuple[int, ...], tuple[KernelArg, ...], int], None]


class Executor(Protocol):
    """Where launches run: resolves kernels by name, gives device pointers, copies strided arrays."""

    def kernel(self, name: str) -> KernelFn: ...

    def pointer(self, a: npt.NDArray[np.generic]) -> np.uint64: ...

    def copy(self, out: npt.NDArray[np.generic], a: npt.NDArray[np.generic]) -> None: ...


# -- executors: name -> a callable(grid, block, args, shared_mem) ---------------------------------

class CupyExecutor:
    """Kernels of ``kernels.cu`` compiled by NVRTC on the GPU, looked up once per name."""

    xp_name = "cupy"

    def __init__(self) -> None:
        self._fns: dict[str, KernelFn] = {}

    def kernel(self, name: str) -> KernelFn:
        fn = self._fns.get(name)
        if fn is None:
            raw = cuda.kernel(source(), nvrtc_options(), name)

            def fn(grid: tuple[int, ...], block: tuple[int, ...], args: tuple[KernelArg, ...], shared_mem: int = 0,
                   _raw: cuda.RawKernel = raw) -> None:
                _raw(grid, block, args, shared_mem=shared_mem)

            self._fns[name] = fn
        return fn

    @staticmethod
    def pointer(a: npt.NDArray[np.generic]) -> np.uint64:
        return np.uint64(a.data.ptr)   # type: ignore[attr-defined]  # a cupy.ndarray's device memory

    @staticmethod
    def copy(out: npt.NDArray[np.generic], a: npt.NDArray[np.generic]) -> None:
        out[...] = a


def _c_arg(arg: KernelArg) -> ctypes.c_void_p | ctypes.c_int | ctypes.c_longlong:
    if isinstance(arg, np.ndarray):
        if not arg.flags.c_contiguous:   # a launch-code bug: the GPU would read the wrong words
            raise AssertionError("a kernel argument is not C-contiguous")
        return ctypes.c_void_p(arg.ctypes.data)
    if isinstance(arg, np.int32):
        return ctypes.c_int(int(arg))
    if isinstance(arg, np.int64):
        return ctypes.c_longlong(int(arg))
    if isinstance(arg, np.uint64):     # a pointer passed by value
        return ctypes.c_void_p(int(arg))
    raise AssertionError(f"kernel argument of type {type(arg).__name__}: pass NumPy scalars of a fixed width")


class HostExecutor:
    """The same kernels compiled for the CPU: each launch runs every block and thread the GPU
    would run, calling the kernels' own bodies (``kernels_host.cpp``)."""

    xp_name = "numpy"

    def __init__(self, lib: ctypes.CDLL | None = None) -> None:
        self.lib = lib if lib is not None else host_library()
        self._fns: dict[str, KernelFn] = {}

    def kernel(self, name: str) -> KernelFn:
        fn = self._fns.get(name)
        if fn is None:
            c_fn = getattr(self.lib, f"launch_{name}")

            def fn(grid: tuple[int, ...], block: tuple[int, ...], args: tuple[KernelArg, ...], shared_mem: int = 0,
                   _c: Callable[..., object] = c_fn) -> None:
                gy = grid[1] if len(grid) > 1 else 1
                _c(ctypes.c_int(grid[0]), ctypes.c_int(gy), ctypes.c_int(block[0]), *[_c_arg(a) for a in args])

            self._fns[name] = fn
        return fn

    @staticmethod
    def pointer(a: npt.NDArray[np.generic]) -> np.uint64:
        if not a.flags.c_contiguous:
            raise AssertionError("a pointer argument is not C-contiguous")
        return np.uint64(a.ctypes.data)

    @staticmethod
    def copy(out: npt.NDArray[np.generic], a: npt.NDArray[np.generic]) -> None:
        np.copyto(out, a)


class Recording:
    """The launches of one program as they were issued: each kernel with its arguments, and the
    arrays they reach through pointers passed by value (kept alive with the recording, so a
    replay never touches memory that was freed and handed out again)."""

    def __init__(self) -> None:
        self.launches: list[tuple[Callable[..., None], tuple[object, ...]]] = []
        self.keep: list[npt.NDArray[np.generic]] = []

    def replay(self) -> None:
        for fn, args in self.launches:
            fn(*args)

    def __len__(self) -> int:
        return len(self.launches)


class Launcher:
    """Counts, and optionally records, every launch of one kernel set (module docstring)."""

    def __init__(self, executor: Executor) -> None:
        self.executor = executor
        self.count = 0
        self._recording: Recording | None = None

    def __call__(self, name: str, grid: tuple[int, ...], block: tuple[int, ...], args: tuple[KernelArg, ...],
                 shared_mem: int = 0, keep: tuple[npt.NDArray[np.generic], ...] = ()) -> None:
        """Launch kernel ``name``; ``keep``: the arrays its pointer arguments point into."""
        fn = self.executor.kernel(name)
        self._issue(fn, (grid, block, args, shared_mem), keep)

    def copy(self, out: npt.NDArray[np.generic], a: npt.NDArray[np.generic]) -> None:
        """``out[...] = a`` (a strided copy: one kernel on a GPU), counted and recorded like a launch."""
        self._issue(self.executor.copy, (out, a), ())

    def _issue(self, fn: Callable[..., None], args: tuple[object, ...],
               keep: tuple[npt.NDArray[np.generic], ...]) -> None:
        fn(*args)
        self.count += 1
        if self._recording is not None:
            self._recording.launches.append((fn, args))
            self._recording.keep.extend(keep)

    def pointer(self, a: npt.NDArray[np.generic]) -> np.uint64:
        return self.executor.pointer(a)

    @property
    def recording(self) -> bool:
        return self._recording is not None

    def start_recording(self) -> None:
        self._recording = Recording()

    def stop_recording(self) -> Recording:
        out, self._recording = self._recording or Recording(), None
        return out


__all__ = ["CupyExecutor", "Executor", "HostExecutor", "KernelArg", "KernelFn", "Launcher", "Recording", "cache_dir",
           "host_library", "host_reason", "nvrtc_options", "source"]
