"""Sparse-secret encapsulation (Bossuat, Troncoso-Pastoriza and Hubaux, "Bootstrapping for
Approximate Homomorphic Encryption with Negligible Failure-Probability by Using Sparse-Secret
Encapsulation", ACNS 2022): the main secret stays dense, a sparse one serves the mod-raise only.

Why. Mod-raise (:mod:`.modraise`) leaves ``q_0 I`` with ``|I| <= (h + 1) / 2`` for a secret of
Hamming weight ``h``, and EvalMod's cost grows with that range: a uniform ternary secret at
N = 2^16 has ``h ~ 43,700`` (OpenFHE's UNIFORM_TERNARY bootstrapping assumes ``|I| <= 512``, a
statistical bound, and pays for it in depth). A sparse *main* secret (OpenFHE's SPARSE_TERNARY:
``h = 192``) shrinks the range but weakens every key and ciphertext of the key set, and no
standard table certifies it. The encapsulation keeps the main secret ``s`` uniform ternary (the
security table applies, :data:`~cryptoffload.crypto.ckks.CKKS_SECURITY_BITS`) and draws an
*ephemeral* secret ``s'`` of weight ``h = 32`` (OpenFHE's SPARSE_ENCAPSULATED and Lattigo's
default), used under two keys only:

* ``s -> s'`` (to_sparse), at level 0: an RLWE sample under ``s'`` whose modulus is only ``q_0``
  times part of ``P`` -- a small modulus, where a weight-32 secret is secure (Lattigo: over 128
  bits for a key modulus up to 121 bits at N = 2^16, :data:`SECURE_KEY_BITS`); it is kept
  over those rows only (a compact key);
* ``s' -> s`` (sparse_to_dense), at the top level: an ordinary key-switching key, an RLWE sample
  under the *dense* ``s`` over the whole chain, so its security is the key set's.

Mod-raise is then: switch to ``s'`` at level 0, raise (``|I| <= 16``: a deterministic bound, so
no failure probability), switch back to ``s`` at the raised level. The ephemeral secret is
wiped right after its two keys exist. Its digits at level 0 are single primes, and ``P``'s part
is the fewest special primes whose product exceeds each of them (so the switch adds noise of a
fresh key switch, a few bits, against a message scaled by ``q_0``'s size).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cryptoffload.crypto.ckks.bootstrap.plan import EPHEMERAL_WEIGHT
from cryptoffload.crypto.ckks.gpu import keyswitch
from cryptoffload.crypto.ckks.gpu.keyswitch import Basis
from cryptoffload.crypto.ckks.gpu.kernelset import Array
from cryptoffload.crypto.ckks.gpu.keystore import KEY_DTYPE, EvalKeys, KeyArray
from cryptoffload.crypto.ckks.gpu.ring import RnsRing
from cryptoffload.crypto.ckks.gpu.scheme import RawCt, RnsScheme, SecretKey, wipe

#: largest modulus (bits) of the to_sparse key for which a weight-32 secret keeps 128-bit
#: security at N >= 2^16 (Lattigo, ``circuits/ckks/bootstrapping``: "32, which ensure over
#: 128-bit security for an evaluation key of modulus 121 bits")
SECURE_KEY_BITS = 121
SECURE_MIN_N = 65536
__all__ = ["EPHEMERAL_WEIGHT", "SECURE_KEY_BITS", "SECURE_MIN_N", "SPARSE_TO_DENSE", "Encapsulation",
           "encapsulation_basis", "gen_encapsulation", "is_secure", "key_modulus_bits", "to_dense", "to_sparse"]
#: the key-store name of the s' -> s key
SPARSE_TO_DENSE = "sparse_to_dense"


@dataclass(eq=False, repr=False)
class Encapsulation:
    """The to_sparse key of one key set (``(G0, 2, R0 + a0, N)`` over :attr:`basis`' rows) and
    the ephemeral secret's weight. Public material: it goes into public contexts."""

    weight: int
    basis: Basis
    to_sparse: KeyArray

    def __repr__(self) -> str:
        return f"<Encapsulation weight {self.weight}, {len(self.basis.digits)} digits>"


def encapsulation_basis(ring: RnsRing) -> Basis:
    """Level 0's primes as digits of one prime each; the fewest special primes whose product
    exceeds the largest of them; the compact key holds those rows in that order."""
    low = [int(r) for r in ring.data_rows(0)]
    largest = max(ring.primes[r] for r in low)
    special: list[int] = []
    for r in ring.special_rows:
        special.append(int(r))
        if math.prod(ring.primes[s] for s in special) > largest:
            break
    return Basis(tuple((r,) for r in low), tuple(special), tuple(range(len(low) + len(special))))


def key_modulus_bits(ring: RnsRing, basis: Basis) -> int:
    """Bits of the to_sparse key's modulus (``q_0`` times the basis' part of ``P``)."""
    return math.prod(ring.primes[r] for r in list(ring.data_rows(0)) + list(basis.special)).bit_length()


def is_secure(ring: RnsRing, basis: Basis, weight: int) -> bool:
    """Whether the to_sparse key is within the bound we can cite (:data:`SECURE_KEY_BITS`)."""
    return ring.n >= SECURE_MIN_N and weight >= EPHEMERAL_WEIGHT and key_modulus_bits(ring, basis) <= SECURE_KEY_BITS


def _to_sparse_key(scheme: RnsScheme, sk: SecretKey, sparse_small: np.ndarray, basis: Basis) -> KeyArray:
    """``(G0, 2, R0 + a0, N)``: per digit ``g`` (one level-0 row), ``(-a s' + e + P0 s, a)`` on
    that row and ``(-a s' + e, a)`` elsewhere, over the basis' rows only."""
    ar, ring, sampler = scheme.ar, scheme.ring, scheme.sampler
    rows = np.concatenate([ring.data_rows(0), np.asarray(basis.special, dtype=np.int64)])
    p_part = basis.p_product(ring)
    s_new = scheme.small_to_ntt(sparse_small, rows)
    s_old = ar.contig(sk.ntt[rows])
    out = []
    try:
        for pos, (r,) in enumerate(basis.digits):
            a = ar.asarray(sampler.uniform([ring.primes[int(k)] for k in rows], ring.n))
            e = scheme.small_to_ntt(sampler.gaussian(ring.n), rows)
            b = ar.sub(e, ar.mul(a, s_new, rows), rows)
            one = np.array([r])
            c, c_sh = ar.const(("p_part", p_part, r), lambda: ring.constant(p_part, one))
            scaled = ar.mul_const(s_old[pos: pos + 1], c, c_sh, one)
            b[pos: pos + 1] = ar.add(b[pos: pos + 1], scaled, one)
            wipe(scaled)
            out.append(scheme.xp.stack([b, a]))
    finally:
        wipe(s_new)
        wipe(s_old)
    return scheme.xp.stack(out).astype(KEY_DTYPE)


def gen_encapsulation(scheme: RnsScheme, sk: SecretKey, weight: int = EPHEMERAL_WEIGHT
                      ) -> tuple[Encapsulation, Array, SecretKey]:
    """A fresh ephemeral secret of Hamming weight ``weight`` and its two keys: the compact
    to_sparse key (in the :class:`Encapsulation`) and the sparse_to_dense key-switching key
    (``(G, 2, K, N)``, for the key store). The ephemeral secret is returned for tests; the
    backend wipes it at once."""
    basis = encapsulation_basis(scheme.ring)
    small = scheme.sampler.sparse_ternary(scheme.n, weight).astype(np.int8)
    sparse = SecretKey(small, scheme.small_to_ntt(small, np.arange(scheme.ring.rows)))
    try:
        to_sparse = _to_sparse_key(scheme, sk, small, basis)
        back = scheme.gen_switch(sk, sparse.ntt)
    except BaseException:
        sparse.wipe()
        raise
    return Encapsulation(int(weight), basis, to_sparse), back, sparse


def to_sparse(scheme: RnsScheme, ct: RawCt, enc: Encapsulation) -> RawCt:
    """A size-2 ciphertext at level 0 under ``s`` switched to the ephemeral ``s'``."""
    ar = scheme.ar
    data = ar.contig(ct.data)
    r0 = data.shape[1]
    out = keyswitch.switch(ar, data, [r0], [(0, 0, -1)], enc.to_sparse[None], ar.table(np.zeros(1, dtype=np.int64)),
                           0, [(0, -1), (-1, -1)], enc.basis)
    return RawCt(out[0], 0, ct.scale)


def to_dense(scheme: RnsScheme, ct: RawCt, keys: EvalKeys) -> RawCt:
    """A size-2 ciphertext under ``s'`` switched back to ``s`` at its level (the key store's
    sparse_to_dense key)."""
    ar = scheme.ar
    data = ar.contig(ct.data)
    r_count = data.shape[1]
    out = keyswitch.switch(ar, data, [r_count], [(0, keys.index(SPARSE_TO_DENSE), -1)], keys.stack, keys.perms,
                           ct.level, [(0, -1), (-1, -1)])
    return RawCt(out[0], ct.level, ct.scale)
