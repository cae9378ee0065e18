"""What the Paillier GPU algorithms run on: the :class:`Runtime` interface and what both of its
implementations share (the kernel source as NVRTC sees it, argument checks, widths).

Why an interface: the algorithms in :mod:`cryptoffload.crypto.paillier_gpu` are written once
against :class:`Runtime` (upload, launch, download, on a stream), and run either on a CUDA GPU
(:mod:`.gpu_cuda`) or on the CPU twin (:mod:`.gpu_twin`: the same ``paillier_gpu.cu`` compiled by
g++ through cffi), so every algorithm, not only every kernel, is tested on machines without a
GPU. :mod:`.gpu_runtime` picks one by name.

Arrays are 2-D ``uint32`` (limbs x count, limb-major as the kernels read them) or 1-D
(contiguous shared data). Every launch's arguments pass :func:`check_args` on both runtimes:
a wrong dtype or a strided view would make a kernel read the wrong words without any error.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from functools import lru_cache
from pathlib import Path
from typing import Sequence, TypeAlias

import numpy as np
import numpy.typing as npt

from cryptoffload.crypto._native.gpu_kernels import KERNELS, WIDTHS
from cryptoffload.errors import ConfigError

HERE = Path(__file__).resolve().parent
#: Threads per block of every launch (at 255 registers a thread, an SM holds two such blocks).
THREADS_PER_BLOCK = 128
#: Limbs on a runtime's device: ``uint32`` words, limb-major. A NumPy array on the twin; on a GPU
#: a ``cupy.ndarray``, which mirrors NumPy's interface but ships no types (CuPy stays an optional
#: import), so the algorithms written against :class:`Runtime` are checked against NumPy's.
DeviceWords: TypeAlias = npt.NDArray[np.uint32]
#: A kernel argument: device words (``in``/``out``) or an integer scalar.
KernelArg: TypeAlias = "DeviceWords | int | np.integer"


@lru_cache(maxsize=1)
def kernel_source() -> str:
    """``paillier_gpu.cu`` with the portability header inlined: what NVRTC compiles (it has no
    include path of ours)."""
    src = (HERE / "paillier_gpu.cu").read_text()
    header = (HERE / "gpu_portable.h").read_text()
    return src.replace('#include "gpu_portable.h"', header, 1)


def nvrtc_options(kernel: str, width: int) -> tuple[str, ...]:
    """NVRTC options building ``kernel`` alone at ``width`` limbs (one kernel per module: see
    the entry points of ``paillier_gpu.cu``)."""
    if kernel not in KERNELS or width not in WIDTHS:
        raise ConfigError(f"no GPU kernel {kernel!r} at a width of {width} limbs")
    return ("-std=c++17", f"-DCOPG_ONLY_WIDTH={width}", f"-DCOPG_ONLY_KERNEL=COPG_ENTRY_{kernel}")


def width_for_bits(bits: int) -> int:
    """The smallest kernel width (32-bit limbs) holding a ``bits``-bit number."""
    need = -(-bits // 32)
    for w in WIDTHS:
        if w >= need:
            return w
    raise ConfigError(f"a {bits}-bit modulus exceeds the GPU kernels' largest width "
                      f"({32 * WIDTHS[-1]} bits, n = {16 * WIDTHS[-1]}-bit keys)")


def key_kernels(bits: int, ops: Sequence[str] = ("encrypt", "decrypt", "aggregate")) -> list[tuple[str, int]]:
    """The (kernel, width) modules a ``bits``-bit Paillier key launches for ``ops``: DJN
    encryption builds its table and encrypts at n^2's width, aggregation reduces columns there,
    CRT decryption works at p^2's width (n's, for balanced factors). What a run compiles ahead
    of timing, and nothing more (each module is an NVRTC compilation: seconds to a minute)."""
    wide, half = width_for_bits(2 * bits), width_for_bits(bits)
    per_op = {"encrypt": [("fb_table", wide), ("fb_encrypt", wide)], "aggregate": [("col_reduce", wide)],
              "decrypt": [("crt_decrypt", half)]}
    unknown = [op for op in ops if op not in per_op]
    if unknown:
        raise ConfigError(f"unknown Paillier GPU operation(s) {unknown}; choose from {', '.join(per_op)}")
    return [pair for op in ops for pair in per_op[op]]


def check_args(kernel: str, width: int, args: Sequence[KernelArg]) -> tuple[tuple[str, str], ...]:
    """The kernel's argument table, after checking ``args`` against it: the width exists, the
    count matches, arrays are C-contiguous ``uint32`` (NumPy or CuPy alike), outputs writable,
    scalars integers. Raises ``TypeError`` (a bug in the caller) or :class:`ConfigError`."""
    spec = KERNELS[kernel]
    if width not in WIDTHS:
        raise ConfigError(f"no GPU kernels for a width of {width} limbs (widths: {WIDTHS})")
    if len(args) != len(spec):
        raise TypeError(f"{kernel} takes {len(spec)} arguments, got {len(args)}")
    for (name, kind), value in zip(spec, args):
        if kind in ("in", "out"):
            flags = getattr(value, "flags", None)
            if getattr(value, "dtype", None) != np.uint32 or flags is None or not flags.c_contiguous:
                raise TypeError(f"{kernel}: argument {name} must be a C-contiguous uint32 array")
            if kind == "out" and not getattr(flags, "writeable", True):
                raise TypeError(f"{kernel}: argument {name} must be writable")
        elif isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{kernel}: argument {name} must be an integer, got {type(value).__name__}")
    return spec


class Stream(ABC):
    """An in-order queue of uploads, launches and downloads on one runtime."""

    @abstractmethod
    def synchronize(self) -> None: ...


class Runtime(ABC):
    """Device memory, kernel launches and copies (see the module docstring)."""

    #: "cuda" or "cpu-twin"
    device: str = ""

    @abstractmethod
    def describe(self) -> str:
        """One line naming the device (the GPU's name, or the twin)."""

    @abstractmethod
    def stream(self) -> Stream: ...

    @abstractmethod
    def upload(self, host: np.ndarray, stream: Stream) -> DeviceWords:
        """A device copy of ``host`` (``uint32``); asynchronous on a GPU stream."""

    @abstractmethod
    def upload_secret(self, host: np.ndarray, stream: Stream) -> DeviceWords:
        """A device copy of secret words, synchronously: every host-side copy the runtime made
        on the way (a pinned staging buffer) is zeroed before it is released. The caller
        zeroes ``host`` itself."""

    @abstractmethod
    def wipe(self, dev: DeviceWords, stream: Stream) -> None:
        """Overwrite device array ``dev`` with zeros and wait for it (before its memory goes
        back to a pool that other code allocates from)."""

    @abstractmethod
    def empty(self, shape: tuple[int, ...], stream: Stream) -> DeviceWords: ...

    @abstractmethod
    def download(self, dev: DeviceWords, stream: Stream) -> np.ndarray:
        """``dev`` on the host; waits for ``stream``."""

    @abstractmethod
    def launch(self, kernel: str, width: int, instances: int, args: Sequence[KernelArg], stream: Stream) -> None:
        """Run ``kernel`` at ``width`` over ``instances`` threads' worth of work, with ``args``
        in the order of :data:`~cryptoffload.crypto._native.gpu_kernels.KERNELS` (checked by
        :func:`check_args`)."""

    def info(self) -> dict[str, object]:
        """Plain facts about the device for a result's ``machine`` block."""
        return {"device": self.device, "name": self.describe()}
