"""The CSP's answers with their proofs, and the checks the platform and the buyer run on them.

Why: the CSP holds both private keys, so every answer it gives rests on decryptions nobody
else can redo. A faulty or lying CSP (one flipped bit was enough: a third of flipped answers
gave a model near zero) went unnoticed. Each answer now carries what can be proved with the
public keys alone (:mod:`cryptoffload.crypto.paillier.proof`: the n-th root of
``c (1 + n)^-m``, perfectly sound), and the party receiving it checks it before using it:

* **unpack** (CSP -> platform). The CSP decrypts each provider's masked aggregate, splits it
  and re-encrypts the summed fields under the solve key. The kept contributions' plaintexts
  must stay hidden from the platform (it knows the masks: a plaintext, or the root of the
  masked ciphertext it sent, would hand it the provider's sums), so their re-encryption is
  *not* proved -- a CSP that re-encrypts other fields goes undetected here (docs/apps/ridge.md
  says what that leaves). A contribution the CSP **leaves out** comes with the masked
  plaintext that does not split and its decryption proof (:class:`ExclusionProof`); the
  platform checks the proof against the ciphertext it sent and re-runs the split, so the CSP
  cannot leave out an honest provider. What that costs the one left out: the platform learns
  its sums in that one plaintext (it knows their masks) -- sums that left their declared range.
* **solve** (CSP -> buyer). w' is not a decryption but solves the decrypted system, so the
  CSP proves the system's equations instead: per row i, ``Z_i = prod_k Enc(AR)_ik^(w'_k) /
  Enc(c)_i`` encrypts ``(A R w' - c)_i``, which is 0 exactly when w' is right; the proof is
  the n-th root of Z_i (a proof that Z_i decrypts to 0). The buyer, who has Enc(A R), Enc(c)
  from the platform (bound to the CSP's ``system_digest``) and w', recomputes Z_i and checks
  (d^2 exponentiations). When A is invertible modulo n (always for lambda > 0) the equations
  have one solution, so this proves w' itself. The root of a zero encryption reveals nothing
  the buyer can use to decrypt another ciphertext (it is a product of the unknown roots of
  every entry, with the model as exponents). The platform cannot check it: it must not see w'
  (with its R, r that is the model).

A failed check is :class:`CspProofError` and no model is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import gmpy2

from cryptoffload.apps.ridge.powm import products_of_powers
from cryptoffload.crypto.packing import PackingError, PackingLayout
from cryptoffload.crypto.paillier import PrivateKey, PublicKey, decryption_roots, verify_decryption, verify_decryptions
from cryptoffload.errors import CryptoffloadError


class CspProofError(CryptoffloadError):
    """The CSP's answer does not pass its proof: a faulty or lying CSP, detected."""

    def __init__(self, what: str, why: str = "failed its decryption proof") -> None:
        super().__init__(f"the CSP's answer for {what} {why}: refusing; the CSP is faulty or lying")


@dataclass(frozen=True)
class ExclusionProof:
    """Why the CSP left out contribution ``contribution``: its masked plaintext number
    ``plaintext`` decrypts to ``value`` (proved by ``root``), which does not split."""

    contribution: int
    plaintext: int
    value: int
    root: int


@dataclass(frozen=True)
class Unpacked:
    """The CSP's unpack answer: the kept contributions' summed fields under the solve key,
    the positions left out, and one :class:`ExclusionProof` per position left out."""

    fields: list[int]
    excluded: list[int]
    proofs: list[ExclusionProof]


@dataclass(frozen=True)
class Solution:
    """The CSP's solve answer: w' and, per row, the root proving ``(A R w' - c)_i = 0``."""

    w_prime: list[int]
    proof: list[int]


def _splits(layout: PackingLayout, value: int) -> bool:
    try:
        layout.unpack_masked([value])
    except PackingError:
        return False
    return True


def exclusion_proof(sk: PrivateKey, layout: PackingLayout, contribution: int, ciphertexts: Sequence[int],
                    plaintexts: Sequence[int]) -> ExclusionProof:
    """The proof for a contribution that does not split: its first plaintext that does not
    (only that one is revealed), with the root of its ciphertext."""
    for index, value in enumerate(plaintexts):
        if not _splits(layout, value):
            return ExclusionProof(contribution, index, value, decryption_roots(sk, [ciphertexts[index]])[0])
    raise ValueError(f"contribution {contribution} splits: nothing to prove")


def check_exclusions(pk: PublicKey, layout: PackingLayout, masked: Sequence[Sequence[int]], excluded: Sequence[int],
                     proofs: Sequence[ExclusionProof]) -> None:
    """The platform's check of an unpack answer's exclusions: one proof per position left out,
    in order, each a valid decryption proof of a ciphertext the platform sent whose plaintext
    does not split. Raises :class:`CspProofError`."""
    if [p.contribution for p in proofs] != list(excluded):
        raise CspProofError("the unpack", "names contributions it left out without one proof each")
    for p in proofs:
        what = f"leaving out contribution {p.contribution}"
        if not 0 <= p.contribution < len(masked) or not 0 <= p.plaintext < len(masked[p.contribution]):
            raise CspProofError(what, "names a plaintext that was not sent")
        if not verify_decryption(pk, masked[p.contribution][p.plaintext], p.value, p.root):
            raise CspProofError(what)
        if _splits(layout, p.value):
            raise CspProofError(what, "shows a plaintext that splits (no overflow)")


def _row_products(AR: Sequence[Sequence[int]], w_prime: Sequence[int], modulus: int, exp_bits: int,
                  workers: int) -> list[int]:
    """prod_k AR_ik^(w'_k) mod ``modulus`` per row: d products of d powers, constant time in w'
    (:func:`~.powm.products_of_powers`)."""
    rows, _ = products_of_powers([[int(v) % modulus for v in row] for row in AR], [list(w_prime)], modulus,
                                 exp_bits, workers)
    return [row[0] for row in rows]


def solution_proof(sk: PrivateKey, AR: Sequence[Sequence[int]], c: Sequence[int], w_prime: Sequence[int],
                   workers: int = 1) -> list[int]:
    """The CSP's proof for w': per row the n-th root of ``Z_i = prod_k AR_ik^(w'_k) / c_i``.
    A root depends on Z_i mod n only, so Z_i is computed modulo n (a quarter of the work)."""
    n = sk.public_key.n
    products = _row_products(AR, w_prime, n, n.bit_length(), workers)
    return decryption_roots(sk, [int(p * gmpy2.invert(int(ci) % n, n) % n) for p, ci in zip(products, c)])


def verify_solution(pk: PublicKey, AR: Sequence[Sequence[int]], c: Sequence[int], solution: Solution,
                    workers: int = 1) -> None:
    """The buyer's check of w' against the masked system it was computed from: for every row,
    ``proof_i^n = prod_k Enc(AR)_ik^(w'_k) / Enc(c)_i (mod n^2)``, i.e. the row's equation
    holds modulo n. Raises :class:`CspProofError`."""
    d, n, n2 = len(c), pk.n, pk.nsquare
    w, proof = solution.w_prime, solution.proof
    if len(w) != d or len(proof) != d or len(AR) != d or any(len(row) != d for row in AR) \
            or any(isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < n for v in w):
        raise CspProofError("the solve", "is malformed (sizes or ranges)")
    try:
        inverses = [int(gmpy2.invert(ci, n2)) for ci in c]
    except ZeroDivisionError:
        raise CspProofError("the solve", "refers to a system that holds a non-ciphertext") from None
    zs = [p * inv % n2 for p, inv in zip(_row_products(AR, w, n2, n.bit_length(), workers), inverses)]
    bad = verify_decryptions(pk, zs, [0] * d, list(proof))
    if bad:
        raise CspProofError(f"the solve (row {bad[0]} of (A R) w' = b + A r)")
