"""Hybrid key switching (Han and Ki, "Better Bootstrapping for Approximate Homomorphic
Encryption", CT-RSA 2020), batched: digit decomposition over the data primes, extension to the
special modulus ``P``, inner products with the keys, and division by ``P``.

A key switching key from ``s'`` to ``s`` holds, per digit ``g`` (a group of data rows whose
modulus ``Q_g`` is at most ``P``, :meth:`~.chain.PrimeChain.digits`), an RLWE sample over
all rows ``(b_g, a_g)`` with ``b_g = -a_g s + e_g + P s'`` on the rows of digit ``g`` and
``-a_g s + e_g`` elsewhere (the gadget ``P * (Q/Q_g) * [(Q/Q_g)^-1]_Q_g`` is ``P`` on those rows
and 0 on the others). Switching ``d`` (the part of a ciphertext multiplied by ``s'``):

1. :func:`decompose` -- the rows of ``d`` of every digit, extended to every row of the level
   and of ``P`` (ModUp) by base conversion in the coefficient domain, then transformed. The
   extension is the *centred* representative of ``d mod Q_g`` (the exact conversion of
   :func:`~.arith_ref.base_convert`), not the fast conversion's ``[0, S Q_g)`` one: a digit with
   a non-zero mean turns the key's error into a random walk over the coefficients, whose energy
   sits in the slots next to ``X = 1`` -- measured at N = 16384, it made a rotation's largest
   slot error 80x its standard deviation (SEAL's rotations show the same tail); centred digits
   remove it and halve the digits' size. A digit's own rows are converted too (the exact
   conversion of a row to its own prime is the row itself), so every digit is one job;
2. :func:`inner` -- ``sum_g digit_g * key_g`` for every item (one launch);
3. :func:`mod_down` -- the ``P`` rows converted back to the level's primes *exactly* (centred,
   without the fast conversion's overflow, which would bias every coefficient by up to
   ``alpha`` and concentrate in a few slots) and subtracted, times ``P^-1``: ``round(x / P)``,
   plus what the item adds back (a rotation's permuted ``c0``, a relinearisation's ``c0, c1``).

Hoisting (Halevi and Shoup, "Faster Homomorphic Linear Transformations in HElib", CRYPTO
2018): the automorphism commutes with the decomposition up to a multiple of ``Q_g`` that the
conversion tolerates anyway, so every rotation -- alone or many of one ciphertext -- decomposes
``c1`` as it is and reads the decomposed digits through the Galois permutation in its inner
product. Everything is batched: one decomposition for the ``c1`` of many ciphertexts, one inner
product for many (digit set, key, permutation) items, one ModDown for all their results. At a
fixed level the launches do not depend on the batch size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from cryptoffload.crypto.ckks.gpu.arith import Arith
from cryptoffload.crypto.ckks.gpu.convplan import ConvJob
from cryptoffload.crypto.ckks.gpu.kernelset import Array, Index, KeyWords
from cryptoffload.crypto.ckks.gpu.ring import RnsRing


@dataclass(frozen=True)
class Basis:
    """The decomposition a key switch uses: the data rows of each digit, the rows of the special
    modulus, and where the key holds each row (the data rows of the level, then the special
    rows; ``None``: at the same row indices, a key over every row). The ring's own basis
    (:meth:`main`) serves every key of the key set; the sparse-secret encapsulation
    (:mod:`.sparse`) switches at level 0 with digits of one prime and part of ``P``, under a key
    that holds only those rows."""

    digits: tuple[tuple[int, ...], ...]
    special: tuple[int, ...]
    key_rows: tuple[int, ...] | None = None

    @classmethod
    def main(cls, ring: RnsRing, level: int) -> "Basis":
        return cls(tuple(ring.level_digits(level)), tuple(int(r) for r in ring.special_rows))

    def qp_rows(self, ring: RnsRing, level: int) -> np.ndarray:
        """The rows of an extended polynomial: the level's data rows, then the special rows."""
        return np.concatenate([ring.data_rows(level), np.asarray(self.special, dtype=np.int64)])

    def key_row_table(self, ring: RnsRing, level: int) -> np.ndarray:
        return self.qp_rows(ring, level) if self.key_rows is None else np.asarray(self.key_rows, dtype=np.int64)

    def p_product(self, ring: RnsRing) -> int:
        return math.prod(ring.primes[r] for r in self.special)


def decompose(ar: Arith, buf: Array, starts: Sequence[int], level: int, basis: Basis | None = None) -> Array:
    """Digits of the polynomials starting at rows ``starts`` of ``buf`` (NTT form, each the
    level's data rows): ``(B, G, R + alpha, N)`` in NTT form over the basis' rows (the ring's
    own, :meth:`Basis.main`, by default)."""
    ring = ar.ring
    basis = basis or Basis.main(ring, level)
    data = ring.data_rows(level)
    r_count = len(data)
    qp = basis.qp_rows(ring, level)
    digits = basis.digits
    starts = [int(s) for s in starts]
    offsets = np.concatenate([np.arange(s, s + r_count) for s in starts])
    coeff = ar.xp.empty_like(buf)
    ar.transform(coeff, offsets, np.tile(data, len(starts)), True, src=buf)
    out = ar.xp.empty((len(starts), len(digits), len(qp), ring.n), dtype=ar.xp.uint64)

    def jobs() -> list[ConvJob]:
        return [ConvJob(s + rows[0], rows, (b * len(digits) + g) * len(qp), tuple(range(len(qp))),
                        tuple(int(r) for r in qp)) for b, s in enumerate(starts) for g, rows in enumerate(digits)]

    ar.convert(coeff, ar.conv_plan(("modup", level, tuple(starts), buf.shape, basis), jobs), out)
    count = out.shape[0] * out.shape[1] * len(qp)
    ar.transform(out, np.arange(count), np.tile(qp, count // len(qp)), False)
    return out


def inner(ar: Arith, digits: Array, keys: KeyWords, perms: Index, items: np.ndarray, level: int,
          basis: Basis | None = None) -> Array:
    """``(K, 2, R + alpha, N)``: item ``(b, key, perm)`` is digit set ``b`` (through permutation
    ``perm`` of ``perms``, -1: none) times ``keys[key]``."""
    basis = basis or Basis.main(ar.ring, level)
    return ar.ks_items(digits, keys, perms, items, basis.qp_rows(ar.ring, level), basis.key_row_table(ar.ring, level))


def mod_down(ar: Arith, acc: Array, level: int, base: Array | None = None,
             bases: Sequence[tuple[int, int]] | None = None, perms: Index | None = None, basis: Basis | None = None) -> Array:
    """Divide ``acc`` ``(..., R + alpha, N)`` (contiguous, NTT form over the level's rows and
    ``P``'s -- the basis' special rows; they are overwritten) by ``P``: ``(..., R, N)``.
    ``bases``, one per polynomial of ``acc`` in order: (element offset in ``base`` of ``R`` rows
    to add, permutation index), ``(-1, -1)`` for none."""
    ring = ar.ring
    special = (basis or Basis.main(ring, level)).special
    rows = ring.data_rows(level)
    r_count = len(rows)
    qp = r_count + len(special)
    lead = acc.shape[:-2]
    parts = int(np.prod(lead)) if lead else 1
    offsets = np.concatenate([np.arange(p * qp + r_count, (p + 1) * qp) for p in range(parts)])
    ar.transform(acc, offsets, np.tile(np.asarray(special, dtype=np.int64), parts), True)
    conv = ar.xp.empty((parts, r_count, ring.n), dtype=ar.xp.uint64)

    def jobs() -> list[ConvJob]:
        return [ConvJob(p * qp + r_count, special, p * r_count, tuple(range(r_count)), tuple(int(r) for r in rows))
                for p in range(parts)]

    ar.convert(acc, ar.conv_plan(("moddown", level, parts, special), jobs), conv)
    ar.transform(conv, np.arange(parts * r_count), np.tile(rows, parts), False)
    pinv, pinv_sh = ar.const(("pinv", level, special),
                             lambda: ring.inverse_of(math.prod(ring.primes[r] for r in special), rows))
    items = _combine_items(ring.n, qp, parts, bases)
    out = ar.combine(acc, conv, base, perms if perms is not None else _no_perm(ar), items, rows, pinv, pinv_sh)
    return out.reshape(lead + (r_count, ring.n))


def _combine_items(n: int, stride_rows: int, parts: int, bases: Sequence[tuple[int, int]] | None) -> np.ndarray:
    items = np.full((parts, 3), -1, dtype=np.int64)
    items[:, 0] = np.arange(parts) * stride_rows * n
    if bases is not None:
        items[:, 1:] = np.asarray(bases, dtype=np.int64).reshape(parts, 2)
    return items


def _no_perm(ar: Arith) -> Index:
    return ar.table(np.zeros(1, dtype=np.int64))


def switch(ar: Arith, buf: Array, starts: Sequence[int], key_items: Sequence[tuple[int, int, int]], keys: KeyWords,
           perms: Index, level: int, bases: Sequence[tuple[int, int]] | None = None,
           basis: Basis | None = None) -> Array:
    """The whole key switch of the polynomials at ``starts`` of ``buf``: ``key_items`` are
    ``(which start, key index, permutation index)``; ``bases`` as in :func:`mod_down`, offsets
    into ``buf``; ``basis`` the decomposition (the ring's own by default). ``(K, 2, R, N)``."""
    digits = decompose(ar, buf, starts, level, basis)
    acc = inner(ar, digits, keys, perms, np.asarray(key_items, dtype=np.int64).reshape(-1, 3), level, basis)
    return mod_down(ar, acc, level, buf, bases, perms, basis)

