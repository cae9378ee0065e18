"""Paillier encryption (g = n + 1) with DJN randomness, CRT decryption and safe serialisation.

Why DJN (Damgård-Jurik-Nielsen) randomness: textbook Paillier needs r^n mod n^2, a full-size
exponentiation per ciphertext. DJN publishes h_s = (-x^2)^n mod n^2 and uses h_s^a with a
short random a (n/2 bits, as Intel's IPCL does). Because h_s is fixed, h_s^a comes from a
precomputed table of powers in a few dozen multiplications (`Encryptor`), or entirely ahead
of time (`RandomnessPool`, the offline/online split), so online encryption is one product.

Backends, all producing identical ciphertexts from the same randomness (tested):
  ``gmpy2``  the reference: one ``powmod`` per ciphertext, no table.
  ``gmp``    the native C core, 64-bit limbs, Montgomery multiplication on GMP's mpn layer.
  ``ifma``   the native core, eight ciphertexts at a time in AVX512-IFMA (Intel crypto_mb).
  ``auto``   ``ifma`` where the CPU has it, else ``gmp``, else ``gmpy2``.

Side channels: the table lookup indexes by digits of the secret exponent a. The default is a
constant-time gather (every lookup reads the whole window); ``constant_time=False`` reads one
entry and is faster but leaks cache-line access patterns to a co-located attacker. Decryption
exponentiations are constant time (``mpz_powm_sec`` or crypto_mb); the CRT recombination uses
ordinary GMP arithmetic. See docs/crypto/paillier.md for measured costs.

Key sizes: 2048-bit n by default (112-bit security); smaller keys are refused unless the caller
asks for a study size explicitly (``insecure_study_size=True``), e.g. the paper's 1024 bits.
"""

from __future__ import annotations

import collections
import hashlib
import json
import math
import os
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import gmpy2

from cryptoffload.crypto._native import core as native
from cryptoffload.errors import BackendUnavailable, ConfigError, CryptoffloadError

DEFAULT_KEY_BITS = 2048
MIN_SECURE_KEY_BITS = 2048
MIN_STUDY_KEY_BITS = 512
FORMAT = "cryptoffload-paillier"
FORMAT_VERSION = 1
CIPHERTEXT_MAGIC = b"COPC"
BACKENDS = ("auto", "ifma", "gmp", "gmpy2")

# Window sizes chosen by `python benchmarks/paillier.py --choose-window` on the development
# machine (Xeon with AVX512-IFMA, 2 cores; benchmarks/results/paillier_windows.json):
# key bits -> (backend, constant_time) -> window bits. Keys between sizes use the smaller
# size's row. Memory is ceil(exp_bits / w) * 2^w entries of one n^2-sized number each.
DEFAULT_WINDOWS_BY_BITS: dict[int, dict[tuple[str, bool], int]] = {
    1024: {("ifma", False): 12, ("ifma", True): 6, ("gmp", False): 12, ("gmp", True): 5},
    2048: {("ifma", False): 10, ("ifma", True): 7, ("gmp", False): 11, ("gmp", True): 6},
}


def default_window(bits: int, backend: str, constant_time: bool) -> int:
    sizes = sorted(DEFAULT_WINDOWS_BY_BITS)
    row = DEFAULT_WINDOWS_BY_BITS[max([b for b in sizes if b <= bits], default=sizes[0])]
    return row.get((backend, constant_time), 0)


DEFAULT_MAX_TABLE_BYTES = 256 * 1024 * 1024


class PaillierError(CryptoffloadError):
    """Base of Paillier usage errors."""


class KeyMismatchError(PaillierError):
    """A ciphertext or key belongs to another key pair."""


class CiphertextFormatError(PaillierError):
    """Serialised data is truncated, garbled or of an unknown version."""


class PlaintextRangeError(PaillierError):
    """A plaintext does not fit the key's plaintext space (or decoded value overflowed)."""


# --------------------------------------------------------------------------------------------
# keys


def _fingerprint(n: int) -> bytes:
    return hashlib.sha256(b"cryptoffload-paillier-key\x00" + n.to_bytes((n.bit_length() + 7) // 8, "big")).digest()[:16]


def _random_blum_prime(bits: int) -> int:
    """A prime p = 3 mod 4 of exactly ``bits`` bits with its two top bits set (so p*q has
    exactly 2*bits bits). Blum primes make -x^2 a generator of the DJN subgroup's shape."""
    while True:
        cand = secrets.randbits(bits) | (3 << (bits - 2)) | 3
        if gmpy2.is_prime(cand, 50):
            return int(cand)


def _djn_generator(n: int, nsquare: int) -> int:
    while True:
        x = secrets.randbelow(n - 2) + 2
        if math.gcd(x, n) == 1:
            return int(gmpy2.powmod((-x * x) % n, n, nsquare))


def check_key_bits(bits: int, insecure_study_size: bool) -> int:
    if isinstance(bits, bool) or not isinstance(bits, int) or bits % 2:
        raise ConfigError(f"key size must be an even number of bits, got {bits!r}")
    if bits < MIN_SECURE_KEY_BITS and not insecure_study_size:
        raise ConfigError(
            f"a {bits}-bit Paillier key is below the 112-bit security level (needs >= {MIN_SECURE_KEY_BITS}); "
            "pass --insecure-study-size to use it for reproducing a paper")
    if bits < MIN_STUDY_KEY_BITS:
        raise ConfigError(f"key size must be at least {MIN_STUDY_KEY_BITS} bits, got {bits}")
    return bits


class PublicKey:
    """n, g = n + 1 and the DJN base h_s. Equality and identity are by n (the fingerprint)."""

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
        self.fingerprint = _fingerprint(n)
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
    def encryptor(self, backend: str = "auto", constant_time: bool = True, window: int | None = None) -> "Encryptor":
        """A cached :class:`Encryptor` (tables are built once per key and option set)."""
        resolved = resolve_backend(backend)
        w = window or default_window(self.bits, resolved, constant_time)
        key = (resolved, constant_time, w)
        with self._lock:
            enc = self._encryptors.get(key)
            if enc is None:
                enc = Encryptor(self, resolved, constant_time=constant_time, window=window)
                self._encryptors[key] = enc
        return enc

    def check_plaintext(self, m: int) -> int:
        if isinstance(m, bool) or not isinstance(m, int):
            raise PlaintextRangeError(f"a plaintext must be an int, got {type(m).__name__}")
        if not 0 <= m < self.n:
            raise PlaintextRangeError(
                f"plaintext out of range: must be in [0, n) for this {self.bits}-bit key "
                "(encode negative numbers with encode_signed)")
        return m

    def random_exponent(self) -> int:
        return secrets.randbits(self.exp_bits)

    def raw_encrypt(self, m: int, a: int | None = None) -> int:
        """Reference DJN encryption with gmpy2: (1 + m n) h_s^a mod n^2."""
        self.check_plaintext(m)
        a = self.random_exponent() if a is None else a
        return int((1 + m * self.n) * gmpy2.powmod(self.hs, a, self.nsquare) % self.nsquare)

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
        while True:
            r = secrets.randbelow(self.n - 1) + 1
            if math.gcd(r, self.n) == 1:
                return r

    def encrypt(self, m: int, *, backend: str = "auto", constant_time: bool = True) -> "Ciphertext":
        return Ciphertext(self, self.encryptor(backend, constant_time).encrypt_raw([self.check_plaintext(m)])[0])

    def encrypt_many(self, values: Sequence[int], *, backend: str = "auto", constant_time: bool = True,
                     progress: bool = False) -> list["Ciphertext"]:
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

    def ciphertext_from_bytes(self, data: bytes) -> "Ciphertext":
        """Parse :meth:`Ciphertext.to_bytes` output, refusing another key's ciphertexts."""
        head = len(CIPHERTEXT_MAGIC) + 1 + 16
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise CiphertextFormatError("serialised ciphertext must be bytes")
        data = bytes(data)
        if len(data) < head or data[:4] != CIPHERTEXT_MAGIC:
            raise CiphertextFormatError("not a cryptoffload Paillier ciphertext (bad header)")
        if data[4] != FORMAT_VERSION:
            raise CiphertextFormatError(f"unsupported ciphertext format version {data[4]}")
        if data[5:head] != self.fingerprint:
            raise KeyMismatchError(
                f"ciphertext was made under key {data[5:head].hex()}, not this key {self.fingerprint.hex()}")
        body = data[head:]
        if len(body) != self.ciphertext_bytes:
            raise CiphertextFormatError(
                f"ciphertext is {len(body)} bytes, expected {self.ciphertext_bytes} (truncated or garbled)")
        return Ciphertext(self, self.check_ciphertext(int.from_bytes(body, "big")))

    # -- serialisation ----------------------------------------------------------------------
    def to_dict(self) -> dict[str, object]:
        return {"format": FORMAT, "version": FORMAT_VERSION, "kind": "public",
                "n": format(self.n, "x"), "hs": format(self.hs, "x"), "fingerprint": self.fingerprint.hex()}

    def to_json(self) -> str:
        return json.dumps(self.to_dict())


class PrivateKey:
    """The factors p, q. Its repr never shows them; files holding it are written 0600."""

    __slots__ = ("public_key", "p", "q", "_native", "_lock")

    def __init__(self, public_key: PublicKey, p: int, q: int) -> None:
        p, q = int(p), int(q)
        if p * q != public_key.n or p == q:
            raise KeyMismatchError("private key factors do not match the public key")
        self.public_key = public_key
        self.p, self.q = (p, q) if p < q else (q, p)
        self._native: native.CrtDecryptor | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"PrivateKey(bits={self.public_key.bits}, fingerprint={self.public_key.fingerprint.hex()})"

    def _decryptor(self) -> native.CrtDecryptor | None:
        if not native.native_available() or self.p.bit_length() != self.q.bit_length():
            return None
        with self._lock:
            if self._native is None:
                self._native = native.CrtDecryptor(self.p, self.q)
        return self._native

    def _check(self, ct: "Ciphertext") -> int:
        if not isinstance(ct, Ciphertext):
            raise PaillierError(f"expected a Ciphertext, got {type(ct).__name__}")
        if ct.public_key != self.public_key:
            raise KeyMismatchError("ciphertext was encrypted under another key")
        return ct.value

    def raw_decrypt_reference(self, c: int) -> int:
        """CRT decryption in gmpy2 (the reference the native path is tested against)."""
        p, q = self.p, self.q
        n = p * q
        g = n + 1

        def half(prime: int) -> int:
            sq = prime * prime
            hp = gmpy2.invert((gmpy2.powmod(g, prime - 1, sq) - 1) // prime, prime)
            return int((gmpy2.powmod(c % sq, prime - 1, sq) - 1) // prime * hp % prime)

        mp, mq = half(p), half(q)
        return int(mp + p * ((mq - mp) * gmpy2.invert(p, q) % q))

    def raw_decrypt_many(self, values: Sequence[int], use_ifma: bool = True) -> list[int]:
        dec = self._decryptor()
        if dec is None:
            return [self.raw_decrypt_reference(c) for c in values]
        return dec.decrypt(list(values), use_ifma)

    def decrypt(self, ct: "Ciphertext") -> int:
        return self.raw_decrypt_many([self._check(ct)])[0]

    def decrypt_many(self, cts: Sequence["Ciphertext"], *, use_ifma: bool = True) -> list[int]:
        return self.raw_decrypt_many([self._check(c) for c in cts], use_ifma)

    def decrypt_signed(self, ct: "Ciphertext") -> int:
        return decode_signed(self.public_key, self.decrypt(ct))

    def to_dict(self) -> dict[str, object]:
        d = self.public_key.to_dict()
        d.update(kind="private", p=format(self.p, "x"), q=format(self.q, "x"))
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


def _parse_hex(d: dict[str, object], field: str) -> int:
    v = d.get(field)
    if not isinstance(v, str):
        raise CiphertextFormatError(f"key data lacks field {field!r}")
    try:
        return int(v, 16)
    except ValueError:
        raise CiphertextFormatError(f"key field {field!r} is not hexadecimal") from None


def key_from_dict(d: dict[str, object]) -> PublicKey | PrivateKey:
    """Rebuild a key from :meth:`to_dict` output, checking format, version and fingerprint."""
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        raise CiphertextFormatError("not a cryptoffload Paillier key")
    if d.get("version") != FORMAT_VERSION:
        raise CiphertextFormatError(f"unsupported key format version {d.get('version')!r}")
    n = _parse_hex(d, "n")
    if n < 3 or d.get("fingerprint") != _fingerprint(n).hex():
        raise CiphertextFormatError("key fingerprint does not match its modulus (garbled key data)")
    try:
        pub = PublicKey(n, _parse_hex(d, "hs"))
    except ConfigError as exc:
        raise CiphertextFormatError(f"invalid key data: {exc}") from None
    if d.get("kind") == "public":
        return pub
    if d.get("kind") == "private":
        return PrivateKey(pub, _parse_hex(d, "p"), _parse_hex(d, "q"))
    raise CiphertextFormatError(f"unknown key kind {d.get('kind')!r}")


def key_from_json(text: str) -> PublicKey | PrivateKey:
    try:
        return key_from_dict(json.loads(text))
    except json.JSONDecodeError:
        raise CiphertextFormatError("key data is not valid JSON (truncated or garbled)") from None


def save_key(key: PublicKey | PrivateKey, path: str | os.PathLike[str]) -> Path:
    """Write a key as JSON; private keys get mode 0600 from creation (never world-readable),
    through a temporary file so a crash leaves no half-written key."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    mode = 0o600 if isinstance(key, PrivateKey) else 0o644
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(json.dumps(key.to_dict()))
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def load_key(path: str | os.PathLike[str]) -> PublicKey | PrivateKey:
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise PaillierError(f"cannot read key file {path}: {exc.strerror}") from None
    return key_from_json(text)


# --------------------------------------------------------------------------------------------
# ciphertexts


class Ciphertext:
    """An encrypted integer mod n. Arithmetic follows the plaintexts: ``a + b``, ``a + 5``,
    ``a * 3``, ``-a``, ``a - b``; mixing keys is refused."""

    __slots__ = ("public_key", "value")

    def __init__(self, public_key: PublicKey, value: int) -> None:
        self.public_key = public_key
        self.value = value

    def __repr__(self) -> str:
        return f"Ciphertext(key={self.public_key.fingerprint.hex()[:8]})"

    def _same_key(self, other: "Ciphertext") -> None:
        if other.public_key != self.public_key:
            raise KeyMismatchError("cannot combine ciphertexts under different keys")

    def __add__(self, other: "Ciphertext | int") -> "Ciphertext":
        pk = self.public_key
        if isinstance(other, Ciphertext):
            self._same_key(other)
            return Ciphertext(pk, self.value * other.value % pk.nsquare)
        if isinstance(other, int) and not isinstance(other, bool):
            k = other % pk.n
            return Ciphertext(pk, self.value * (1 + k * pk.n) % pk.nsquare)
        return NotImplemented

    __radd__ = __add__

    def __neg__(self) -> "Ciphertext":
        pk = self.public_key
        return Ciphertext(pk, int(gmpy2.invert(self.value, pk.nsquare)))

    def __sub__(self, other: "Ciphertext | int") -> "Ciphertext":
        if isinstance(other, Ciphertext):
            return self + (-other)
        if isinstance(other, int) and not isinstance(other, bool):
            return self + (-other)
        return NotImplemented

    def __rsub__(self, other: int) -> "Ciphertext":
        return (-self) + other

    def __mul__(self, k: int) -> "Ciphertext":
        if isinstance(k, Ciphertext):
            raise PaillierError("Paillier cannot multiply two ciphertexts (only by a plaintext scalar)")
        if isinstance(k, bool) or not isinstance(k, int):
            return NotImplemented
        pk = self.public_key
        k %= pk.n
        # a negative scalar k = n - |k| is cheaper as (c^-1)^|k|
        if k > pk.n // 2:
            return Ciphertext(pk, int(gmpy2.powmod(gmpy2.invert(self.value, pk.nsquare), pk.n - k, pk.nsquare)))
        return Ciphertext(pk, int(gmpy2.powmod(self.value, k, pk.nsquare)))

    __rmul__ = __mul__

    def rerandomize(self) -> "Ciphertext":
        """Same plaintext, fresh randomness (h_s^a for a new a)."""
        pk = self.public_key
        r = pk.encryptor().randomness(1)[0]
        return Ciphertext(pk, self.value * r % pk.nsquare)

    def to_bytes(self) -> bytes:
        pk = self.public_key
        return (CIPHERTEXT_MAGIC + bytes([FORMAT_VERSION]) + pk.fingerprint
                + self.value.to_bytes(pk.ciphertext_bytes, "big"))


# --------------------------------------------------------------------------------------------
# encodings


def encode_signed(pk: PublicKey, x: int) -> int:
    """A signed integer as a plaintext: x mod n, with |x| <= n // 3 so sums can be told apart
    from negatives (the same convention as python-paillier)."""
    if isinstance(x, bool) or not isinstance(x, int):
        raise PlaintextRangeError(f"expected an int, got {type(x).__name__}")
    if abs(x) > pk.max_int:
        raise PlaintextRangeError(f"{x.bit_length()}-bit integer too large for this key (|x| <= n/3)")
    return x % pk.n


def decode_signed(pk: PublicKey, m: int) -> int:
    if m <= pk.max_int:
        return m
    if m >= pk.n - pk.max_int:
        return m - pk.n
    raise PlaintextRangeError("decrypted value lies outside the signed range: a computation overflowed")


@dataclass(frozen=True)
class FixedPoint:
    """Fixed-point numbers with ``frac_bits`` fractional bits as signed plaintexts.

    A product of two encoded values (ciphertext times encoded scalar) carries 2*frac_bits;
    decode it with ``scale_power=2``."""

    frac_bits: int = 32

    def __post_init__(self) -> None:
        if isinstance(self.frac_bits, bool) or not isinstance(self.frac_bits, int) or not 0 <= self.frac_bits <= 256:
            raise ConfigError(f"fractional bits must be 0..256, got {self.frac_bits!r}")

    def to_int(self, x: float) -> int:
        if not math.isfinite(x):
            raise PlaintextRangeError(f"cannot encode {x!r}")
        return round(x * (1 << self.frac_bits))

    def encode(self, pk: PublicKey, x: float) -> int:
        return encode_signed(pk, self.to_int(x))

    def decode(self, pk: PublicKey, m: int, scale_power: int = 1) -> float:
        return decode_signed(pk, m) / float(1 << (self.frac_bits * scale_power))


# --------------------------------------------------------------------------------------------
# fast encryption


def resolve_backend(backend: str) -> str:
    if backend not in BACKENDS:
        raise ConfigError(f"unknown Paillier backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if backend == "auto":
        if native.ifma_available():
            return "ifma"
        return "gmp" if native.native_available() else "gmpy2"
    if backend == "ifma" and not native.ifma_available():
        raise BackendUnavailable("backend 'ifma' needs AVX512-IFMA and the crypto_mb build; use 'gmp' or 'auto'")
    if backend == "gmp":
        native.require_native()
    return backend


def table_bytes_estimate(pk: PublicKey, backend: str, window: int) -> int:
    windows = -(-pk.exp_bits // window)
    entry = 8 * (-(-pk.nsquare.bit_length() // 52)) if backend == "ifma" else 8 * (-(-pk.nsquare.bit_length() // 64))
    return windows * (1 << window) * entry


class Encryptor:
    """DJN encryption for one public key with a fixed-base table for h_s.

    ``window`` defaults to the benchmark-chosen size for the backend and lookup mode, shrunk
    until the table fits ``max_table_bytes``; ``table_bytes`` reports the memory used.
    """

    def __init__(self, pk: PublicKey, backend: str = "auto", *, constant_time: bool = True,
                 window: int | None = None, max_table_bytes: int = DEFAULT_MAX_TABLE_BYTES) -> None:
        self.public_key = pk
        self.backend = resolve_backend(backend)
        self.constant_time = constant_time
        self.table_bytes = 0
        self._table: native.FixedBaseTable | None = None
        if self.backend == "gmpy2":
            self.window = 0
            return
        w = window if window is not None else default_window(pk.bits, self.backend, constant_time)
        if window is None:
            while w > 2 and table_bytes_estimate(pk, self.backend, w) > max_table_bytes:
                w -= 1
        elif table_bytes_estimate(pk, self.backend, w) > max_table_bytes:
            raise ConfigError(
                f"a {w}-bit window needs {table_bytes_estimate(pk, self.backend, w) / 2**20:.0f} MiB of table, "
                f"more than the {max_table_bytes / 2**20:.0f} MiB allowed")
        self.window = w
        self._table = native.FixedBaseTable(
            pk.hs, pk.nsquare, pk.n, pk.exp_bits, w, constant_time,
            native.BACKEND_IFMA if self.backend == "ifma" else native.BACKEND_GMP)
        self.table_bytes = self._table.table_bytes

    def describe(self) -> str:
        if self.backend == "gmpy2":
            return "gmpy2 (powmod per ciphertext)"
        mode = "constant-time" if self.constant_time else "variable-time"
        return f"{self.backend}, {self.window}-bit windows, {mode} lookup, table {self.table_bytes / 2**20:.1f} MiB"

    def encrypt_raw(self, messages: Sequence[int], exponents: Sequence[int] | None = None, *,
                    progress: bool = False, chunk: int = 4096) -> list[int]:
        """Ciphertext integers for plaintexts already checked to lie in [0, n).

        ``exponents`` fixes the DJN randomness (tests compare backends with it); by default it
        comes from ``secrets``.
        """
        pk = self.public_key
        if exponents is None:
            exponents = [secrets.randbits(pk.exp_bits) for _ in range(len(messages))]
        elif len(exponents) != len(messages):
            raise ConfigError("need one exponent per message")
        if self._table is None:
            return [int((1 + m * pk.n) * gmpy2.powmod(pk.hs, a, pk.nsquare) % pk.nsquare)
                    for m, a in zip(messages, exponents)]
        if not progress or len(messages) <= chunk:
            return self._table.encrypt(messages, exponents)
        from rich.progress import Progress

        out: list[int] = []
        with Progress(transient=True) as bar:
            task = bar.add_task("encrypting", total=len(messages))
            for i in range(0, len(messages), chunk):
                out.extend(self._table.encrypt(messages[i:i + chunk], exponents[i:i + chunk]))
                bar.advance(task, min(chunk, len(messages) - i))
        return out

    def randomness(self, count: int) -> list[int]:
        """``count`` values h_s^a mod n^2 (the encryption of 0), for the offline pool."""
        return self.encrypt_raw([0] * count)


class RandomnessPool:
    """Offline/online encryption: a background thread keeps ``capacity`` values h_s^a ready,
    so online encryption is one multiplication, (1 + m n) * r mod n^2.

    The native core releases the GIL, so the refill really runs on another core. When the
    pool is empty the caller computes its own randomness (counted in ``misses``). Use as a
    context manager, or call :meth:`close`.
    """

    def __init__(self, encryptor: Encryptor, capacity: int = 4096, batch: int = 256, background: bool = True) -> None:
        if capacity < 1 or batch < 1:
            raise ConfigError("pool capacity and batch must be positive")
        self.encryptor = encryptor
        self.public_key = encryptor.public_key
        self.capacity = capacity
        self.batch = min(batch, capacity)
        self.misses = 0
        self._values: collections.deque[int] = collections.deque()
        self._cond = threading.Condition()
        self._closed = False
        self._thread: threading.Thread | None = None
        if background:
            self._thread = threading.Thread(target=self._fill, name="paillier-randomness", daemon=True)
            self._thread.start()

    def _fill(self) -> None:
        while True:
            with self._cond:
                while not self._closed and len(self._values) >= self.capacity:
                    self._cond.wait()
                if self._closed:
                    return
                want = min(self.batch, self.capacity - len(self._values))
            fresh = self.encryptor.randomness(want)
            with self._cond:
                self._values.extend(fresh)
                self._cond.notify_all()

    def fill(self) -> None:
        """Fill to capacity now, in the caller's thread (for a pool without a thread)."""
        missing = self.capacity - len(self._values)
        if missing > 0:
            self._values.extend(self.encryptor.randomness(missing))

    def wait_full(self, timeout: float | None = None) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: len(self._values) >= self.capacity or self._closed, timeout)

    def __len__(self) -> int:
        return len(self._values)

    def take(self, count: int) -> list[int]:
        out: list[int] = []
        with self._cond:
            while self._values and len(out) < count:
                out.append(self._values.popleft())
            self._cond.notify_all()
        if len(out) < count:
            self.misses += count - len(out)
            out.extend(self.encryptor.randomness(count - len(out)))
        return out

    def encrypt(self, m: int) -> Ciphertext:
        return self.encrypt_many([m])[0]

    def encrypt_many(self, values: Sequence[int]) -> list[Ciphertext]:
        pk = self.public_key
        n, n2 = pk.n, pk.nsquare
        rs = self.take(len(values))
        return [Ciphertext(pk, (1 + pk.check_plaintext(m) * n) * r % n2) for m, r in zip(values, rs)]

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> "RandomnessPool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def ciphertexts_to_bytes(cts: Iterable[Ciphertext]) -> bytes:
    """Concatenate serialised ciphertexts (each self-describing, fixed length per key)."""
    return b"".join(c.to_bytes() for c in cts)


def ciphertexts_from_bytes(pk: PublicKey, data: bytes) -> list[Ciphertext]:
    """Split :func:`ciphertexts_to_bytes` output; any bad record refuses the whole file."""
    size = len(CIPHERTEXT_MAGIC) + 1 + 16 + pk.ciphertext_bytes
    if len(data) % size:
        # a foreign key's records have another size: say so rather than "truncated"
        if len(data) >= 21 and data[:4] == CIPHERTEXT_MAGIC and data[5:21] != pk.fingerprint:
            raise KeyMismatchError(f"ciphertexts were made under key {data[5:21].hex()}, not this key {pk.fingerprint.hex()}")
        raise CiphertextFormatError(f"ciphertext data is {len(data)} bytes, not a multiple of {size} (truncated or garbled)")
    out = []
    for i in range(0, len(data), size):
        try:
            out.append(pk.ciphertext_from_bytes(data[i:i + size]))
        except CiphertextFormatError as exc:
            raise CiphertextFormatError(f"ciphertext {i // size}: {exc}") from None
    return out
