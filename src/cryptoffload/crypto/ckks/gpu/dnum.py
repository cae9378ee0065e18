"""The number of key-switching digits (``dnum``) and the special modulus ``P`` it needs.

Hybrid key switching (Han and Ki, "Better Bootstrapping for Approximate Homomorphic
Encryption", CT-RSA 2020; the ``dnum`` of OpenFHE's ``SetNumLargeDigits`` and Lattigo): the
data primes are split into ``dnum`` digits, each digit's modulus at most ``P``, and a
key-switching key holds one RLWE sample per digit over all primes (data and special). So a key
is ``dnum x 2 x (L + alpha) x N`` words (``L`` data primes, ``alpha`` special primes), and the
knob trades memory, speed and security:

* ``dnum = 1``: ``P >= Q`` -- the smallest number of digits but the largest ``P``, which the
  security bound counts (``log Q P``), so the chain must be short;
* ``dnum = L``: ``P`` one prime -- SEAL's layout; keys grow with ``L^2`` (the issue's 1.2 GB
  rotation key at N = 2^16 with a bootstrapping-depth chain);
* in between: ``P`` of ``alpha ~ L / dnum`` primes; at a fixed security bound the chain's
  data modulus shrinks as ``P`` grows.

Parameters carry ``P`` as the last entry of ``coeff_mod_bits`` (its size in bits; the chain
realises it as word-size primes, :mod:`.chain`), and the digits follow from it
(:meth:`~.chain.PrimeChain.digits`: consecutive data primes grouped greedily under ``P``).
:func:`params_for_dnum` picks the smallest ``P`` that gives at most ``dnum`` digits, so a
planner hands over ``dnum`` -- the same number OpenFHE takes -- and gets parameters.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Sequence

from cryptoffload.crypto.ckks.gpu.chain import WORD_BITS, PrimeChain, prime_chain
from cryptoffload.crypto.ckks.params import MAX_SPECIAL_BITS, CkksParams
from cryptoffload.errors import ConfigError

MEMORY_WORD = 8   # bytes per residue of a ciphertext or plaintext in memory (uint64)
KEY_WORD = 4      # bytes per residue of a key-switching key in memory (uint32: keystore.py)
SERIAL_WORD = 4   # bytes per residue serialised


def greedy_digits(primes: Sequence[int], capacity_bits: int) -> int:
    """How many digits :meth:`~.chain.PrimeChain.digits` makes of ``primes`` when ``P`` has
    ``capacity_bits`` bits (the same greedy rule, without building a chain)."""
    count, prod = 0, 0
    for q in primes:
        if count and (prod * q).bit_length() <= capacity_bits:
            prod *= q
        else:
            count += 1
            prod = q
    return count


def special_bits_for(n: int, data_bits: Sequence[int], dnum: int) -> int:
    """The smallest special modulus (bits) that splits the data primes of ``data_bits`` into at
    most ``dnum`` digits at ring degree ``n``."""
    data = prime_chain(n, tuple(data_bits) + (2 * WORD_BITS,)).data   # P comes after: any size will do
    if isinstance(dnum, bool) or not isinstance(dnum, int) or dnum < 1:
        raise ConfigError(f"dnum (key-switching digits) must be a positive integer, got {dnum!r}")
    lo = max(q.bit_length() for q in data)
    hi = math.prod(data).bit_length()
    while lo < hi:                       # the digit count falls as the capacity grows
        mid = (lo + hi) // 2
        if greedy_digits(data, mid) <= dnum:
            hi = mid
        else:
            lo = mid + 1
    return lo


def params_for_dnum(params: CkksParams, dnum: int) -> CkksParams:
    """``params`` with the special modulus replaced by the smallest one giving at most ``dnum``
    key-switching digits (a ``P`` whose primes' product falls a bit short of its bits is
    widened until the chain's digits agree)."""
    n, data_bits = params.poly_modulus_degree, params.coeff_mod_bits[:-1]
    bits = special_bits_for(n, data_bits, dnum)
    while bits <= MAX_SPECIAL_BITS:
        out = replace(params, coeff_mod_bits=tuple(data_bits) + (bits,))
        if len(prime_chain(n, out.coeff_mod_bits).digits()) <= dnum:
            return out
        bits += 1
    raise ConfigError(f"dnum = {dnum} needs a special modulus above {MAX_SPECIAL_BITS} bits for "
                      f"{sum(data_bits)} bits of data modulus; use more digits")


def key_words(chain: PrimeChain) -> int:
    """Residues in one key-switching key: ``dnum x 2 x (L + alpha) x N``."""
    return len(chain.digits()) * 2 * len(chain.all) * chain.poly_modulus_degree


def key_bytes(chain: PrimeChain, word: int = KEY_WORD) -> int:
    """Bytes of one key-switching key (relinearisation, one rotation): in memory (4-byte words,
    the default, as the key store holds them) or serialised (``word=SERIAL_WORD``, the same)."""
    return key_words(chain) * word
