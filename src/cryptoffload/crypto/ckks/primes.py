"""The RNS prime chain: SEAL's ``CoeffModulus::Create``, reproduced so that backends without
SEAL (the emulator, the recording backend, a GPU backend) pick the very same primes."""

from __future__ import annotations

from typing import Sequence

from cryptoffload.errors import ConfigError

__all__ = ["coeff_modulus_primes", "is_prime"]

_MR_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)  # deterministic below 3.3e24


def is_prime(n: int) -> bool:
    if n < 2:
        return False
    for p in _MR_BASES:
        if n % p == 0:
            return n == p
    d, r = n - 1, 0
    while d % 2 == 0:
        d //= 2
        r += 1
    for a in _MR_BASES:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def coeff_modulus_primes(poly_modulus_degree: int, bits: Sequence[int]) -> tuple[int, ...]:
    """The primes SEAL's ``CoeffModulus.Create(N, bits)`` picks, in the same order.

    SEAL takes, per bit size, the largest primes ``= 1 mod 2N`` below ``2**bits`` (descending)
    and hands them out from the *smallest* of those found. Why reproduce it: the emulator's
    rescale must divide the scale by the same prime as SEAL's so scales agree exactly.
    """
    factor = 2 * poly_modulus_degree
    counts: dict[int, int] = {}
    for b in bits:
        counts[b] = counts.get(b, 0) + 1
    table: dict[int, list[int]] = {}
    for b, count in counts.items():
        found: list[int] = []
        value = ((1 << b) - 1) // factor * factor + 1
        lower = 1 << (b - 1)
        while len(found) < count and value > lower:
            if is_prime(value):
                found.append(value)
            value -= factor
        if len(found) < count:
            raise ConfigError(f"not enough {b}-bit primes = 1 mod {factor} for N = {poly_modulus_degree}")
        table[b] = found
    return tuple(table[b].pop() for b in bits)
