"""Sums of plaintext products of one ciphertext's rotations, with one ModUp and one ModDown per
sum (double hoisting: Bossuat, Mouchet, Troncoso-Pastoriza and Hubaux, EUROCRYPT 2021; OpenFHE's
``EvalFastRotationExt`` + ``EvalMultExt`` in its CoeffToSlot/SlotToCoeff).

Why: a bootstrap's linear transform computes, per giant step ``i``,
``sum_j p_ij * rot(x, r_j)``. Rotating each ``rot(x, r_j)`` back to the ciphertext modulus costs a
ModDown (an inverse NTT of ``P``'s rows, a base conversion to every row of the level, the NTTs
back) -- about six times the key's inner product, so with 16 baby steps the ModDowns are most of
the transform. Hoisting once shares the decomposition of ``x``; hoisting twice keeps every
rotation's inner product in the extended basis ``Q P``, multiplies it there by a plaintext that
holds ``P``'s residues too, sums, and divides by ``P`` once per giant step:

    sum_j p_j rot(x, r_j) = (sum_j p_j sigma_j(c_0), 0) + ModDown( sum_j p_j <D(c_1)^sigma_j, k_j> )

(``sigma_j`` the Galois automorphism of ``r_j``, ``D`` the digit decomposition, ``k_j`` its key;
a baby step of 0 adds ``p_0 x`` as it is). ModDown rounds the sum once instead of each term: the
same result up to the rounding of one ModDown instead of several.

The plaintexts are made for it (:func:`extended_plaintext`): their residues over the level's
rows and ``P``'s, as 32-bit words (``dot32_k``), so a bootstrap's ~300 diagonals take half the
memory of ordinary plaintexts. Everything is a launch the GPU already has: one decomposition
(``decompose``), one batched inner product (``ks_items_k``), the products and sums (``dot32_k``,
``dot_k``, 16 terms a launch), one batched ModDown for every giant step (``combine_k`` adds the
``c_0`` part).
"""

from __future__ import annotations

from typing import Hashable, Sequence

import numpy as np

from cryptoffload.crypto.ckks.gpu import keyswitch
from cryptoffload.crypto.ckks.gpu.encoder import to_residues
from cryptoffload.crypto.ckks.gpu.kernelset import Array
from cryptoffload.crypto.ckks.gpu.keystore import KEY_DTYPE, EvalKeys
from cryptoffload.crypto.ckks.gpu.scheme import RawCt, RawPt, RnsScheme

__all__ = ["extended_plaintext", "is_extended", "product_sums"]

#: plaintext words: residues are below 2^31 (chain.py), so 32 bits hold them
PLAIN_DTYPE = KEY_DTYPE


def extended_plaintext(scheme: RnsScheme, coeffs: np.ndarray, level: int, scale: float) -> RawPt:
    """A plaintext of rounded ``coeffs`` over the level's rows *and* ``P``'s (``(R + alpha, N)``
    32-bit words, the level's rows first: an ordinary product reads only those)."""
    rows = scheme.ring.qp_rows(level)
    res = to_residues(coeffs, scheme.ring.q[rows].tolist())
    return RawPt(scheme.ar.ntt(scheme.ar.asarray(res), rows).astype(PLAIN_DTYPE), level, scale)


def is_extended(scheme: RnsScheme, pt: RawPt) -> bool:
    return pt.data.shape[0] == len(scheme.ring.qp_rows(pt.level))


def _c0_terms(scheme: RnsScheme, permuted: dict[int, Array], level: int, group: Sequence[tuple[int, RawPt]],
              whole: RawCt, zero: set[int]) -> Array:
    """``(sum_j p_j sigma_j(c_0), p_0 c_1)`` of one giant step: the part of the sum outside ModDown
    (``permuted[j]``: ``sigma_j(c_0)``, made once for every giant step)."""
    ar, rows = scheme.ar, scheme.rows(level)
    first = ar.dot([permuted[j][None] for j, _ in group], [pt.data for _, pt in group], rows)[0]
    at_zero = [pt for j, pt in group if j in zero]
    second = ar.dot([whole.data[1:2]], [at_zero[0].data], rows)[0] if at_zero else scheme._zeros(level)
    return scheme.xp.stack([first, second])


def product_sums(scheme: RnsScheme, ct: RawCt, elts_keys: Sequence[tuple[int, Hashable] | None],
                 groups: Sequence[Sequence[tuple[int, RawPt]]], keys: EvalKeys) -> list[RawCt]:
    """``[sum_(j, p) in group  p * rot_j(ct) for group in groups]`` (unrescaled, scale
    ``ct.scale * p.scale``): ``elts_keys[j]`` is the (Galois element, key name) of baby step
    ``j``, ``None`` for a step of 0; every plaintext extended (:func:`extended_plaintext`)."""
    ar, ring = scheme.ar, scheme.ring
    level, r_count = ct.level, scheme.ring.chain.limbs(ct.level)
    data = ar.contig(ct.data)
    qp = keyswitch.Basis.main(ring, level).qp_rows(ring, level)
    moving = {j: ek for j, ek in enumerate(elts_keys) if ek is not None}
    inner = None
    if moving:
        digits = keyswitch.decompose(ar, data, [r_count], level)
        items = [(0, keys.index(name), keys.perm_index(elt)) for elt, name in moving.values()]
        inner = keyswitch.inner(ar, digits, keys.stack, keys.perms, np.asarray(items, dtype=np.int64), level)
    slot = {j: k for k, j in enumerate(moving)}
    used = {j for group in groups for j, _ in group}
    permuted = {j: ar.permute(data[0], moving[j][0]) if j in moving else data[0] for j in used}
    zero = {j for j in used if j not in moving}
    accs, bases = [], []
    for group in groups:
        ext = [(inner[slot[j]], pt.data) for j, pt in group if j in slot] if inner is not None else []
        accs.append(ar.dot([e for e, _ in ext], [p for _, p in ext], qp) if ext else
                    scheme.xp.zeros((2, len(qp), ring.n), dtype=scheme.xp.uint64))
        bases.append(_c0_terms(scheme, permuted, level, group, ct, zero))
    acc = ar.gather(accs)
    base = ar.gather(bases)
    offsets = [(((2 * g + c) * r_count) * ring.n, -1) for g in range(len(groups)) for c in (0, 1)]
    out = keyswitch.mod_down(ar, acc, level, base, offsets)
    return [RawCt(out[g], level, ct.scale * groups[g][0][1].scale) for g in range(len(groups))]
