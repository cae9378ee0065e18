"""Mod-raise, the first step of CKKS bootstrapping: a ciphertext at the last level read modulo
``q_0`` and lifted to the whole chain.

A ciphertext ``(c_0, c_1)`` at level 0 decrypts to ``m = [c_0 + c_1 s]_{q_0}``. Mod-raise takes
the centred representatives of ``c_0`` and ``c_1`` modulo ``q_0`` (the level's prime group: one
word prime or a composite) as integers and reduces them modulo every prime of the target level,
so the raised ciphertext decrypts, modulo the large ``Q_L``, to the integer polynomial

    c_0 + c_1 s = m + q_0 I,   |I| <= (h + 1) / 2,

with ``h`` the secret's Hamming weight (each coefficient of ``c_1 s`` sums ``h`` terms of size at
most ``q_0 / 2``). Bootstrapping then evaluates ``x mod q_0`` homomorphically (CoeffToSlot,
EvalMod, SlotToCoeff) to remove ``q_0 I``; the range of ``I`` is what EvalMod must cover, which is
why the raise is done under a sparse secret (:mod:`.sparse`). The scale is unchanged: the raised
ciphertext's slots are ``(m + q_0 I) / scale``.

Cost, in the launches every backend of this package makes (the GPU needs nothing new): one
inverse NTT of the level-0 rows, one exact base conversion of them to all the target rows
(Halevi, Polyakov and Shoup: the centred value, no overflow -- the fast conversion's ``+ u q_0``
would add to ``I``), one forward NTT of the result.
"""

from __future__ import annotations

import numpy as np

from cryptoffload.crypto.ckks.gpu.convplan import ConvJob
from cryptoffload.crypto.ckks.gpu.scheme import RawCt, RnsScheme


def mod_raise(scheme: RnsScheme, ct: RawCt, level: int) -> RawCt:
    """``ct`` (level 0) lifted to ``level``: the centred residues modulo ``q_0`` of each of its
    polynomials, reduced modulo every data prime of ``level`` (see the module docstring)."""
    if ct.level != 0:
        raise ValueError(f"mod_raise starts from level 0, got level {ct.level}")
    ar, ring = scheme.ar, scheme.ring
    low, rows = ring.data_rows(0), ring.data_rows(level)
    size, r0, r_count, n = ct.size, len(low), len(rows), ring.n
    src = ar.contig(ct.data)
    coeff = ar.xp.empty_like(src)
    ar.transform(coeff, np.arange(size * r0), np.tile(low, size), True, src=src)
    out = ar.xp.empty((size, r_count, n), dtype=ar.xp.uint64)
    source = tuple(int(r) for r in low)
    targets = tuple(int(r) for r in rows)

    def jobs() -> list[ConvJob]:
        return [ConvJob(p * r0, source, p * r_count, tuple(range(r_count)), targets) for p in range(size)]

    ar.convert(coeff, ar.conv_plan(("modraise", level, size), jobs), out)
    ar.transform(out, np.arange(size * r_count), np.tile(rows, size), False)
    return RawCt(out, level, ct.scale)
