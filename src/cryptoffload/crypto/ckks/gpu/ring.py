"""The RNS ring ``Z_Q[X]/(X^N + 1)``: primes, NTT tables, Galois permutations, CRT constants.

Everything here is computed once per parameter set on the host (NumPy, Python integers) and is
the same for the CPU twin and the GPU: the array module only receives copies of these tables,
so both compute with identical constants.

Row order of every RNS array: the physical data primes (logical level 0's first), then the
special primes of ``P``. A polynomial at logical level ``l`` holds the first
``chain.limbs(l)`` data rows; key-switching keys hold all rows.

NTT convention (Longa and Naehrig, "Speeding up the Number Theoretic Transform for Faster Ideal
Lattice-Based Cryptography", CANS 2016; SEAL's): the forward negacyclic transform is
Cooley-Tukey with the powers of a primitive ``2N``-th root ``psi`` in bit-reversed order and
leaves its output in bit-reversed order, so output ``i`` is the polynomial's value at
``psi**(2 * bitrev(i) + 1)``; the inverse is Gentleman-Sande with ``psi**-1`` and ``N**-1``.
Constants multiplied many times carry Shoup's precomputed quotient ``floor(w * 2**32 / q)``.
"""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np
import numpy.typing as npt

from cryptoffload.crypto.ckks.gpu.chain import WORD_BITS, PrimeChain

SHOUP_SHIFT = 32


def shoup(w: npt.ArrayLike, q: npt.ArrayLike) -> npt.NDArray[np.uint64]:
    """Shoup's quotient ``floor(w * 2**32 / q)`` (elementwise on uint64 arrays; ``w < q < 2**31``)."""
    return (np.asarray(w, dtype=np.uint64) << np.uint64(SHOUP_SHIFT)) // np.asarray(q, dtype=np.uint64)


def bit_reverse(n: int) -> np.ndarray:
    """``bitrev(i)`` over ``log2(n)`` bits for ``i < n``."""
    bits = n.bit_length() - 1
    idx = np.arange(n, dtype=np.int64)
    out = np.zeros(n, dtype=np.int64)
    for b in range(bits):
        out |= ((idx >> b) & 1) << (bits - 1 - b)
    return out


def primitive_root_2n(q: int, n: int) -> int:
    """The smallest primitive ``2N``-th root of unity mod ``q`` (deterministic: every party and
    every device derives the same NTT tables)."""
    m = 2 * n
    if (q - 1) % m:
        raise ValueError(f"{q} is not 1 mod {m}")
    for x in range(2, q):
        root = pow(x, (q - 1) // m, q)
        if pow(root, n, q) == q - 1:
            break
    else:  # pragma: no cover - a prime = 1 mod 2N always has one
        raise ValueError(f"no primitive {m}-th root mod {q}")
    # the smallest of the primitive roots root**k, k odd
    return int(_powers(root, m, q)[1::2].min())


def _powers(root: int, count: int, q: int) -> np.ndarray:
    """``root**i mod q`` for ``i < count``, as a table: ``root**(a B + b) = (root**B)**a root**b``
    for a block ``B`` of about ``sqrt(count)`` (products of two residues below 2^62: exact)."""
    block = 1 << max(1, (count.bit_length() - 1 + 1) // 2)
    low = np.empty(block, dtype=np.uint64)
    x = 1
    for i in range(block):
        low[i] = x
        x = x * root % q
    step = x                      # root**block
    high = np.empty(-(-count // block), dtype=np.uint64)
    y = 1
    for i in range(len(high)):
        high[i] = y
        y = y * step % q
    return ((high[:, None] * low[None, :]) % np.uint64(q)).reshape(-1)[:count]


class RnsRing:
    """Host-side constants of one prime chain at ring degree ``N`` (see the module docstring)."""

    def __init__(self, chain: PrimeChain) -> None:
        self.chain = chain
        self.n = chain.poly_modulus_degree
        self.log_n = self.n.bit_length() - 1
        primes = chain.all
        if any(p >= 1 << WORD_BITS for p in primes):  # pragma: no cover - the chain guarantees it
            raise ValueError("every prime must be below 2^31")
        self.primes = primes
        self.q = np.array(primes, dtype=np.uint64)
        self.rows = len(primes)
        self.n_data = len(chain.data)
        self.special_rows = np.arange(self.n_data, self.rows, dtype=np.int64)
        self.digits = chain.digits()
        n = self.n
        rev = bit_reverse(n)
        psi = np.zeros((self.rows, n), dtype=np.uint64)
        ipsi = np.zeros((self.rows, n), dtype=np.uint64)
        ninv = np.zeros(self.rows, dtype=np.uint64)
        self.psi_root = []
        for k, q in enumerate(primes):
            root = primitive_root_2n(q, n)
            self.psi_root.append(root)
            powers = _powers(root, n, q)
            ipowers = _powers(pow(root, -1, q), n, q)
            psi[k] = powers[rev]
            ipsi[k] = ipowers[rev]
            ninv[k] = pow(n, -1, q)
        qcol = self.q[:, None]
        self.psi, self.psi_sh = psi, shoup(psi, qcol)
        self.ipsi, self.ipsi_sh = ipsi, shoup(ipsi, qcol)
        self.ninv, self.ninv_sh = ninv, shoup(ninv, self.q)
        self._perm: dict[int, np.ndarray] = {}
        self._conv: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[np.ndarray, ...]] = {}

    # -- rows ----------------------------------------------------------------------------------
    def data_rows(self, level: int) -> np.ndarray:
        return np.arange(self.chain.limbs(level), dtype=np.int64)

    def qp_rows(self, level: int) -> np.ndarray:
        """Rows of an extended (key-switching) polynomial at ``level``: data rows, then ``P``'s."""
        return np.concatenate([self.data_rows(level), self.special_rows])

    def level_digits(self, level: int) -> list[tuple[int, ...]]:
        """The key-switching digits restricted to the data rows present at ``level`` (a digit
        with no row left is dropped; the survivors keep their key index, their position)."""
        limbs = self.chain.limbs(level)
        out = []
        for d in self.digits:
            rows = tuple(r for r in d if r < limbs)
            if rows:
                out.append(rows)
        return out

    # -- Galois automorphisms ------------------------------------------------------------------
    def galois_perm(self, elt: int) -> np.ndarray:
        """Index map of ``X -> X**elt`` on NTT-domain (bit-reversed) coefficients:
        ``out[i] = in[perm[i]]``. Output ``i`` is the value at ``psi**e`` with
        ``e = 2 bitrev(i) + 1``, and ``(sigma a)(psi**e) = a(psi**(e * elt))``."""
        elt %= 2 * self.n
        if elt % 2 == 0:
            raise ValueError(f"a Galois element is odd, got {elt}")
        cached = self._perm.get(elt)
        if cached is None:
            rev = bit_reverse(self.n)
            e = 2 * rev + 1
            target = (e * elt) % (2 * self.n)
            inv_rev = np.empty_like(rev)
            inv_rev[rev] = np.arange(self.n)
            cached = inv_rev[(target - 1) // 2].astype(np.int64)
            self._perm[elt] = cached
        return cached

    # -- CRT constants -------------------------------------------------------------------------
    def conversion(self, src: tuple[int, ...], dst: tuple[int, ...]) -> tuple[np.ndarray, ...]:
        """Constants of the fast base conversion from rows ``src`` to rows ``dst`` (Bajard et
        al.; Halevi, Polyakov and Shoup): ``y_s = x_s * (Qs/q_s)^-1 mod q_s`` (value, Shoup
        quotient), then ``out_t = sum_s y_s * (Qs/q_s mod t) mod t`` (matrix ``(S, T)``), and
        ``Qs mod t`` (the exact conversion's correction)."""
        key = (tuple(src), tuple(dst))
        cached = self._conv.get(key)
        if cached is None:
            qs = [self.primes[r] for r in src]
            big = math.prod(qs)
            hat = [big // q for q in qs]
            yinv = np.array([pow(h % q, -1, q) for h, q in zip(hat, qs)], dtype=np.uint64)
            mat = np.array([[h % self.primes[t] for t in dst] for h in hat], dtype=np.uint64)
            qmod = np.array([big % self.primes[t] for t in dst], dtype=np.uint64)
            cached = (yinv, shoup(yinv, np.array(qs, dtype=np.uint64)), mat, qmod)
            self._conv[key] = cached
        return cached

    def inverse_of(self, value: int, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``value**-1 mod q_r`` per row, with Shoup quotients."""
        inv = np.array([pow(value % self.primes[r], -1, self.primes[r]) for r in rows], dtype=np.uint64)
        return inv, shoup(inv, self.q[rows])

    def constant(self, value: int, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``value mod q_r`` per row, with Shoup quotients."""
        c = np.array([value % self.primes[r] for r in rows], dtype=np.uint64)
        return c, shoup(c, self.q[rows])

    @cached_property
    def p_product(self) -> int:
        return math.prod(self.chain.special)

    @cached_property
    def imaginary_unit(self) -> np.ndarray:
        """NTT form of ``X**(N/2)`` over every row, ``(K, N)``: the polynomial whose slots are all
        ``i`` (``xi**(5**j * N/2) = i`` since ``5**j = 1 mod 4``), so a product with it multiplies
        the slots by ``i``. Output ``k`` is ``psi**(e N/2)`` with ``e = 2 bitrev(k) + 1``: the
        square root ``j = psi**(N/2)`` of -1 where ``e = 1 mod 4``, ``-j`` elsewhere."""
        plus = (2 * bit_reverse(self.n) + 1) % 4 == 1
        out = np.empty((self.rows, self.n), dtype=np.uint64)
        for k, q in enumerate(self.primes):
            j = pow(self.psi_root[k], self.n // 2, q)
            out[k] = np.where(plus, j, q - j)
        return out
