"""Paillier key pairs: the private key (the factors p, q) and key generation.

The public half is a plain value of its own (:mod:`.public_key`); encryption is the
encryption service's (:mod:`.service`). Decryption lives here, with the factors.

Secrets and time: decryption's exponentiations and the private key's setup (in C) use
constant-time exponentiation (crypto_mb's on IFMA; on AVX2 + ADX CPUs our four-lane AVX2
kernels for groups of a batch and the MULX/ADX kernels for the rest; ``mpz_powm_sec`` elsewhere) and Fermat inverses; so does the
gmpy2 reference here (``powmod_sec``). Prime generation itself (``is_prime`` on candidates)
is variable time, as in every mainstream library.
"""

from __future__ import annotations

import secrets
import threading
from typing import Sequence

from cryptoffload.crypto.paillier.gmp import gmpy2

from cryptoffload.crypto._native import core as native
from cryptoffload.crypto.paillier.ciphertext import Ciphertext
from cryptoffload.crypto.paillier.encoding import decode_signed
from cryptoffload.crypto.paillier.errors import InvalidKeyError, KeyMismatchError, PaillierError
from cryptoffload.crypto.paillier.public_key import (FORMAT, FORMAT_VERSION, PublicKey, field_checksum,
                                                     key_fingerprint)
from cryptoffload.crypto.paillier.validation import check_djn_base, check_factors, check_key_bits

__all__ = ["DEFAULT_KEY_BITS", "FORMAT", "FORMAT_VERSION", "PrivateKey", "PublicKey", "field_checksum",
           "generate_keypair", "key_fingerprint"]

DEFAULT_KEY_BITS = 2048


def _random_blum_prime(bits: int) -> int:
    """A prime p = 3 mod 4 of exactly ``bits`` bits with its two top bits set (so p*q has
    exactly 2*bits bits). Blum primes make -x^2 a generator of the DJN subgroup's shape."""
    while True:
        cand = secrets.randbits(bits) | (3 << (bits - 2)) | 3
        if gmpy2.is_prime(cand, 50):
            return int(cand)


def _inverse_mod_prime(x: int, prime: int) -> int:
    """x^-1 mod a prime by Fermat with a constant-time exponentiation (x and the prime are
    secret here, and gmpy2's ``invert`` runs a variable-time extended gcd)."""
    r = int(gmpy2.powmod_sec(x % prime, prime - 2, prime))
    if r * x % prime != 1:
        raise InvalidKeyError("private key factor has no inverse: the factors are not prime")
    return r


class PrivateKey:
    """The factors p, q. Its repr never shows them; files holding it are written 0600.

    Construction checks that p and q are distinct primes of equal size with p q = n and that
    h_s is an n-th residue (:mod:`.validation`): decryption is only correct for such keys."""

    __slots__ = ("public_key", "p", "q", "_native", "_lock")

    def __init__(self, public_key: PublicKey, p: int, q: int) -> None:
        p, q = int(p), int(q)
        if p * q != public_key.n:
            raise KeyMismatchError("private key factors do not match the public key")
        check_factors(public_key.n, p, q)
        check_djn_base(p, q, public_key.hs)
        self.public_key = public_key
        self.p, self.q = (p, q) if p < q else (q, p)
        self._native: native.CrtDecryptor | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"PrivateKey(bits={self.public_key.bits}, fingerprint={self.public_key.fingerprint.hex()})"

    def _decryptor(self) -> native.CrtDecryptor | None:
        if not native.native_available():
            return None
        with self._lock:
            if self._native is None:
                self._native = native.CrtDecryptor(self.p, self.q)
        return self._native

    def _check(self, ct: Ciphertext) -> int:
        if not isinstance(ct, Ciphertext):
            raise PaillierError(f"expected a Ciphertext, got {type(ct).__name__}")
        if ct.public_key != self.public_key:
            raise KeyMismatchError("ciphertext was encrypted under another key")
        return ct.value

    def raw_decrypt_reference(self, c: int) -> int:
        """CRT decryption in gmpy2 (the reference the native path is tested against), with
        constant-time exponentiations and Fermat inverses like the C core."""
        p, q = self.p, self.q
        n = p * q
        g = n + 1

        def half(prime: int) -> int:
            sq = prime * prime
            hp = _inverse_mod_prime((int(gmpy2.powmod_sec(g, prime - 1, sq)) - 1) // prime, prime)
            return int((gmpy2.powmod_sec(c % sq, prime - 1, sq) - 1) // prime * hp % prime)

        mp, mq = half(p), half(q)
        return int(mp + p * ((mq - mp) * _inverse_mod_prime(p, q) % q))

    def decrypt_path(self, use_ifma: bool = True) -> str:
        """The path decryption runs here: ``ifma``, ``avx2``, ``gmp`` (the C core) or
        ``gmpy2`` (no core); see :meth:`~cryptoffload.crypto._native.core.CrtDecryptor.path`."""
        dec = self._decryptor()
        return "gmpy2" if dec is None else dec.path(use_ifma)

    def raw_decrypt_many(self, values: Sequence[int], use_ifma: bool = True, *, path: str | None = None) -> list[int]:
        """Plaintexts of ciphertext integers (each a checked unit below n^2), all at once in C:
        the batch crosses into the core once. ``use_ifma=False`` keeps off crypto_mb; ``path``
        forces a kernel set (benchmarks and tests)."""
        dec = self._decryptor()
        if dec is None:
            return [self.raw_decrypt_reference(c) for c in values]
        return dec.decrypt(list(values), use_ifma, path=path)

    def decrypt(self, ct: Ciphertext) -> int:
        return self.raw_decrypt_many([self._check(ct)])[0]

    def decrypt_many(self, cts: Sequence[Ciphertext], *, use_ifma: bool = True) -> list[int]:
        return self.raw_decrypt_many([self._check(c) for c in cts], use_ifma)

    def decrypt_signed(self, ct: Ciphertext) -> int:
        return decode_signed(self.public_key, self.decrypt(ct))

    def to_dict(self) -> dict[str, object]:
        d = self.public_key.to_dict()
        d.update(kind="private", p=format(self.p, "x"), q=format(self.q, "x"),
                 checksums={**self.public_key.checksums(), "p": field_checksum("p", self.p),
                            "q": field_checksum("q", self.q)})
        return d


def generate_keypair(bits: int = DEFAULT_KEY_BITS, *, insecure_study_size: bool = False) -> tuple[PublicKey, PrivateKey]:
    """A fresh key pair from the OS's randomness (``secrets``)."""
    check_key_bits(bits, insecure_study_size)
    while True:
        p = _random_blum_prime(bits // 2)
        q = _random_blum_prime(bits // 2)
        if p != q and (p * q).bit_length() == bits:
            break
    pub = PublicKey(p * q)
    return pub, PrivateKey(pub, p, q)
