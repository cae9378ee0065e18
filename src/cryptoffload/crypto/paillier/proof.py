"""Proofs of correct decryption: anyone holding the public key checks a claimed plaintext.

Why: a party holding the private key (the ridge protocol's CSP) answers with plaintexts, or
with values computed from them; without a proof its answer must be taken on trust, and one
flipped bit or one lie goes through. With g = 1 + n, every unit c modulo n^2 is
``c = (1 + n)^m rho^n mod n^2`` for exactly one m in [0, n) and one rho in Z_n^* (DJN's
``h_s^a = (h^a)^n`` is of that form). So m is the decryption of c exactly when
``c (1 + n)^-m`` is an n-th power modulo n^2, and the proof is its n-th root ``r = rho mod n``
(Damgard and Jurik, "A Generalization, a Simplification and Some Applications of Paillier's
Probabilistic Public-Key System", PKC 2001, section 5.2; Joye's "verifiable decryption" on
crypto.stackexchange question 46736):

* **prove** (private key): ``(1 + n)^-m = 1 (mod n)``, so ``r^n = c (mod n)`` and
  ``r = (c mod n)^(n^-1 mod lambda) mod n`` -- x -> x^n permutes Z_n^* because
  gcd(n, lambda) = 1 for primes of equal size, and ``r^n mod n^2`` depends on r mod n only
  (``(r + k n)^n = r^n mod n^2``). The root depends on c alone, not on the claimed m; it is
  computed per prime (CRT) with constant-time exponentiations.
* **verify** (public key): ``0 < r < n`` and ``r^n (1 + m n) = c (mod n^2)``, since
  ``(1 + n)^m = 1 + m n (mod n^2)``: one exponentiation by n.

Soundness is perfect, not computational: Z_{n^2}^* is Z_n x Z_n^* with 1 + n generating the
first factor, n-th powers have a zero first component, so for m' != m the value
``c (1 + n)^-m' = rho^n (1 + n)^(m - m')`` has no n-th root at all -- no prover, however
powerful, can make a wrong plaintext pass.

What the proof reveals: r, the ciphertext's randomness modulo n. With c and r anyone computes
m, so give a proof only to a party that may know m. It is not zero knowledge: a verifier that
knows how c's randomness relates to another ciphertext's (c = c0 * Enc(mask; s) with s its
own) gets the root of c0, hence c0's plaintext. A caller must give roots only where that
cannot happen (docs/apps/ridge.md lists where the ridge protocol does); the zero-knowledge
alternative is the sigma protocol of the same section (two exponentiations more on each
side).
"""

from __future__ import annotations

import math
from typing import Sequence

from cryptoffload.crypto.paillier.errors import InvalidKeyError
from cryptoffload.crypto.paillier.gmp import gmpy2
from cryptoffload.crypto.paillier.keys import PrivateKey
from cryptoffload.crypto.paillier.public_key import PublicKey


def _root_exponents(sk: PrivateKey) -> tuple[int, int]:
    """n^-1 modulo p - 1 and q - 1 (what lambda's CRT halves need). An extended gcd over the
    secret p - 1: variable time, once per call of :func:`decryption_roots`."""
    n = sk.public_key.n
    try:
        return int(gmpy2.invert(n, sk.p - 1)), int(gmpy2.invert(n, sk.q - 1))
    except ZeroDivisionError:  # only for primes of unequal size: q | p - 1
        raise InvalidKeyError("gcd(n, lambda) != 1: this key's ciphertexts have no unique n-th roots") from None


def decryption_roots(sk: PrivateKey, ciphertexts: Sequence[int]) -> list[int]:
    """For each ciphertext c (or any integer congruent to it modulo n: the root depends on
    c mod n only), the n-th root r of ``c (1 + n)^-Dec(c)`` modulo n -- the proof that goes
    with its decryption. A c that is not a unit modulo n is refused (ValueError): it is no
    ciphertext."""
    n, p, q = sk.public_key.n, sk.p, sk.q
    ep, eq = _root_exponents(sk)
    q_inv = int(gmpy2.powmod_sec(q % p, p - 2, p))   # Fermat, constant time
    out = []
    for c in ciphertexts:
        if math.gcd(int(c), n) != 1:
            raise ValueError("not a ciphertext: not a unit modulo n")
        rp = int(gmpy2.powmod_sec(int(c) % p, ep, p))
        rq = int(gmpy2.powmod_sec(int(c) % q, eq, q))
        out.append(rq + q * ((rp - rq) * q_inv % p))
    return out


def decryption_root(sk: PrivateKey, ciphertext: int) -> int:
    """:func:`decryption_roots` of one ciphertext."""
    return decryption_roots(sk, [ciphertext])[0]


def verify_decryption(pk: PublicKey, ciphertext: int, plaintext: int, root: int) -> bool:
    """True exactly when ``plaintext`` is the decryption of ``ciphertext`` under ``pk`` and
    ``root`` proves it: ``0 < c < n^2``, ``0 <= m < n``, ``0 < r < n`` a unit and
    ``r^n (1 + m n) = c (mod n^2)``. Never raises for integers; anything else is False."""
    n, n2 = pk.n, pk.nsquare
    for v in (ciphertext, plaintext, root):
        if isinstance(v, bool) or not isinstance(v, int):
            return False
    if not (0 < ciphertext < n2 and 0 <= plaintext < n and 0 < root < n) or math.gcd(root, n) != 1:
        return False  # a root that is no unit would make a non-unit c, which is no ciphertext, pass
    return int(gmpy2.powmod(root, n, n2)) * (1 + plaintext * n) % n2 == ciphertext


def verify_decryptions(pk: PublicKey, ciphertexts: Sequence[int], plaintexts: Sequence[int],
                       roots: Sequence[int]) -> list[int]:
    """Indices whose proof fails (:func:`verify_decryption`); empty when all hold. Lists of
    different lengths fail at every index past the shortest."""
    count = max(len(ciphertexts), len(plaintexts), len(roots))
    short = min(len(ciphertexts), len(plaintexts), len(roots))
    bad = [i for i in range(short) if not verify_decryption(pk, ciphertexts[i], plaintexts[i], roots[i])]
    return bad + list(range(short, count))
