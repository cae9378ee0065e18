"""Which machine-word primes realise a :class:`~cryptoffload.crypto.ckks.CkksParams` modulus chain.

Word size: every RNS prime is below ``2**31`` (:data:`WORD_BITS`). Why 31 bits and not ~50-60:

* exactness without 128-bit products: a product of two residues is below ``2**62`` and fits a
  ``uint64`` in NumPy, numba and CUDA alike, so every kernel computes canonical residues with
  plain integer arithmetic (Shoup's precomputed quotients for constants, a float64-estimated
  quotient with one correction for products of two variables), and the GPU and its CPU twin
  agree bit for bit by construction;
* speed on the GPU: 32-bit integer multiplies are native there (64-bit ones are emulated), the
  choice of Cheddar (Jongmin Kim et al., ASPLOS 2026) and of OpenFHE's composite scaling for
  32-bit hardware (Agrawal et al., "High-precision RNS-CKKS on fixed but smaller word-size
  architectures", WAHC 2023).

A logical prime of the parameters (``coeff_mod_bits``: data primes, the last one special) of
``b <= 31`` bits is one physical prime -- *SEAL's* prime for that position
(:func:`~cryptoffload.crypto.ckks.primes.coeff_modulus_primes`), so rescaling divides the scale by
exactly SEAL's prime and the scale bookkeeping of the HE-CNN parameters (30-bit levels) is
bit-identical to SEAL's and the emulator's. A logical prime of ``b > 31`` bits is
``k = ceil(b / 31)`` physical primes of about ``b / k`` bits whose product is as close to
``2**b`` as the primes ``= 1 mod 2N`` allow (composite scaling): a 60-bit base prime is two
30-bit primes, a 40-bit level two 20-bit primes, and rescaling drops the whole group (the
scale is divided by the group's product, which the bookkeeping uses exactly).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from cryptoffload.crypto.ckks.primes import coeff_modulus_primes, is_prime
from cryptoffload.errors import ConfigError

WORD_BITS = 31


@dataclass(frozen=True)
class PrimeChain:
    """Physical primes of a parameter set: ``groups[i]`` realises logical prime ``i`` (the last
    group is the special modulus ``P`` used only by key switching)."""

    poly_modulus_degree: int
    groups: tuple[tuple[int, ...], ...]

    @property
    def data_groups(self) -> tuple[tuple[int, ...], ...]:
        return self.groups[:-1]

    @property
    def data(self) -> tuple[int, ...]:
        """Physical data primes, logical level 0's first."""
        return tuple(p for g in self.data_groups for p in g)

    @property
    def special(self) -> tuple[int, ...]:
        return self.groups[-1]

    @property
    def all(self) -> tuple[int, ...]:
        """Data primes then special primes: the row order of every RNS array."""
        return self.data + self.special

    @property
    def logical(self) -> tuple[int, ...]:
        """The product of each group: what a rescale at that level divides the scale by."""
        return tuple(math.prod(g) for g in self.groups)

    def limbs(self, level: int) -> int:
        """Physical data limbs of a ciphertext at logical ``level``."""
        return sum(len(g) for g in self.data_groups[: level + 1])

    @property
    def total_bits(self) -> int:
        """Bits of ``Q * P``: what the security table bounds."""
        return math.prod(self.all).bit_length()

    def digits(self) -> tuple[tuple[int, ...], ...]:
        """Hybrid key switching's decomposition: consecutive data limbs grouped greedily so that
        each digit's modulus is no larger than ``P`` (the key-switching noise is about
        ``digit modulus / P`` times a fresh error, so no digit may outgrow ``P``; a single
        prime larger than ``P`` is a digit of its own). Entries are limb indices."""
        p_bits = math.prod(self.special).bit_length()
        out: list[list[int]] = []
        prod = 1
        for i, q in enumerate(self.data):
            if out and (prod * q).bit_length() <= p_bits:
                out[-1].append(i)
                prod *= q
            else:
                out.append([i])
                prod = q
        return tuple(tuple(d) for d in out)


def _largest_below(n: int, limit: int, used: set[int]) -> int | None:
    """The largest unused prime ``= 1 mod 2N`` below ``limit`` (and above ``2N``), or None."""
    m = 2 * n
    cand = (limit - 1) // m * m + 1
    if cand >= limit:
        cand -= m
    while cand > m:
        if cand not in used and is_prime(cand):
            return cand
        cand -= m
    return None


def _split(n: int, bits: int, used: set[int]) -> tuple[int, ...]:
    """``ceil(bits / 31)`` unused primes whose product is just below ``2**bits``: each is the
    largest prime below its equal share of the bits still to fill, so the product stays under
    ``2**bits`` (as SEAL's single primes do, which keeps the security accounting exact) and
    close to it."""
    k = -(-bits // WORD_BITS)
    low = (2 * n).bit_length() + 1
    if bits / k < low:
        raise ConfigError(f"a {bits}-bit modulus cannot be split into {k} primes = 1 mod {2 * n} below "
                          f"2^{WORD_BITS} (each would have {bits / k:.1f} bits, at least {low} needed); "
                          f"use at most {WORD_BITS}-bit or at least {k * low}-bit primes at N = {n}")
    chosen: list[int] = []
    room = 1 << bits  # the product of the primes still to choose must stay below this
    for i in range(k):
        limit = room if i == k - 1 else int(2 ** (math.log2(room) / (k - i)))
        best = _largest_below(n, min(limit, 1 << WORD_BITS), used)
        if best is None or best.bit_length() < low - 1:
            raise ConfigError(f"not enough primes = 1 mod {2 * n} below 2^{math.log2(limit):.1f} for a "
                              f"{bits}-bit modulus at N = {n}")
        chosen.append(best)
        used.add(best)
        room = -(-room // best)
    return tuple(chosen)


def prime_chain(poly_modulus_degree: int, coeff_mod_bits: Sequence[int]) -> PrimeChain:
    """The physical primes of ``coeff_mod_bits`` at ring degree ``poly_modulus_degree`` (see
    the module docstring); deterministic, so every party derives the same chain."""
    n = poly_modulus_degree
    bits = list(coeff_mod_bits)
    small = [b for b in bits if b <= WORD_BITS]
    seal = list(coeff_modulus_primes(n, small)) if small else []
    used = set(seal)
    groups: list[tuple[int, ...]] = []
    for b in bits:
        if b <= WORD_BITS:
            groups.append((seal.pop(0),))
        else:
            groups.append(_split(n, b, used))
    return PrimeChain(n, tuple(groups))
