"""One entry point per hot loop, dispatched on the array module: the scheme calls these only.

:class:`Arith` binds a ring (:class:`~.ring.RnsRing`) to an array module and a kernel set:

=========  ============  =================================================================
``xp``     kernels       what runs
=========  ============  =================================================================
numpy      ``numba``     the CPU twin (default): :mod:`.arith_numba`
numpy      ``ref``       :mod:`.arith_ref`, plain array operations (the reference)
cupy       ``cuda``      the GPU (default): :mod:`.arith_cuda`, kernels in ``kernels.cu``
cupy       ``ref``       :mod:`.arith_ref` on CuPy (what the CUDA kernels are tested against)
=========  ============  =================================================================

Operands are ``uint64`` arrays ``(..., R, N)`` of canonical residues with ``rows`` naming each
of the ``R`` rows' prime (a host ``int64`` array; leading axes are batched). ``ntt``/``intt``
may transform their operand in place (callers pass a copy when they still need it); every
other function returns a new array.
"""

from __future__ import annotations

import importlib
from types import SimpleNamespace
from typing import Any

import numpy as np

from cryptoffload.crypto.ckks.gpu.ring import RnsRing
from cryptoffload.errors import ConfigError

KERNEL_SETS = {"numba": "arith_numba", "ref": "arith_ref", "cuda": "arith_cuda"}
DEFAULT_KERNELS = {"numpy": "numba", "cupy": "cuda"}


class Arith:
    """Device tables of one ring plus the chosen kernel set (see the module docstring)."""

    def __init__(self, ring: RnsRing, xp: Any, kernels: str | None = None) -> None:
        name = xp.__name__.split(".")[0]
        kernels = kernels or DEFAULT_KERNELS.get(name, "ref")
        if kernels not in KERNEL_SETS:
            raise ConfigError(f"unknown kernel set {kernels!r} (known: {', '.join(KERNEL_SETS)})")
        if (kernels == "cuda") != (name == "cupy"):
            raise ConfigError(f"kernel set {kernels!r} does not run on {name}")
        self.ring = ring
        self.xp = xp
        self.kernels = kernels
        self.impl = importlib.import_module(f"cryptoffload.crypto.ckks.gpu.{KERNEL_SETS[kernels]}")
        dev = xp.asarray
        self.t = SimpleNamespace(
            xp=xp, n=ring.n, q=dev(ring.q), qinv=dev(1.0 / ring.q.astype(np.float64)),
            psi=dev(ring.psi), psi_sh=dev(ring.psi_sh), ipsi=dev(ring.ipsi), ipsi_sh=dev(ring.ipsi_sh),
            ninv=dev(ring.ninv), ninv_sh=dev(ring.ninv_sh))
        if hasattr(self.impl, "prepare"):
            self.impl.prepare(self.t)
        self._rows: dict[bytes, Any] = {}
        self._consts: dict[Any, Any] = {}
        self._perms: dict[int, Any] = {}

    # -- host/device ---------------------------------------------------------------------------
    def asarray(self, a: Any) -> Any:
        return self.xp.asarray(a)

    def to_host(self, a: Any) -> np.ndarray:
        return a if isinstance(a, np.ndarray) else self.xp.asnumpy(a)

    def rows(self, rows: np.ndarray, repeat: int = 1) -> Any:
        """Device copy of a row-index array, tiled ``repeat`` times (cached)."""
        rows = np.asarray(rows, dtype=np.int64)
        key = rows.tobytes() + repeat.to_bytes(4, "little")
        dev = self._rows.get(key)
        if dev is None:
            dev = self.xp.asarray(np.tile(rows, repeat))
            self._rows[key] = dev
        return dev

    def _flat(self, a: Any, rows: np.ndarray) -> tuple[Any, Any, tuple[int, ...]]:
        shape = a.shape
        reps = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
        return self.xp.ascontiguousarray(a).reshape(-1, shape[-1]), self.rows(rows, reps), shape

    def const(self, key: Any, make: Any) -> Any:
        """Device copies of host constants ``make()`` (a tuple of arrays), cached under ``key``."""
        got = self._consts.get(key)
        if got is None:
            got = tuple(self.xp.asarray(c) for c in make())
            self._consts[key] = got
        return got

    # -- elementwise -----------------------------------------------------------------------------
    def add(self, a: Any, b: Any, rows: np.ndarray) -> Any:
        fa, r, shape = self._flat(a, rows)
        return self.impl.add(self.t, fa, self.xp.ascontiguousarray(b).reshape(fa.shape), r).reshape(shape)

    def sub(self, a: Any, b: Any, rows: np.ndarray) -> Any:
        fa, r, shape = self._flat(a, rows)
        return self.impl.sub(self.t, fa, self.xp.ascontiguousarray(b).reshape(fa.shape), r).reshape(shape)

    def neg(self, a: Any, rows: np.ndarray) -> Any:
        fa, r, shape = self._flat(a, rows)
        return self.impl.neg(self.t, fa, r).reshape(shape)

    def mul(self, a: Any, b: Any, rows: np.ndarray) -> Any:
        fa, r, shape = self._flat(a, rows)
        return self.impl.mul(self.t, fa, self.xp.ascontiguousarray(b).reshape(fa.shape), r).reshape(shape)

    def mul_const(self, a: Any, c: Any, c_sh: Any, rows: np.ndarray) -> Any:
        """``a * c[r]`` with one constant per row (``c``, ``c_sh``: device arrays of ``len(rows)``)."""
        fa, r, shape = self._flat(a, rows)
        reps = fa.shape[0] // len(rows)
        if reps > 1:
            c, c_sh = self.xp.tile(c, reps), self.xp.tile(c_sh, reps)
        return self.impl.mul_const(self.t, fa, c, c_sh, r).reshape(shape)

    # -- transforms ------------------------------------------------------------------------------
    def ntt(self, a: Any, rows: np.ndarray) -> Any:
        fa, r, shape = self._flat(a, rows)
        return self.impl.ntt(self.t, fa, r).reshape(shape)

    def intt(self, a: Any, rows: np.ndarray) -> Any:
        fa, r, shape = self._flat(a, rows)
        return self.impl.intt(self.t, fa, r).reshape(shape)

    def permute(self, a: Any, elt: int) -> Any:
        """Galois automorphism ``X -> X**elt`` of NTT-domain arrays (any leading axes)."""
        perm = self._perms.get(elt)
        if perm is None:
            perm = self.xp.asarray(self.ring.galois_perm(elt))
            self._perms[elt] = perm
        return self.impl.permute(self.t, self.xp.ascontiguousarray(a), perm)

    # -- RNS -------------------------------------------------------------------------------------
    def base_convert(self, x: Any, src: tuple[int, ...], dst: tuple[int, ...], exact: bool = False) -> Any:
        """Fast base conversion of coefficient-form rows ``src`` of ``x`` (``(S, N)``) to ``dst``;
        ``exact``: the centred representative, without the conversion's overflow (for ModDown)."""
        yinv, yinv_sh, mat, qmod = self.const(("conv", src, dst), lambda: self.ring.conversion(src, dst))
        return self.impl.base_convert(self.t, self.xp.ascontiguousarray(x), self.rows(np.array(src)),
                                      self.rows(np.array(dst)), yinv, yinv_sh, mat, qmod if exact else None)

    def ks_inner(self, digits: Any, key: Any, key_rows: np.ndarray, rows: np.ndarray) -> Any:
        """``sum_g digits[g] * key[g, c, key_rows]`` for ``c = 0, 1``: ``(2, R, N)``."""
        return self.impl.ks_inner(self.t, self.xp.ascontiguousarray(digits), key, self.rows(key_rows),
                                  self.rows(rows))
