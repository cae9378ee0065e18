"""The contract between :class:`~.arith.Arith` and its kernel sets: the array types, the device
tables every kernel reads, and the protocols the kernel modules implement.

Why a contract: :class:`~.arith.Arith` chooses a kernel module at run time (:data:`.arith.KERNEL_SETS`),
and four kernel sets -- ``ref`` (:mod:`.arith_ref`), ``numba`` (:mod:`.arith_numba`), ``cuda`` and
``cuda-host`` (both :mod:`.arith_cuda`) -- must agree on every signature. The protocols below are
that agreement written down: the registry's loaders return the modules as these protocols, so mypy
checks each module against them (a kernel renamed, a parameter dropped or mistyped fails
``make typecheck``), and :class:`~.arith.Arith` calls nothing the protocol does not name.

Arrays are typed as NumPy's: on the CPU twin they are ``numpy.ndarray``; on the GPU the same code
holds ``cupy.ndarray``, which mirrors NumPy's array interface but ships no types (CuPy stays an
optional import: nothing here imports it). So mypy checks every kernel against NumPy's stubs, and
the GPU path shares the checked code.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Protocol, Sequence, TypeAlias

import numpy as np
import numpy.typing as npt

from cryptoffload.crypto.ckks.errors import CkksError

if TYPE_CHECKING:
    from cryptoffload.crypto.ckks.gpu.convplan import ConvPlan
    from cryptoffload.crypto.ckks.gpu.launch import Launcher

#: Residues: ``uint64`` words, canonical modulo their row's prime (``(..., R, N)``), on the
#: ring's device -- and host tables of 64-bit words (constants, Shoup quotients).
Array: TypeAlias = npt.NDArray[np.uint64]
#: Row indices, item lists and row tables (``int64``), on the device or the host.
Index: TypeAlias = npt.NDArray[np.int64]
#: Floating-point tables (``1/q`` per prime, ``float64``).
Floats: TypeAlias = npt.NDArray[np.float64]
#: Evaluation keys as the key store holds them: 32-bit words where the residues fit, else 64-bit.
KeyWords: TypeAlias = npt.NDArray[np.uint32 | np.uint64]


@dataclass(frozen=True)
class DeviceTables:
    """One ring's tables on its device, what every kernel reads: the array module, the degree,
    the primes (``q``, ``1/q``), the NTT twiddles (``psi``/``ipsi``, indexed ``[prime row, i]``) with
    their Shoup quotients, ``N^-1`` per prime, and the launcher of the CUDA kernel sets (None for
    the kernel sets that do not launch)."""

    xp: ModuleType
    n: int
    q: Array
    qinv: Floats
    psi: Array
    psi_sh: Array
    ipsi: Array
    ipsi_sh: Array
    ninv: Array
    ninv_sh: Array
    launch: Launcher | None = None

    def launcher(self) -> Launcher:
        """The launcher (a CUDA kernel set runs only on tables built with one)."""
        if self.launch is None:
            raise CkksError("a CUDA kernel ran on device tables without a launcher: build its Arith with "
                            "kernels='cuda' or 'cuda-host'")
        return self.launch


class KernelSet(Protocol):
    """The primitive ops every kernel set provides, bit for bit alike (tested against ``ref``).

    ``rows`` names each operand row's prime (an index into the tables); operands are canonical
    residues ``(R, N)``; every op returns a new array except where it says otherwise."""

    def add(self, t: DeviceTables, a: Array, b: Array, rows: Index) -> Array: ...

    def sub(self, t: DeviceTables, a: Array, b: Array, rows: Index) -> Array: ...

    def neg(self, t: DeviceTables, a: Array, rows: Index) -> Array: ...

    def mul(self, t: DeviceTables, a: Array, b: Array, rows: Index) -> Array: ...

    def mul_const(self, t: DeviceTables, a: Array, c: Array, c_sh: Array, rows: Index) -> Array: ...

    def base_convert(self, t: DeviceTables, x: Array, src: Index, dst: Index, yinv: Array, yinv_sh: Array,
                     mat: Array, exact: Array | None = None) -> Array: ...

    def permute(self, t: DeviceTables, a: Array, perm: Index) -> Array: ...


class LoopKernels(KernelSet, Protocol):
    """A kernel set without fused kernels (``ref``, ``numba``): the batched ops are composed from
    these (:mod:`.arith_compose`)."""

    def ntt(self, t: DeviceTables, a: Array, rows: Index) -> Array: ...

    def intt(self, t: DeviceTables, a: Array, rows: Index) -> Array: ...

    def ks_inner(self, t: DeviceTables, digits: Array, key: KeyWords, key_rows: Index, rows: Index) -> Array: ...


class FusedKernels(KernelSet, Protocol):
    """A kernel set with one launch per batched op (``cuda``, ``cuda-host``): transforms address
    rows through a row table ((offset, prime) pairs), conversions through a plan's device tables."""

    def transform(self, t: DeviceTables, buf: Array, tab: Index, count: int, inverse: bool,
                  src: Array | None = None) -> Array: ...

    def convert(self, t: DeviceTables, x: Array, plan: ConvPlan, dev: Sequence[npt.NDArray[np.generic]],
                out: Array) -> Array: ...

    def ks_items(self, t: DeviceTables, digits: Array, keys: KeyWords, perms: Index, items: Index, count: int,
                 key_rows: Index, rows: Index) -> Array: ...

    def combine(self, t: DeviceTables, a: Array, conv: Array, base: Array | None, perms: Index, items: Index,
                rows: Index, c: Array, c_sh: Array) -> Array: ...

    def dot(self, t: DeviceTables, cts: Sequence[Array], pts: Sequence[KeyWords], rows: Index,
            acc: Array | None = None) -> Array: ...

    def tensor(self, t: DeviceTables, a: Array, b: Array, rows: Index) -> Array: ...

    def lincomb(self, t: DeviceTables, x: Array, c: Array, c_sh: Array, rows: Index) -> Array: ...

    def gather(self, t: DeviceTables, arrays: Sequence[Array]) -> Array: ...


__all__ = ["Array", "DeviceTables", "Floats", "FusedKernels", "Index", "KernelSet", "KeyWords", "LoopKernels"]
