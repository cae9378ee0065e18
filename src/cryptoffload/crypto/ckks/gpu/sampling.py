"""Key and encryption randomness: bytes from the operating system's CSPRNG mapped to distributions.

Every random value of the scheme -- the secret key, the uniform ``a`` parts of public and
key-switching keys, encryption's ephemeral ``v`` and its errors -- comes from
``os.urandom`` on the host (never a seeded generator, never a GPU PRNG), mapped exactly:

* uniform mod ``q``: 32-bit words masked to ``q``'s bit length, values ``>= q`` rejected;
* ternary ``{-1, 0, 1}`` uniform (the secret distribution of the Homomorphic Encryption
  Standard's table and SEAL's): bytes ``< 255`` mapped by ``b mod 3 - 1`` (255 rejected);
* sparse ternary of Hamming weight ``h`` (the ephemeral secret of the sparse-secret
  encapsulation, :mod:`.sparse`): ``h`` distinct positions, each index a masked 32-bit word
  (``N`` is a power of two, so the mask is exact) with repeats rejected, and a uniform sign per
  position from one bit each;
* discrete Gaussian with ``sigma = 3.2`` cut at ``6 sigma`` (SEAL's bound, 19): a cumulative
  distribution table of 64-bit thresholds, computed with 40 significant digits, searched with
  one 64-bit uniform word per sample.

The GPU backend draws the same way and copies the values to the device, so for the same host
bytes the GPU and the CPU twin produce the same keys and ciphertexts bit for bit. There is no
way to hand the package's classes a byte source: the tests that check this bit-for-bit
agreement replace a scheme's sampler with a subclass of their own (tests/crypto/ckks/gpu/
gpu_helpers.py) that overrides :meth:`Sampler.random_bytes`.
"""

from __future__ import annotations

import os
from decimal import Decimal, getcontext
from typing import Sequence

import numpy as np

SIGMA = 3.2
BOUND = 19  # floor(6 * sigma), SEAL's noise_max_deviation


def _cdt(sigma: float, bound: int) -> np.ndarray:
    """``uint64`` thresholds ``T_k = round(2**64 * P(X <= k - bound))`` for ``k < 2 bound``."""
    getcontext().prec = 40
    s2 = Decimal(2) * Decimal(str(sigma)) ** 2
    weights = [(-(Decimal(x) ** 2) / s2).exp() for x in range(-bound, bound + 1)]
    total = sum(weights)
    acc = Decimal(0)
    out = []
    for w in weights[:-1]:
        acc += w
        out.append(int((acc / total * Decimal(2 ** 64)).to_integral_value()))
    return np.array(out, dtype=np.uint64)


_CDT = _cdt(SIGMA, BOUND)


class Sampler:
    """Maps bytes from the operating system's CSPRNG to the scheme's distributions."""

    def random_bytes(self, n: int) -> bytes:
        """``n`` bytes from ``os.urandom``: every random value of the scheme starts here."""
        return os.urandom(n)

    def words32(self, count: int) -> np.ndarray:
        return np.frombuffer(self.random_bytes(4 * count), dtype="<u4").astype(np.uint64)

    def uniform(self, primes: Sequence[int], n: int) -> np.ndarray:
        """``(len(primes), n)`` residues, each uniform modulo its prime."""
        out = np.empty((len(primes), n), dtype=np.uint64)
        for i, q in enumerate(primes):
            mask = np.uint64((1 << int(q).bit_length()) - 1)
            got = np.empty(0, dtype=np.uint64)
            while got.size < n:
                need = n - got.size
                cand = self.words32(2 * need + 64) & mask
                got = np.concatenate([got, cand[cand < np.uint64(q)]])
            out[i] = got[:n]
        return out

    def ternary(self, n: int) -> np.ndarray:
        """``n`` values uniform in ``{-1, 0, 1}`` (``int64``)."""
        got = np.empty(0, dtype=np.int64)
        while got.size < n:
            b = np.frombuffer(self.random_bytes(n - got.size + 64), dtype=np.uint8)
            b = b[b < 255].astype(np.int64)
            got = np.concatenate([got, b % 3 - 1])
        return got[:n]

    def sparse_ternary(self, n: int, weight: int) -> np.ndarray:
        """``n`` values in ``{-1, 0, 1}`` with exactly ``weight`` non-zero, their positions a
        uniform ``weight``-subset and their signs uniform (``int64``; ``n`` a power of two)."""
        if not 0 < weight <= n or n & (n - 1):
            raise ValueError(f"a sparse ternary vector of {n} entries cannot have weight {weight}")
        mask = np.uint32(n - 1)
        chosen: list[int] = []
        seen: set[int] = set()
        while len(chosen) < weight:
            for idx in (np.frombuffer(self.random_bytes(4 * (weight - len(chosen))), dtype="<u4") & mask).tolist():
                if idx not in seen and len(chosen) < weight:
                    seen.add(idx)
                    chosen.append(idx)
        signs = np.unpackbits(np.frombuffer(self.random_bytes((weight + 7) // 8), dtype=np.uint8))[:weight]
        out = np.zeros(n, dtype=np.int64)
        out[np.array(chosen, dtype=np.int64)] = 2 * signs.astype(np.int64) - 1
        return out

    def gaussian(self, n: int) -> np.ndarray:
        """``n`` discrete Gaussian values, ``sigma = 3.2``, ``|x| <= 19`` (``int64``)."""
        u = np.frombuffer(self.random_bytes(8 * n), dtype="<u8")
        return np.searchsorted(_CDT, u, side="right").astype(np.int64) - BOUND
