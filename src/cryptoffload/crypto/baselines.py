"""Reference Paillier implementations we compare against, run in our own process.

Why in-process: the targets are ratios, and ratios are only honest when both sides see the
same machine at the same moment. ``phe`` (python-paillier 1.5.0) is the library most Python
users have. "IPCL-style" reproduces what Intel's Paillier library does per ciphertext -- one
8-lane AVX512-IFMA exponentiation h_s^a mod n^2 with an n/2-bit exponent, no table -- through
the same crypto_mb routine IPCL calls (its own Python wheel does not install on Python 3.11).
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Sequence

import gmpy2

from cryptoffload.crypto._native import core as native
from cryptoffload.crypto.paillier import PrivateKey, PublicKey

if TYPE_CHECKING:
    import phe   # python-paillier, the baseline (an optional import: no types of its own)


def phe_keys(pk: PublicKey, sk: PrivateKey) -> tuple[phe.PaillierPublicKey, phe.PaillierPrivateKey]:
    """phe key objects for the same modulus (so both libraries encrypt the same key size)."""
    import phe

    ppk = phe.PaillierPublicKey(pk.n)
    return ppk, phe.PaillierPrivateKey(ppk, sk.p, sk.q)


def phe_encrypt_many(ppk: phe.PaillierPublicKey, values: Sequence[int]) -> list[int]:
    """phe's raw encryption (g^m r^n with its gmpy2 fast path, obfuscation included)."""
    return [ppk.raw_encrypt(m) for m in values]


def phe_decrypt_many(psk: phe.PaillierPrivateKey, values: Sequence[int]) -> list[int]:
    return [psk.raw_decrypt(c) for c in values]


def ipcl_style_encrypt_many(pk: PublicKey, values: Sequence[int]) -> list[int]:
    """(1 + m n) * h_s^a mod n^2 with a fresh n/2-bit a, the exponentiation 8 lanes at a time."""
    exps = [secrets.randbits(pk.exp_bits) for _ in values]
    rs = native.mbx_powm_batch([pk.hs] * len(values), exps, pk.exp_bits, pk.nsquare)
    n, n2 = pk.n, pk.nsquare
    return [int((1 + m * n) * gmpy2.mpz(r) % n2) for m, r in zip(values, rs)]
