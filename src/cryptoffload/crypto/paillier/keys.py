"""Paillier key pairs (g = n + 1) with DJN randomness.

Why DJN (Damgard-Jurik-Nielsen) randomness: textbook Paillier needs r^n mod n^2, a full-size
exponentiation per ciphertext. DJN publishes h_s = (-x^2)^n mod n^2 and uses h_s^a with a
short random a (n/2 bits, as Intel's IPCL does), which a fixed-base table makes cheap
(:mod:`.encryptor`).

Secrets and time: decryption's exponentiations and the private key's setup (in C) use
constant-time exponentiation (crypto_mb's on IFMA; on AVX2 + ADX CPUs our four-lane AVX2
kernels for groups of a batch and the MULX/ADX kernels for the rest; ``mpz_powm_sec`` elsewhere) and Fermat inverses; so does the
gmpy2 reference here (``powmod_sec``). Prime generation itself (``is_prime`` on candidates)
is variable time, as in every mainstream library.
"""

from __future__ import annotations

import hashlib
import json
import math
import secrets
import threading
from typing import Sequence

from cryptoffload.crypto.paillier.gmp import gmpy2

from cryptoffload.crypto._native import core as native
from cryptoffload.crypto.paillier import djn, framing
from cryptoffload.crypto.paillier.ciphertext import Ciphertext
from cryptoffload.crypto.paillier.encoding import decode_signed
from cryptoffload.crypto.paillier.encryptor import Encryptor, default_window, resolve_backend
from cryptoffload.crypto.paillier.errors import (CiphertextFormatError, InvalidKeyError, KeyMismatchError,
                                                 PaillierError)
from cryptoffload.crypto.paillier.validation import (MIN_STUDY_KEY_BITS, check_djn_base, check_djn_base_public,
                                                     check_factors, check_key_bits)
from cryptoffload.errors import ConfigError

DEFAULT_KEY_BITS = 2048
FORMAT = "cryptoffload-paillier"  # key files (JSON); ciphertext frames have their own version
FORMAT_VERSION = 2  # version 1 had no per-field checksums (keyfile.py reads its private keys)


def key_fingerprint(n: int) -> bytes:
    """The key's identity: its modulus. h_s is not part of it on purpose -- a ciphertext is one
    of n whatever valid h_s made it (ridge providers draw their own); key files protect h_s
    with :func:`field_checksum`."""
    return hashlib.sha256(b"cryptoffload-paillier-key\x00" + n.to_bytes((n.bit_length() + 7) // 8, "big")).digest()[:16]


def field_checksum(field: str, value: int) -> str:
    """A key file's checksum of one field (BLAKE2b-64 over its name and value): a flipped bit
    in any field is refused, naming the field. Unkeyed: it detects corruption, not forgery."""
    data = field.encode("ascii") + b"\x00" + value.to_bytes((value.bit_length() + 7) // 8, "big")
    return hashlib.blake2b(data, digest_size=8, person=b"paillier-key").hexdigest()


def _random_blum_prime(bits: int) -> int:
    """A prime p = 3 mod 4 of exactly ``bits`` bits with its two top bits set (so p*q has
    exactly 2*bits bits). Blum primes make -x^2 a generator of the DJN subgroup's shape."""
    while True:
        cand = secrets.randbits(bits) | (3 << (bits - 2)) | 3
        if gmpy2.is_prime(cand, 50):
            return int(cand)


def _djn_generator(n: int, nsquare: int) -> int:
    """(-x^2)^n mod n^2 for a random unit x, drawn again in the (negligible) case that it fails
    the public checks (+-1 or a small order modulo n) every loaded key must pass. (Toy moduli
    below the study floor, which no key file may hold, are not checked: all their units can
    have small orders.)"""
    while True:
        x = secrets.randbelow(n - 2) + 2
        if math.gcd(x, n) == 1:
            hs = int(gmpy2.powmod_sec((-x * x) % n, n, nsquare))
            if n.bit_length() < MIN_STUDY_KEY_BITS:
                return hs
            try:
                check_djn_base_public(n, hs)
            except InvalidKeyError:  # pragma: no cover - probability about 2^-400 at 512 bits
                continue
            return hs


def _inverse_mod_prime(x: int, prime: int) -> int:
    """x^-1 mod a prime by Fermat with a constant-time exponentiation (x and the prime are
    secret here, and gmpy2's ``invert`` runs a variable-time extended gcd)."""
    r = int(gmpy2.powmod_sec(x % prime, prime - 2, prime))
    if r * x % prime != 1:
        raise InvalidKeyError("private key factor has no inverse: the factors are not prime")
    return r


class PublicKey:
    """n, g = n + 1 and the DJN base h_s. Equality and identity are by n (the fingerprint).

    The constructor checks only what every use needs (odd n, h_s a unit); keys from outside
    are checked fully by :func:`~.keyfile.key_from_dict`."""

    __slots__ = ("n", "nsquare", "hs", "bits", "exp_bits", "max_int", "fingerprint", "_encryptors", "_lock")

    def __init__(self, n: int, hs: int | None = None) -> None:
        n = int(n)
        if n < 3 or n % 2 == 0:
            raise ConfigError("a Paillier modulus must be an odd integer > 2")
        self.n = n
        self.nsquare = n * n
        self.bits = n.bit_length()
        self.hs = int(hs) if hs is not None else _djn_generator(n, self.nsquare)
        if not 0 < self.hs < self.nsquare or math.gcd(self.hs, n) != 1:
            raise ConfigError("the DJN base h_s is not a unit modulo n^2")
        self.exp_bits = (self.bits + 1) // 2
        self.max_int = n // 3
        self.fingerprint = key_fingerprint(n)
        self._encryptors: dict[tuple[str, bool, int], Encryptor] = {}
        self._lock = threading.Lock()

    @property
    def g(self) -> int:
        return self.n + 1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PublicKey) and other.n == self.n

    def __hash__(self) -> int:
        return hash(self.n)

    def __repr__(self) -> str:
        return f"PublicKey(bits={self.bits}, fingerprint={self.fingerprint.hex()})"

    # -- encryption -------------------------------------------------------------------------
    def encryptor(self, backend: str = "auto", constant_time: bool = True, window: int | None = None) -> Encryptor:
        """A cached :class:`Encryptor` (tables are built once per key and option set)."""
        resolved = resolve_backend(backend, self.nsquare.bit_length())
        w = window or default_window(self.bits, resolved, constant_time)
        key = (resolved, constant_time, w)
        with self._lock:
            enc = self._encryptors.get(key)
            if enc is None:
                enc = Encryptor(self, resolved, constant_time=constant_time, window=window)
                self._encryptors[key] = enc
        return enc

    def check_plaintext(self, m: int) -> int:
        return djn.check_plaintext(m, self.n)

    def random_exponent(self) -> int:
        return secrets.randbits(self.exp_bits)

    def raw_encrypt(self, m: int, a: int | None = None) -> int:
        """Reference DJN encryption with gmpy2: (1 + m n) h_s^a mod n^2."""
        self.check_plaintext(m)
        a = self.random_exponent() if a is None else a
        return djn.encrypt(m, a, self.n, self.hs, self.nsquare)

    def raw_encrypt_classic(self, m: int, r: int | None = None) -> int:
        """Textbook Paillier, g^m r^n mod n^2 with both exponentiations (what libhcs and the
        QAT paper compute; used by the offload study to reproduce its two-modexp structure)."""
        self.check_plaintext(m)
        if r is None:
            r = self.random_unit()
        gm = gmpy2.powmod(self.g, m, self.nsquare)
        rn = gmpy2.powmod(r, self.n, self.nsquare)
        return int(gm * rn % self.nsquare)

    def random_unit(self) -> int:
        return djn.random_unit(self.n)

    def encrypt(self, m: int, *, backend: str = "auto", constant_time: bool = True) -> Ciphertext:
        return Ciphertext(self, self.encryptor(backend, constant_time).encrypt_raw([self.check_plaintext(m)])[0])

    def encrypt_many(self, values: Sequence[int], *, backend: str = "auto", constant_time: bool = True,
                     progress: bool = False) -> list[Ciphertext]:
        enc = self.encryptor(backend, constant_time)
        raws = enc.encrypt_raw([self.check_plaintext(m) for m in values], progress=progress)
        return [Ciphertext(self, c) for c in raws]

    # -- ciphertext import ------------------------------------------------------------------
    def check_ciphertext(self, c: int) -> int:
        if isinstance(c, bool) or not isinstance(c, int) or not 0 < c < self.nsquare or math.gcd(c, self.n) != 1:
            raise CiphertextFormatError("not a valid ciphertext for this key (must be a unit modulo n^2)")
        return c

    @property
    def ciphertext_bytes(self) -> int:
        return (self.nsquare.bit_length() + 7) // 8

    def ciphertext_from_bytes(self, data: bytes) -> Ciphertext:
        """Parse :meth:`Ciphertext.to_bytes` output (a frame of exactly one ciphertext),
        refusing another key's ciphertexts and corrupted data."""
        values = framing.unpack(self, data)
        if len(values) != 1:
            raise CiphertextFormatError(f"expected one ciphertext, the data holds {len(values)}")
        return Ciphertext(self, values[0])

    # -- serialisation ----------------------------------------------------------------------
    def to_dict(self) -> dict[str, object]:
        return {"format": FORMAT, "version": FORMAT_VERSION, "kind": "public",
                "n": format(self.n, "x"), "hs": format(self.hs, "x"), "fingerprint": self.fingerprint.hex(),
                "checksums": {"n": field_checksum("n", self.n), "hs": field_checksum("hs", self.hs)}}

    def to_json(self) -> str:
        return json.dumps(self.to_dict())


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
        d.update(kind="private", p=format(self.p, "x"), q=format(self.q, "x"))
        d["checksums"].update(p=field_checksum("p", self.p), q=field_checksum("q", self.q))  # type: ignore[attr-defined]
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
