"""A pure-Python Paillier (g = n + 1, DJN randomness) for the GPU tests: keys, encryption and
decryption from Python's ``pow`` alone.

Why not the package's keys: the GPU tests must collect and run where only numpy and CuPy are
installed (the lent GPU machine has no gmpy2 and no cffi), and a reference written from the
textbook formulas is independent of the CPU code the GPU is also compared with (where that code
is present). Test keys only: the primes come from ``secrets`` and a Miller-Rabin test, sizes are
study sizes.
"""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass
from functools import lru_cache

from cryptoffload.crypto.paillier import PublicKey

_SMALL_PRIMES = [p for p in range(3, 1000) if all(p % d for d in range(2, int(p ** 0.5) + 1))]


def is_probable_prime(n: int, rounds: int = 40) -> bool:
    """Miller-Rabin with ``rounds`` random bases (error below 4^-rounds)."""
    if n < 2:
        return False
    for p in _SMALL_PRIMES:
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for _ in range(rounds):
        x = pow(secrets.randbelow(n - 3) + 2, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def random_prime(bits: int) -> int:
    """A prime = 3 mod 4 with its two top bits set (as the package's key generation draws)."""
    while True:
        cand = secrets.randbits(bits) | (3 << (bits - 2)) | 3
        if is_probable_prime(cand):
            return cand


@dataclass(frozen=True, repr=False)
class RefPrivateKey:
    """What the GPU decryptor reads of a private key: the factors (p < q) and the public key."""

    p: int
    q: int
    public_key: PublicKey

    def decrypt(self, c: int) -> int:
        """Textbook decryption: L(c^lambda mod n^2) lambda^-1 mod n."""
        n, n2 = self.public_key.n, self.public_key.nsquare
        lam = (self.p - 1) * (self.q - 1)
        return (pow(c, lam, n2) - 1) // n * pow(lam, -1, n) % n

    def decrypt_many(self, cts: list[int]) -> list[int]:
        return [self.decrypt(c) for c in cts]


def encrypt(pk: PublicKey, m: int, a: int) -> int:
    """DJN encryption with exponent ``a``: (1 + m n) h_s^a mod n^2."""
    return (1 + m * pk.n) * pow(pk.hs, a, pk.nsquare) % pk.nsquare


def _fresh_keypair(bits: int) -> tuple[PublicKey, RefPrivateKey]:
    while True:
        p, q = sorted((random_prime(bits // 2), random_prime(bits // 2)))
        if p != q:
            break
    n = p * q
    while True:
        x = secrets.randbelow(n - 2) + 2
        if math.gcd(x, n) == 1:
            break
    pk = PublicKey(n, pow((-x * x) % n, n, n * n))
    return pk, RefPrivateKey(p, q, pk)


@lru_cache(maxsize=None)
def keypair(bits: int) -> tuple[PublicKey, RefPrivateKey]:
    """One test key pair of ``bits`` bits per process (generated once, on first use)."""
    return _fresh_keypair(bits)
