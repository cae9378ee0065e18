"""Hybrid key switching (Han and Ki, "Better Bootstrapping for Approximate Homomorphic
Encryption", CT-RSA 2020): digit decomposition over the data primes, extension to the special
modulus ``P``, an inner product with the key, and division by ``P``.

A key switching key from ``s'`` to ``s`` holds, per digit ``g`` (a group of data rows whose
modulus ``Q_g`` is at most ``P``, :meth:`~.chain.PrimeChain.digits`), an RLWE sample over
all rows ``(b_g, a_g)`` with ``b_g = -a_g s + e_g + P s'`` on the rows of digit ``g`` and
``-a_g s + e_g`` elsewhere (the gadget ``P * (Q/Q_g) * [(Q/Q_g)^-1]_Q_g`` is ``P`` on those rows
and 0 on the others). Switching ``d`` (the part of a ciphertext multiplied by ``s'``):

1. :func:`decompose` -- per digit, the rows of ``d`` in the digit, extended to every other row
   of the level and of ``P`` (ModUp) by base conversion in the coefficient domain; the digit's
   own rows are reused in NTT form, the extended ones are transformed. The extension is the
   *centred* representative of ``d mod Q_g`` (the exact conversion of :func:`~.arith_ref.
   base_convert`), not the fast conversion's ``[0, S Q_g)`` one: a digit with a non-zero mean
   turns the key's error into a random walk over the coefficients, whose energy sits in the
   slots next to ``X = 1`` -- measured at N = 16384, it made a rotation's largest slot error
   80x its standard deviation (SEAL's rotations show the same tail); centred digits remove
   it and halve the digits' size;
2. :func:`inner` -- ``sum_g digit_g * key_g`` row by row (one kernel);
3. :func:`mod_down` -- the ``P`` rows converted back to the level's primes *exactly* (centred,
   without the fast conversion's overflow, which would bias every coefficient by up to
   ``alpha`` and concentrate in a few slots) and subtracted, times ``P^-1``: ``round(x / P)``.

Hoisting (Halevi and Shoup, "Faster Homomorphic Linear Transformations in HElib", CRYPTO
2018): the automorphism commutes with the decomposition up to a multiple of ``Q_g`` that the
conversion tolerates anyway, so :func:`decompose` runs once for many rotations of one
ciphertext and each rotation permutes the decomposed digits (a cheap index map in the NTT
domain) before its own inner product and ``mod_down``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cryptoffload.crypto.ckks.gpu.arith import Arith


def decompose(ar: Arith, d: Any, level: int) -> Any:
    """Digits of ``d`` (NTT form, the level's data rows): ``(G, R + alpha, N)`` in NTT form over
    :meth:`~.ring.RnsRing.qp_rows`."""
    ring = ar.ring
    xp = ar.xp
    qp = ring.qp_rows(level)
    digits = ring.level_digits(level)
    coeff = ar.intt(d.copy(), ring.data_rows(level))
    out = xp.empty((len(digits), len(qp), ring.n), dtype=xp.uint64)
    for g, rows in enumerate(digits):
        others = tuple(int(r) for r in qp if r not in rows)
        ext = ar.ntt(ar.base_convert(coeff[list(rows)], rows, others, exact=True), np.array(others))
        out[g, list(rows)] = d[list(rows)]                      # a data row's position is its index
        out[g, [i for i, r in enumerate(qp) if r not in rows]] = ext
    return out


def inner(ar: Arith, digits: Any, key: Any, level: int) -> Any:
    """``(2, R + alpha, N)``: the digits times the key (its rows of this level and ``P``)."""
    qp = ar.ring.qp_rows(level)
    return ar.ks_inner(digits, key, qp, qp)


def mod_down(ar: Arith, acc: Any, level: int) -> Any:
    """Divide ``(..., R + alpha, N)`` (NTT form over the level's rows and ``P``'s) by ``P``:
    ``(..., R, N)`` over the level's rows."""
    ring = ar.ring
    xp = ar.xp
    rows = ring.data_rows(level)
    limbs = len(rows)
    special = tuple(int(r) for r in ring.special_rows)
    dst = tuple(int(r) for r in rows)
    pinv, pinv_sh = ar.const(("pinv", level), lambda: ring.inverse_of(ring.p_product, rows))
    lead = acc.shape[:-2]
    flat = acc.reshape((-1,) + acc.shape[-2:])
    out = xp.empty((flat.shape[0], limbs, ring.n), dtype=xp.uint64)
    for b in range(flat.shape[0]):
        xp_coeff = ar.intt(flat[b, limbs:].copy(), ring.special_rows)
        conv = ar.ntt(ar.base_convert(xp_coeff, special, dst, exact=True), rows)
        out[b] = ar.mul_const(ar.sub(flat[b, :limbs], conv, rows), pinv, pinv_sh, rows)
    return out.reshape(lead + (limbs, ring.n))


def switch(ar: Arith, d: Any, key: Any, level: int) -> Any:
    """Key-switch ``d`` with ``key``: ``(2, R, N)``, to add to ``(c0, 0)``."""
    return mod_down(ar, inner(ar, decompose(ar, d, level), key, level), level)
