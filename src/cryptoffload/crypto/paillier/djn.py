"""Paillier's arithmetic on bare integers, written once: the DJN encryption formula, the
plaintext range check and a random unit.

Why integers and not key objects: the engines' batches carry (n, h_s) and plaintexts as plain
integers (cheap to send to a worker process), while :class:`~.keys.PublicKey` and the gmpy2
reference path of :class:`~.encryptor.Encryptor` hold keys; all three must compute and refuse
exactly the same things, so they call these functions.
"""

from __future__ import annotations

import math
import secrets

from cryptoffload.crypto.paillier.errors import PlaintextRangeError
from cryptoffload.crypto.paillier.gmp import gmpy2


def encrypt(m: int, a: int, n: int, hs: int, nsquare: int) -> int:
    """DJN encryption, the reference every faster backend is tested against:
    (1 + m n) h_s^a mod n^2 (g = n + 1, so g^m = 1 + m n mod n^2)."""
    return int((1 + m * n) * gmpy2.powmod(hs, a, nsquare) % nsquare)


def check_plaintext(m: object, n: int) -> int:
    """``m`` itself when it is an int in [0, n); a :class:`PlaintextRangeError` otherwise."""
    if isinstance(m, bool) or not isinstance(m, int):
        raise PlaintextRangeError(f"a plaintext must be an int, got {type(m).__name__}")
    if not 0 <= m < n:
        raise PlaintextRangeError(
            f"plaintext out of range: must be in [0, n) for this {n.bit_length()}-bit key "
            "(encode negative numbers with encode_signed)")
    return m


def random_unit(n: int) -> int:
    """A uniformly random r in [1, n) with gcd(r, n) = 1: textbook Paillier's randomness."""
    while True:
        r = secrets.randbelow(n - 1) + 1
        if math.gcd(r, n) == 1:
            return r
