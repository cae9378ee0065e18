"""One entry point per hot loop, dispatched on the array module: the scheme calls these only.

:class:`Arith` binds a ring (:class:`~.ring.RnsRing`) to an array module and a kernel set:

=========  ============  =================================================================
``xp``     kernels       what runs
=========  ============  =================================================================
numpy      ``cuda-host`` the CPU twin (default): the GPU's launch code (:mod:`.arith_cuda`)
                         driving ``kernels.cu`` compiled for the CPU (:mod:`.launch`)
numpy      ``numba``     :mod:`.arith_numba`, the loops compiled with numba (the default where
                         no C++ compiler is installed)
numpy      ``ref``       :mod:`.arith_ref`, plain array operations (the reference)
cupy       ``cuda``      the GPU (default): :mod:`.arith_cuda`, kernels in ``kernels.cu``
cupy       ``ref``       :mod:`.arith_ref` on CuPy (what the CUDA kernels are tested against)
=========  ============  =================================================================

Operands are ``uint64`` arrays ``(..., R, N)`` of canonical residues with ``rows`` naming each
of the ``R`` rows' prime (a host ``int64`` array; leading axes are batched). ``ntt``/``intt``
may transform their operand in place (callers pass a copy when they still need it); every
other function returns a new array.

The batched ops (``transform``, ``convert``, ``ks_items``, ``combine``, ``dot``, ``tensor``,
``gather``, ``copy``) are one launch each (a few for a transform) in the CUDA kernel sets;
the others compose them from the primitive ops (:mod:`.arith_compose`), which is also their
reference. The CUDA kernel sets count their launches (:attr:`launches`); on the twin that is the
number the GPU would launch, since the launch code is the same.

Host tables given to the batched ops (row tables, item lists, conversion plans) are copied to
the device once per distinct value and cached, so a run that repeats a program -- a CUDA graph's
capture after a warm-up -- copies nothing from the host.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Callable, Hashable, Sequence, TypeVar

import numpy as np
import numpy.typing as npt

from cryptoffload.crypto.ckks.gpu import arith_compose as compose
from cryptoffload.crypto.ckks.gpu.convplan import ConvJob, ConvPlan
from cryptoffload.crypto.ckks.gpu.kernelset import (Array, DeviceTables, FusedKernels, Index, KernelSet, KeyWords,
                                                    LoopKernels)
from cryptoffload.crypto.ckks.gpu.keystore import KEY_DTYPE
from cryptoffload.crypto.ckks.gpu.launch import CupyExecutor, Executor, HostExecutor, Launcher, host_reason
from cryptoffload.crypto.ckks.gpu.ring import RnsRing
from cryptoffload.crypto.ckks.errors import CkksError
from cryptoffload.errors import ConfigError

_T = TypeVar("_T", bound=np.generic)


# The loaders return each kernel module as its protocol, so mypy checks the module against it;
# they import lazily, so a process loads only the kernel set it runs (numba's import is slow).
def _ref() -> LoopKernels:
    from cryptoffload.crypto.ckks.gpu import arith_ref  # noqa: PLC0415 -- chosen at run time

    return arith_ref


def _numba() -> LoopKernels:
    from cryptoffload.crypto.ckks.gpu import arith_numba  # noqa: PLC0415 -- chosen at run time

    return arith_numba


def _cuda() -> FusedKernels:
    from cryptoffload.crypto.ckks.gpu import arith_cuda  # noqa: PLC0415 -- chosen at run time

    return arith_cuda


@dataclass(frozen=True)
class KernelEntry:
    """A kernel set: its module (loaded as a loop or a fused kernel set), the array module it runs
    on (None: any), and the executor of its launches (fused kernel sets only)."""

    runs_on: str | None
    loops: Callable[[], LoopKernels] | None = None
    fused: Callable[[], FusedKernels] | None = None
    executor: Callable[[], Executor] | None = None


#: Every kernel set, by name: the one table :class:`Arith` chooses from.
KERNEL_SETS: dict[str, KernelEntry] = {
    "cuda-host": KernelEntry("numpy", fused=_cuda, executor=HostExecutor),
    "numba": KernelEntry("numpy", loops=_numba),
    "ref": KernelEntry(None, loops=_ref),
    "cuda": KernelEntry("cupy", fused=_cuda, executor=CupyExecutor),
}


def default_kernels(xp_name: str) -> str:
    """The kernel set an array module gets unless one is named: the launch code everywhere it
    can run (``cuda`` on CuPy, ``cuda-host`` on NumPy with a C++ compiler), else numba."""
    if xp_name == "cupy":
        return "cuda"
    return "cuda-host" if host_reason() is None else "numba"


class Arith:
    """Device tables of one ring plus the chosen kernel set (see the module docstring)."""

    def __init__(self, ring: RnsRing, xp: ModuleType, kernels: str | None = None) -> None:
        name = xp.__name__.split(".")[0]
        kernels = kernels or default_kernels(name)
        if kernels not in KERNEL_SETS:
            raise ConfigError(f"unknown kernel set {kernels!r} (known: {', '.join(KERNEL_SETS)})")
        entry = KERNEL_SETS[kernels]
        if entry.runs_on not in (None, name):
            raise ConfigError(f"kernel set {kernels!r} does not run on {name}")
        self.ring = ring
        self.xp = xp
        self.kernels = kernels
        self._loops = entry.loops() if entry.loops is not None else None
        self._fused = entry.fused() if entry.fused is not None else None
        impl = self._loops or self._fused
        if impl is None:   # a registry entry without a module: a bug in KERNEL_SETS
            raise AssertionError(f"kernel set {kernels!r} names no kernel module")
        self.impl: KernelSet = impl
        self.launcher = Launcher(entry.executor()) if entry.executor is not None else None
        self.fused = self._fused is not None
        dev = xp.asarray
        self.t = DeviceTables(
            xp=xp, n=ring.n, q=dev(ring.q), qinv=dev(1.0 / ring.q.astype(np.float64)),
            psi=dev(ring.psi), psi_sh=dev(ring.psi_sh), ipsi=dev(ring.ipsi), ipsi_sh=dev(ring.ipsi_sh),
            ninv=dev(ring.ninv), ninv_sh=dev(ring.ninv_sh), launch=self.launcher)
        self._tables: dict[tuple[tuple[int, ...], bytes], Index] = {}
        self._consts: dict[Hashable, tuple[Array, ...]] = {}
        self._plans: dict[Hashable, ConvPlan] = {}
        self._plan_tables: dict[Hashable, tuple[npt.NDArray[np.generic], ...]] = {}
        self._tiles: dict[tuple[int, int], tuple[Array, Array]] = {}
        self._perms: dict[int, Index] = {}

    @property
    def launches(self) -> int | None:
        """Kernel launches so far (None for kernel sets that do not go through the launch code)."""
        return None if self.launcher is None else self.launcher.count

    # -- host/device ---------------------------------------------------------------------------
    def _from_host(self, what: str) -> None:
        """Refuse a copy from the host while a program is being captured: a CUDA graph cannot
        hold a synchronous copy, and a replay would not repeat it (the data would be stale)."""
        if self.launcher is not None and self.launcher.recording:
            raise CkksError(f"capture: the program copies {what} from the host while it is captured; "
                            "encode its plaintexts before capturing (a plan's prepare), not inside it")

    def asarray(self, a: npt.ArrayLike) -> Array:
        self._from_host("data")
        out: Array = self.xp.asarray(a)
        return out

    def to_host(self, a: npt.NDArray[_T]) -> npt.NDArray[_T]:
        return a if isinstance(a, np.ndarray) else self.xp.asnumpy(a)

    def table(self, host: npt.ArrayLike) -> Index:
        """Device copy of a small host ``int64`` table (row indices, item lists), cached by value."""
        flat = np.ascontiguousarray(host, dtype=np.int64)
        key = (flat.shape, flat.tobytes())
        dev = self._tables.get(key)
        if dev is None:
            self._from_host("a table")
            dev = self.xp.asarray(flat)
            self._tables[key] = dev
        return dev

    def rows(self, rows: npt.ArrayLike, repeat: int = 1) -> Index:
        """Device copy of a row-index array, tiled ``repeat`` times (cached)."""
        return self.table(np.tile(np.asarray(rows, dtype=np.int64), repeat))

    def row_table(self, offsets: npt.ArrayLike, primes: npt.ArrayLike) -> Index:
        """The (row offset, prime) pairs a CUDA transform reads (cached)."""
        return self.table(np.stack([np.asarray(offsets, np.int64), np.asarray(primes, np.int64)], axis=1))

    def contig(self, a: npt.NDArray[_T]) -> npt.NDArray[_T]:
        """``a`` as a contiguous array; a copy (one launch on a GPU, counted) only when it is not."""
        if a.flags.c_contiguous:
            return a
        if self.launcher is None:
            copy: npt.NDArray[_T] = self.xp.ascontiguousarray(a)
            return copy
        out: npt.NDArray[_T] = self.xp.empty(a.shape, dtype=a.dtype)
        self.launcher.copy(out, a)
        return out

    def _flat(self, a: Array, rows: np.ndarray) -> tuple[Array, Index, tuple[int, ...]]:
        shape = a.shape
        reps = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
        return self.contig(a).reshape(-1, shape[-1]), self.rows(rows, reps), shape

    def const(self, key: Hashable, make: Callable[[], Sequence[Array]]) -> tuple[Array, ...]:
        """Device copies of host constants ``make()`` (a tuple of arrays), cached under ``key``."""
        got = self._consts.get(key)
        if got is None:
            self._from_host("constants")
            got = tuple(self.xp.asarray(c) for c in make())
            self._consts[key] = got
        return got

    # -- elementwise -----------------------------------------------------------------------------
    def add(self, a: Array, b: Array, rows: np.ndarray) -> Array:
        fa, r, shape = self._flat(a, rows)
        return self.impl.add(self.t, fa, self.contig(b).reshape(fa.shape), r).reshape(shape)

    def sub(self, a: Array, b: Array, rows: np.ndarray) -> Array:
        fa, r, shape = self._flat(a, rows)
        return self.impl.sub(self.t, fa, self.contig(b).reshape(fa.shape), r).reshape(shape)

    def neg(self, a: Array, rows: np.ndarray) -> Array:
        fa, r, shape = self._flat(a, rows)
        return self.impl.neg(self.t, fa, r).reshape(shape)

    def mul(self, a: Array, b: Array, rows: np.ndarray) -> Array:
        fa, r, shape = self._flat(a, rows)
        return self.impl.mul(self.t, fa, self.contig(b).reshape(fa.shape), r).reshape(shape)

    def mul_const(self, a: Array, c: Array, c_sh: Array, rows: np.ndarray) -> Array:
        """``a * c[r]`` with one constant per row (``c``, ``c_sh``: device arrays of ``len(rows)``)."""
        fa, r, shape = self._flat(a, rows)
        reps = fa.shape[0] // len(rows)
        if reps > 1:
            c, c_sh = self._tiled(c, reps), self._tiled(c_sh, reps)
        return self.impl.mul_const(self.t, fa, c, c_sh, r).reshape(shape)

    def _tiled(self, c: Array, reps: int) -> Array:
        """``c`` repeated ``reps`` times, made once per (constant, reps): constants are cached
        for the Arith's lifetime, so their identity is a safe key (the entry keeps them alive)."""
        key = (id(c), reps)
        got = self._tiles.get(key)
        if got is None:
            got = (c, self.xp.tile(c, reps))
            self._tiles[key] = got
        return got[1]

    # -- transforms ------------------------------------------------------------------------------
    def ntt(self, a: Array, rows: np.ndarray) -> Array:
        return self._whole(a, rows, False)

    def intt(self, a: Array, rows: np.ndarray) -> Array:
        return self._whole(a, rows, True)

    def _whole(self, a: Array, rows: np.ndarray, inverse: bool) -> Array:
        fa, r, shape = self._flat(a, rows)
        if self._fused is not None:
            count = fa.shape[0]
            tab = self.row_table(np.arange(count), np.tile(np.asarray(rows, np.int64), count // len(rows)))
            return self._fused.transform(self.t, fa, tab, count, inverse).reshape(shape)
        loops = self._loop_kernels()
        fn = loops.intt if inverse else loops.ntt
        return fn(self.t, fa, r).reshape(shape)

    def _loop_kernels(self) -> LoopKernels:
        """The loop kernel set (every op has one: a fused kernel set goes through its batched ops)."""
        if self._loops is None:   # a dispatch bug in this class, not a user error
            raise AssertionError(f"kernel set {self.kernels!r} has no loop kernels")
        return self._loops

    def transform(self, buf: Array, offsets: np.ndarray, primes: np.ndarray, inverse: bool,
                  src: Array | None = None) -> Array:
        """(Inverse) NTT of rows ``offsets`` of ``buf`` (its rows flattened; primes ``primes``),
        in place, reading them from ``src`` (``buf``'s shape) when given."""
        if self._fused is None:
            return compose.transform(self, buf, offsets, primes, inverse, src)
        if not buf.flags.c_contiguous:
            raise ValueError("transform works in place: the buffer must be contiguous")
        src = None if src is None else self.contig(src)
        return self._fused.transform(self.t, buf, self.row_table(offsets, primes), len(offsets), inverse, src)

    def permute(self, a: Array, elt: int) -> Array:
        """Galois automorphism ``X -> X**elt`` of NTT-domain arrays (any leading axes)."""
        return self.impl.permute(self.t, self.contig(a), self.perm(elt))

    def perm(self, elt: int) -> Index:
        """Device index map of ``X -> X**elt`` (cached)."""
        perm = self._perms.get(elt)
        if perm is None:
            perm = self.xp.asarray(self.ring.galois_perm(elt))
            self._perms[elt] = perm
        return perm

    # -- RNS -------------------------------------------------------------------------------------
    def base_convert(self, x: Array, src: tuple[int, ...], dst: tuple[int, ...], exact: bool = False) -> Array:
        """Fast base conversion of coefficient-form rows ``src`` of ``x`` (``(S, N)``) to ``dst``;
        ``exact``: the centred representative, without the conversion's overflow (for ModDown)."""
        yinv, yinv_sh, mat, qmod = self.const(("conv", src, dst), lambda: self.ring.conversion(src, dst))
        return self.impl.base_convert(self.t, self.contig(x), self.rows(np.array(src)),
                                      self.rows(np.array(dst)), yinv, yinv_sh, mat, qmod if exact else None)

    def conv_plan(self, key: Hashable, jobs: Callable[[], Sequence[ConvJob]]) -> ConvPlan:
        """The :class:`~.convplan.ConvPlan` of ``jobs()`` (a list of ConvJob), built once per ``key``."""
        got = self._plans.get(key)
        if got is None:
            got = ConvPlan.build(self.ring, jobs())
            self._plans[key] = got
        return got

    def convert(self, x: Array, plan: ConvPlan, out: Array) -> Array:
        """Every job of ``plan`` (:mod:`.convplan`), written into ``out``."""
        if self._fused is None:
            return compose.convert(self, x, plan, out)
        if not out.flags.c_contiguous:
            raise ValueError("convert writes into its output: it must be contiguous")
        dev = self._plan_tables.get(plan.key)
        if dev is None:
            self._from_host("a conversion plan")
            dev = tuple(self.xp.asarray(a) for a in (plan.jobs, *plan.tables))
            self._plan_tables[plan.key] = dev
        return self._fused.convert(self.t, self.contig(x), plan, dev, out)

    def ks_inner(self, digits: Array, key: KeyWords, key_rows: np.ndarray, rows: np.ndarray) -> Array:
        """``sum_g digits[g] * key[g, c, key_rows]`` for ``c = 0, 1``: ``(2, R, N)``."""
        if self._fused is not None:
            items = np.array([[0, 0, -1]], dtype=np.int64)
            return self.ks_items(digits[None], self._keys(key)[None], self.table(np.zeros(1)), items, rows,
                                 key_rows)[0]
        return self._loop_kernels().ks_inner(self.t, self.contig(digits), key, self.rows(key_rows), self.rows(rows))

    def _keys(self, keys: KeyWords) -> KeyWords:
        """Keys as the 32-bit words ``ks_items_k`` reads (the key store holds them so: no copy)."""
        return keys.astype(KEY_DTYPE, copy=False)

    def ks_items(self, digits: Array, keys: KeyWords, perms: Index, items: np.ndarray, qp_rows: np.ndarray,
                 key_rows: np.ndarray | None = None) -> Array:
        """Inner products of many key switches: item ``(b, key, perm)`` multiplies digit set ``b``
        of ``digits`` ``(B, G, QP, N)``, read through permutation ``perm`` of ``perms`` (-1: none),
        by ``keys[key]`` (``(NK, G', 2, K, N)``, 32-bit words or any word the residues fit, read at
        ``key_rows``: by default ``qp_rows``, a key over every row) on rows ``qp_rows``:
        ``(len(items), 2, QP, N)``."""
        key_rows = qp_rows if key_rows is None else key_rows
        if self._fused is None:
            return compose.ks_items(self, digits, keys, perms, items, qp_rows, key_rows)
        return self._fused.ks_items(self.t, self.contig(digits), self.contig(self._keys(keys)), self.contig(perms),
                                    self.table(items), len(items), self.rows(key_rows), self.rows(qp_rows))

    def combine(self, a: Array, conv: Array, base: Array | None, perms: Index, items: np.ndarray, rows: np.ndarray,
                c: Array, c_sh: Array) -> Array:
        """Per item ``(a_off, base_off, perm)`` (element offsets; -1: none): ``(a[rows at a_off] -
        conv[i]) * c (+ base[rows at base_off] through perm)``: ``conv``'s shape ``(I, R, N)``."""
        if self._fused is None:
            return compose.combine(self, a, conv, base, perms, items, rows, c, c_sh)
        base = None if base is None else self.contig(base)
        return self._fused.combine(self.t, self.contig(a), self.contig(conv), base, self.contig(perms),
                                   self.table(items), self.rows(rows), c, c_sh)

    # -- products and copies ------------------------------------------------------------------------
    def dot(self, cts: Sequence[Array], pts: Sequence[KeyWords], rows: np.ndarray, acc: Array | None = None) -> Array:
        """``acc + sum_i cts[i] * pts[i]``: ciphertexts ``(size, R, N)``, plaintexts ``(R, N)``."""
        if self._fused is None:
            return compose.dot(self, cts, pts, rows, acc)
        cts = [self.contig(c) for c in cts]
        pts = [self.contig(p) for p in pts]
        return self._fused.dot(self.t, cts, pts, self.rows(rows), acc)

    def sum(self, arrays: Sequence[Array], rows: np.ndarray) -> Array:
        """``sum_i arrays[i]`` (one shape ``(..., R, N)``): on the CUDA kernel sets one dot with a
        plaintext of ones per 16 terms (a product by 1 is exact, so the value is the additions')."""
        if self._fused is None:
            return compose.total(self, arrays, rows)
        r_count, n = arrays[0].shape[-2:]
        ones = self.const(("ones", r_count), lambda: (np.ones((r_count, n), dtype=np.uint64),))[0]
        return self.dot(arrays, [ones] * len(arrays), rows)

    def lincomb(self, x: Array, c: Array, c_sh: Array, rows: np.ndarray) -> Array:
        """A dense layer of per-row constants: ``out[r] = sum_p c[r, p] * x[p]`` with ``x``
        ``(P, S, R, N)`` and ``c``, ``c_sh`` (Shoup quotients) device arrays ``(R_out, P, R)``:
        ``(R_out, S, R, N)``."""
        if self._fused is None:
            return compose.lincomb(self, x, c, c_sh, rows)
        return self._fused.lincomb(self.t, self.contig(x), self.contig(c), self.contig(c_sh), self.rows(rows))

    def tensor(self, a: Array, b: Array, rows: np.ndarray) -> Array:
        """The tensor product of two size-2 ciphertexts: ``(3, R, N)``."""
        if self._fused is None:
            return compose.tensor(self, a, b, rows)
        return self._fused.tensor(self.t, self.contig(a), self.contig(b), self.rows(rows))

    def gather(self, arrays: Sequence[Array]) -> Array:
        """The arrays (one shape) stacked on a new first axis."""
        if self._fused is None:
            return compose.gather(self, arrays)
        return self._fused.gather(self.t, [self.contig(a) for a in arrays])

    def copy(self, a: Array) -> Array:
        return self.gather([a])[0]
