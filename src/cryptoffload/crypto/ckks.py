"""One CKKS interface, three adapters, and a tracer that records what an encrypted program does.

Why one interface: the HE-CNN application (seed 000: encrypted MNIST inference) must run on
real encryption (Microsoft SEAL through ``tenseal.sealapi``; OpenFHE where installed) and on
a fast exact emulator for packing tests, and the in-storage study needs a *trace* of the
program -- every op with its level, operands, keys and sizes -- whatever library ran it. So
the application is written once against :class:`CkksBackend`; :class:`TracingEvaluator`
wraps any backend and writes a ``cryptoffload-he-trace/1`` trace (schema in
``docs/studies/isc-he-cnn.md``, loaded by :func:`cryptoffload.workloads.he_program.load_trace`).

Conventions (SEAL's, which the trace schema follows)

* ``CkksParams.coeff_mod_bits``: the RNS primes, the last one the *special* prime used only
  by key switching. ``levels = len(coeff_mod_bits) - 2`` multiplicative levels; a fresh
  ciphertext is at level ``levels`` and holds ``level + 1`` RNS limbs; level 0 is the last
  data prime (no rescale left).
* ``mul`` does not relinearise (a size-3 ciphertext), ``rescale`` divides the scale by the
  dropped prime (the real prime, not ``2**bits``), ``mod_switch_to`` drops limbs without
  changing the scale. Binary ops need equal levels and (for additions) equal scales -- CKKS
  libraries refuse mixed levels, and a silent scale mismatch gives wrong numbers.
* ``rotate(ct, k)`` is a *left* rotation: slot ``i`` of the result is slot ``i + k`` of the
  input (negative ``k``: right). Keys exist per step; like SEAL, a step without its own key
  is composed from the keys of its non-adjacent form (power-of-two steps), one key switch
  per term, so :meth:`CkksBackend.rotation_plan` lists the keys a rotation really applies.
* Sizes (``ciphertext_bytes`` etc.) are the in-memory RNS sizes the device model uses
  (``N * limbs * 8`` bytes per polynomial), not the (compressed) serialised sizes.

Handles: :class:`Ciphertext` and :class:`Plaintext` wrap the library's object together with
the fingerprint of the key set that made it. Why: SEAL gives two key sets with the same
parameters the same ``parms_id``, so it would add a ciphertext of another key set (or decrypt
it) without complaint, producing garbage; the owner lets every op refuse it with a
:class:`CkksError`.

Serialised ciphertexts and contexts carry a versioned header (magic, version, backend,
parameter digest, key-set id) and a BLAKE2b checksum, so data from another context or key
set, and truncated or garbled data, are refused with a :class:`CkksError` before the
library parses anything.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import math
import os
import shutil
import struct
import tempfile
import threading
import time
import weakref
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from cryptoffload.errors import BackendUnavailable, ConfigError, CryptoffloadError

__all__ = [
    "CKKS_SECURITY_BITS", "DEFAULT_PARAMS", "KIND_CIPHERTEXT", "KIND_PLAINTEXT", "KIND_PUBLIC", "KIND_SECRET",
    "TRACE_SCHEMA", "CkksBackend", "CkksError", "CkksParams", "Ciphertext", "EmulatorBackend", "Plaintext",
    "SealBackend", "TracingEvaluator", "backend_from_context", "coeff_modulus_primes", "make_backend", "naf",
    "pack_frame", "peek_context", "power_of_two_steps", "register_backend", "unpack_frame",
]

TRACE_SCHEMA = "cryptoffload-he-trace/1"
WORD_BYTES = 8

#: Largest total coefficient-modulus size (bits) for 128-bit classical security with a ternary
#: secret, per ring dimension (HomomorphicEncryption.org standard, Table 1; SEAL's tc128 table).
CKKS_SECURITY_BITS: dict[int, int] = {1024: 27, 2048: 54, 4096: 109, 8192: 218, 16384: 438, 32768: 881}

MAX_PRIME_BITS = 60  # SEAL's limit for one RNS prime (SEAL_USER_MOD_BIT_COUNT_MAX)


class CkksError(CryptoffloadError):
    """A CKKS operation was misused (level/scale mismatch, missing key, foreign or corrupted data)."""


# --------------------------------------------------------------------------------------------
# parameters


@dataclass(frozen=True)
class CkksParams:
    """Ring dimension ``N``, RNS prime sizes (the last one special) and the default scale."""

    poly_modulus_degree: int
    coeff_mod_bits: tuple[int, ...]
    scale_bits: int

    def __post_init__(self) -> None:
        n = self.poly_modulus_degree
        if isinstance(n, bool) or not isinstance(n, int) or n < 1024 or n > 131072 or n & (n - 1):
            raise ConfigError(f"poly_modulus_degree must be a power of two from 1024 to 131072, got {n!r}")
        try:
            bits = tuple(self.coeff_mod_bits)
        except TypeError:
            raise ConfigError(f"coeff_mod_bits must be a sequence of prime sizes, got {self.coeff_mod_bits!r}") \
                from None
        # a prime = 1 mod 2N needs more bits than 2N itself
        lo = (2 * n).bit_length() + 1
        if len(bits) < 2 or any(isinstance(b, bool) or not isinstance(b, int) or not lo <= b <= MAX_PRIME_BITS
                                for b in bits):
            raise ConfigError(f"coeff_mod_bits must list at least 2 primes (data primes, then the special prime) "
                              f"of {lo} to {MAX_PRIME_BITS} bits for N = {n}, got {list(bits)!r}")
        object.__setattr__(self, "coeff_mod_bits", bits)
        s = self.scale_bits
        if isinstance(s, bool) or not isinstance(s, int) or not 1 <= s < sum(bits[:-1]):
            raise ConfigError(f"scale_bits must be between 1 and the data primes' total ({sum(bits[:-1])}), got {s!r}")

    @property
    def slots(self) -> int:
        return self.poly_modulus_degree // 2

    @property
    def levels(self) -> int:
        """Multiplicative depth: rescales available to a fresh ciphertext."""
        return len(self.coeff_mod_bits) - 2

    @property
    def data_primes(self) -> int:
        return len(self.coeff_mod_bits) - 1

    @property
    def scale(self) -> float:
        return float(2 ** self.scale_bits)

    @property
    def total_bits(self) -> int:
        return sum(self.coeff_mod_bits)

    def security_bound(self) -> int | None:
        return CKKS_SECURITY_BITS.get(self.poly_modulus_degree)

    @property
    def is_secure(self) -> bool:
        bound = self.security_bound()
        return bound is not None and self.total_bits <= bound

    def check_security(self, insecure_study: bool = False) -> None:
        """Refuse a modulus too large for 128-bit security at this ``N`` (a larger modulus means
        a smaller noise-to-modulus ratio and an easier lattice problem), unless the caller
        explicitly studies insecure parameters (``insecure_study=True``)."""
        if insecure_study or self.is_secure:
            return
        bound = self.security_bound()
        if bound is None:
            raise ConfigError(f"no 128-bit security bound is tabulated for N = {self.poly_modulus_degree} "
                              f"(known: {', '.join(map(str, CKKS_SECURITY_BITS))}); pass insecure_study=True "
                              "to use it for a study only")
        raise ConfigError(f"coeff_mod_bits {list(self.coeff_mod_bits)} total {self.total_bits} bits, above the "
                          f"{bound}-bit limit for 128-bit security at N = {self.poly_modulus_degree} "
                          "(HE standard); use fewer or smaller primes, a larger N, or insecure_study=True "
                          "for a study that will not protect real data")

    def ciphertext_bytes(self, level: int, size: int = 2) -> int:
        return size * self.poly_modulus_degree * (level + 1) * WORD_BYTES

    def plaintext_bytes(self, level: int) -> int:
        return self.poly_modulus_degree * (level + 1) * WORD_BYTES

    @property
    def ksk_bytes(self) -> int:
        """One key-switching key in SEAL's layout: one RLWE pair over all primes per data prime."""
        L = self.data_primes
        return L * 2 * (L + 1) * self.poly_modulus_degree * WORD_BYTES

    def to_dict(self) -> dict[str, Any]:
        """The trace schema's ``params`` object."""
        return {"poly_modulus_degree": self.poly_modulus_degree, "coeff_modulus_bits": list(self.coeff_mod_bits),
                "scale_bits": self.scale_bits, "slots": self.slots}

    @classmethod
    def from_dict(cls, raw: Any) -> "CkksParams":
        if not isinstance(raw, dict):
            raise CkksError("parameters must be an object")
        try:
            bits = raw.get("coeff_modulus_bits", raw.get("coeff_mod_bits"))
            return cls(int(raw["poly_modulus_degree"]), tuple(int(b) for b in bits), int(raw["scale_bits"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise CkksError(f"malformed parameters {raw!r}: {exc}") from None

    def digest(self) -> bytes:
        """16-byte digest identifying the parameters (part of every serialised header)."""
        canon = json.dumps([self.poly_modulus_degree, list(self.coeff_mod_bits), self.scale_bits]).encode()
        return hashlib.blake2b(canon, digest_size=16, person=b"ckks-params").digest()


DEFAULT_PARAMS = CkksParams(16384, (60, 30, 30, 30, 30, 30, 60), 30)


# --------------------------------------------------------------------------------------------
# primes (SEAL's CoeffModulus::Create, reproduced so the emulator needs no library)

_MR_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)  # deterministic below 3.3e24


def _is_prime(n: int) -> bool:
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
            if _is_prime(value):
                found.append(value)
            value -= factor
        if len(found) < count:
            raise ConfigError(f"not enough {b}-bit primes = 1 mod {factor} for N = {poly_modulus_degree}")
        table[b] = found
    return tuple(table[b].pop() for b in bits)


# --------------------------------------------------------------------------------------------
# rotations


def naf(value: int) -> list[int]:
    """Non-adjacent form of ``value`` as signed powers of two (SEAL's ``util::naf``): how SEAL
    composes a rotation whose step has no key of its own from power-of-two keys."""
    res = []
    sign = value < 0
    value = abs(value)
    i = 0
    while value:
        zi = (2 - (value & 3)) if value & 1 else 0
        value = (value - zi) >> 1
        if zi:
            res.append((-zi if sign else zi) * (1 << i))
        i += 1
    return res


def power_of_two_steps(slots: int) -> list[int]:
    """``1, -1, 2, -2, ...`` up to ``slots/2`` (whose left and right rotations coincide): the
    default key set, from which any step can be composed (SEAL's default Galois keys minus
    conjugation, which real-valued CKKS does not need)."""
    out: list[int] = []
    k = 1
    while k < slots:
        out.append(k)
        if k != slots // 2:
            out.append(-k)
        k *= 2
    return out


# --------------------------------------------------------------------------------------------
# handles


class Ciphertext:
    """An encrypted vector: the library's object (``raw``) and the fingerprint of its key set.

    Opaque to applications: ask the backend for ``level``/``scale``/sizes. Adapters create it
    with ``Ciphertext(raw, backend.fingerprint)``.
    """

    __slots__ = ("raw", "owner", "__weakref__")

    def __init__(self, raw: Any, owner: bytes) -> None:
        self.raw = raw
        self.owner = owner

    def __repr__(self) -> str:
        return f"<Ciphertext {type(self.raw).__name__} key set {self.owner.hex()[:8]}>"


class Plaintext:
    """An encoded (not encrypted) vector at a level and scale, bound to its context like a ciphertext."""

    __slots__ = ("raw", "owner", "__weakref__")

    def __init__(self, raw: Any, owner: bytes) -> None:
        self.raw = raw
        self.owner = owner

    def __repr__(self) -> str:
        return f"<Plaintext {type(self.raw).__name__} key set {self.owner.hex()[:8]}>"


# --------------------------------------------------------------------------------------------
# serialised framing: header + payload + checksum

_MAGIC = b"CKKS"
_VERSION = 1
KIND_CIPHERTEXT, KIND_PUBLIC, KIND_SECRET, KIND_PLAINTEXT = 1, 2, 3, 4
_KIND_NAMES = {KIND_CIPHERTEXT: "ciphertext", KIND_PUBLIC: "public context", KIND_SECRET: "secret context",
               KIND_PLAINTEXT: "plaintext"}
_HEADER = struct.Struct("<4sBB16s16s16sQ")  # magic, version, kind, backend, params digest, key id, payload len
_CHECK = 16


def _checksum(data: bytes | memoryview) -> bytes:
    return hashlib.blake2b(data, digest_size=_CHECK, person=b"ckks-frame").digest()


def pack_frame(kind: int, backend: str, params_digest: bytes, key_id: bytes, payload: bytes) -> bytes:
    """Frame ``payload`` with a versioned header and a checksum (public so other adapters can
    reuse it)."""
    head = _HEADER.pack(_MAGIC, _VERSION, kind, backend.encode()[:16].ljust(16, b"\0"), params_digest,
                        key_id, len(payload))
    body = head + payload
    return body + _checksum(body)


def unpack_frame(data: bytes, kind: int, backend: str, params_digest: bytes | None,
                 key_id: bytes | None) -> tuple[bytes, bytes, bytes]:
    """Check a frame and return ``(payload, key_id, params_digest)``; every refusal is a
    :class:`CkksError` that says what is wrong (not ours, truncated, corrupted, other
    backend/parameters/keys). ``None`` for ``params_digest``/``key_id`` accepts any (loading a
    context, whose parameters are inside the payload)."""
    what = _KIND_NAMES[kind]
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise CkksError(f"a serialised {what} is bytes, got {type(data).__name__}")
    data = bytes(data)
    if len(data) < _HEADER.size + _CHECK:
        if not data.startswith(_MAGIC[: len(data)]) or not data:
            raise CkksError(f"not a serialised CKKS {what} (bad magic)")
        raise CkksError(f"serialised {what} is truncated ({len(data)} bytes, header alone is "
                        f"{_HEADER.size + _CHECK})")
    magic, version, k, be, pd, kid, n = _HEADER.unpack_from(data)
    if magic != _MAGIC:
        raise CkksError(f"not a serialised CKKS {what} (bad magic {magic!r})")
    if version != _VERSION:
        raise CkksError(f"serialised {what} has format version {version}; this build reads version {_VERSION}")
    total = _HEADER.size + n + _CHECK
    if len(data) < total:
        raise CkksError(f"serialised {what} is truncated ({len(data)} of {total} bytes)")
    if len(data) > total:
        raise CkksError(f"serialised {what} has {len(data) - total} unexpected trailing bytes")
    if _checksum(memoryview(data)[: total - _CHECK]) != data[total - _CHECK:]:
        raise CkksError(f"serialised {what} is corrupted (checksum mismatch)")
    if k != kind:
        raise CkksError(f"expected a serialised {what}, got a {_KIND_NAMES.get(k, f'kind {k}')}")
    be_name = be.rstrip(b"\0").decode(errors="replace")
    if be_name != backend:
        raise CkksError(f"serialised {what} comes from the {be_name!r} backend, not {backend!r}")
    if params_digest is not None and pd != params_digest:
        raise CkksError(f"serialised {what} was made with other CKKS parameters than this context's")
    if key_id is not None and kid != key_id:
        raise CkksError(f"serialised {what} belongs to another key set (key id {kid.hex()[:8]}, "
                        f"this context {key_id.hex()[:8]}); it would decrypt to garbage")
    return data[_HEADER.size: _HEADER.size + n], kid, pd


def _pack_sections(header: dict[str, Any], sections: Sequence[tuple[str, bytes]]) -> bytes:
    header = dict(header, sections=[[name, len(blob)] for name, blob in sections])
    h = json.dumps(header, sort_keys=True).encode()
    return struct.pack("<I", len(h)) + h + b"".join(blob for _, blob in sections)


def _unpack_sections(payload: bytes, what: str) -> tuple[dict[str, Any], dict[str, bytes]]:
    try:
        (hl,) = struct.unpack_from("<I", payload)
        header = json.loads(payload[4: 4 + hl])
        pos = 4 + hl
        out = {}
        for name, size in header["sections"]:
            out[str(name)] = payload[pos: pos + int(size)]
            pos += int(size)
    except (struct.error, ValueError, KeyError, TypeError) as exc:
        raise CkksError(f"malformed {what}: {exc}") from None
    if pos != len(payload):
        raise CkksError(f"malformed {what}: section sizes do not add up")
    return header, out


def peek_context(data: bytes) -> tuple[str, int]:
    """``(backend name, kind)`` of a serialised context, without validating it."""
    if not isinstance(data, (bytes, bytearray, memoryview)) or len(data) < _HEADER.size + _CHECK:
        raise CkksError("not a serialised CKKS context (too short)")
    magic, _v, kind, be, *_ = _HEADER.unpack_from(bytes(data[: _HEADER.size]))
    if magic != _MAGIC:
        raise CkksError("not a serialised CKKS context (bad magic)")
    return be.rstrip(b"\0").decode(errors="replace"), kind


def _write_private(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` readable by the owner only (0600 from creation, not chmod afterwards, so
    the secret key is never briefly world-readable)."""
    p = Path(path)
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fd = -1
            fh.write(data)
    finally:
        if fd >= 0:
            os.close(fd)
    return p


# --------------------------------------------------------------------------------------------
# the interface


def _are_close(a: float, b: float) -> bool:
    """SEAL's ``util::are_close``: how strictly two scales must agree for an addition."""
    return abs(a - b) < np.finfo(float).eps * max(abs(a), abs(b), 1.0)


class CkksBackend(ABC):
    """CKKS on real-valued slot vectors. Every method returns new objects (inputs are not changed).

    The abstract methods are the contract other code is written against; the concrete ones
    (``sub_plain``, ``rotation_plan``, contexts to disk, ...) have defaults an adapter may
    improve.
    """

    name: str = "abstract"
    params: CkksParams
    #: True when ``rotate_many`` shares the key-switch decomposition across steps (hoisting).
    hoists_rotations: bool = False

    @property
    def slots(self) -> int:
        return self.params.slots

    @property
    def can_decrypt(self) -> bool:
        """False for a server-side backend built from a public context."""
        return True

    # -- keys ----------------------------------------------------------------------------
    @abstractmethod
    def keygen(self, rotations: Sequence[int] | None = None, relin: bool = True) -> None:
        """Make secret, public, relinearisation and Galois keys (``None``: power-of-two steps)."""

    # -- encoding and encryption -----------------------------------------------------------
    @abstractmethod
    def encode(self, values: Any, *, like: Ciphertext | None = None, level: int | None = None,
               scale: float | None = None) -> Plaintext: ...

    @abstractmethod
    def encrypt(self, values: Any) -> Ciphertext: ...

    @abstractmethod
    def decrypt(self, ct: Ciphertext) -> np.ndarray: ...

    # -- arithmetic ---------------------------------------------------------------------
    @abstractmethod
    def add(self, a: Ciphertext, b: Ciphertext) -> Ciphertext: ...

    @abstractmethod
    def sub(self, a: Ciphertext, b: Ciphertext) -> Ciphertext: ...

    @abstractmethod
    def negate(self, a: Ciphertext) -> Ciphertext: ...

    @abstractmethod
    def add_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext: ...

    @abstractmethod
    def mul_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext: ...

    @abstractmethod
    def mul(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        """Ciphertext product *without* relinearisation (size 3)."""

    @abstractmethod
    def relinearize(self, ct: Ciphertext) -> Ciphertext: ...

    @abstractmethod
    def rescale(self, ct: Ciphertext) -> Ciphertext:
        """Drop the last prime of the level, dividing the scale by it."""

    @abstractmethod
    def mod_switch_to(self, ct_or_pt: Ciphertext | Plaintext, level: int) -> Ciphertext | Plaintext:
        """Drop limbs down to ``level`` without rescaling."""

    @abstractmethod
    def rotate(self, ct: Ciphertext, steps: int) -> Ciphertext:
        """Left rotation by ``steps`` (negative: right)."""

    @abstractmethod
    def rotate_many(self, ct: Ciphertext, steps: Sequence[int]) -> list[Ciphertext]: ...

    # -- bookkeeping ---------------------------------------------------------------------
    @abstractmethod
    def level(self, ct: Ciphertext | Plaintext) -> int: ...

    @abstractmethod
    def scale(self, ct: Ciphertext | Plaintext) -> float: ...

    @abstractmethod
    def ciphertext_bytes(self, ct: Ciphertext) -> int: ...

    @abstractmethod
    def plaintext_bytes(self, pt: Plaintext) -> int: ...

    @abstractmethod
    def key_bytes(self) -> dict[str, int]: ...

    # -- serialisation -------------------------------------------------------------------
    @abstractmethod
    def serialize_ciphertext(self, ct: Ciphertext) -> bytes: ...

    @abstractmethod
    def deserialize_ciphertext(self, data: bytes) -> Ciphertext: ...

    @abstractmethod
    def public_context(self) -> bytes: ...

    @classmethod
    @abstractmethod
    def from_public_context(cls, data: bytes) -> "CkksBackend": ...

    # -- optional, with defaults -----------------------------------------------------------
    def sub_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        """``ct - pt``; default: add the negated encoding (adapters may use the library's op)."""
        return self.add_plain(ct, self.encode(-self._pt_values(pt), like=ct))

    def _pt_values(self, pt: Plaintext) -> np.ndarray:
        raise CkksError(f"{self.name}: sub_plain is not supported")

    def rotation_plan(self, steps: int) -> list[str]:
        """Names (``galois:<step>``) of the keys a rotation by ``steps`` applies, in order."""
        return [] if steps % self.slots == 0 else [f"galois:{steps}"]

    def secret_context(self) -> bytes:
        raise CkksError(f"the {self.name} backend cannot export its secret context")

    @classmethod
    def from_secret_context(cls, data: bytes) -> "CkksBackend":
        raise CkksError(f"the {cls.name} backend cannot import a secret context")

    def save_secret_context(self, path: str | os.PathLike[str]) -> Path:
        """Persist the client's keys, readable by the owner only (mode 0600)."""
        return _write_private(path, self.secret_context())

    @classmethod
    def load_secret_context(cls, path: str | os.PathLike[str]) -> "CkksBackend":
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise CkksError(f"{path}: cannot read the secret context ({exc})") from None
        return cls.from_secret_context(data)


# --------------------------------------------------------------------------------------------
# shared bookkeeping of the SEAL adapter and the emulator


class _CheckedBackend(CkksBackend):
    """Checks and key registry shared by :class:`SealBackend` and :class:`EmulatorBackend`, so
    both refuse the same misuse with the same message (the emulator exists to find packing
    mistakes before they cost a real run)."""

    def __init__(self, params: CkksParams, *, insecure_study: bool = False) -> None:
        if not isinstance(params, CkksParams):
            raise ConfigError(f"params must be a CkksParams, got {type(params).__name__}")
        params.check_security(insecure_study)
        self.params = params
        self.insecure_study = insecure_study
        self.primes = coeff_modulus_primes(params.poly_modulus_degree, params.coeff_mod_bits)
        # bits of the product of the data primes of each level: SEAL's scale bound at that level
        self._level_bits = [math.prod(self.primes[: lv + 1]).bit_length() for lv in range(params.levels + 1)]
        self._key_id: bytes | None = None
        self._fp_cache: tuple[bytes, bytes] | None = None
        self._has_secret = False
        self._has_relin = False
        self._galois: dict[int, str] = {}  # step mod slots -> key name (galois:<step as asked>)

    # -- identity ------------------------------------------------------------------------
    @property
    def key_id(self) -> bytes:
        if self._key_id is None:
            raise CkksError(f"{self.name}: no keys yet; call keygen() first")
        return self._key_id

    @property
    def fingerprint(self) -> bytes:
        """Identifies parameters + key set: what a ciphertext must match to be used here."""
        kid = self.key_id
        cached = self._fp_cache
        if cached is None or cached[0] != kid:
            fp = hashlib.blake2b(self.params.digest() + kid + self.name.encode(), digest_size=16).digest()
            self._fp_cache = cached = (kid, fp)
        return cached[1]

    @property
    def can_decrypt(self) -> bool:
        return self._has_secret

    @property
    def rotation_steps(self) -> list[int]:
        """Steps with a Galois key of their own (as passed to keygen)."""
        return [int(n.split(":", 1)[1]) for n in self._galois.values()]

    @property
    def has_relin_keys(self) -> bool:
        return self._has_relin

    def _normalise_steps(self, rotations: Sequence[int] | None) -> dict[int, str]:
        steps = power_of_two_steps(self.slots) if rotations is None else list(rotations)
        out: dict[int, str] = {}
        for s in steps:
            if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
                raise CkksError(f"rotation steps must be integers, got {s!r}")
            s = int(s)
            if abs(s) >= self.slots:
                raise CkksError(f"rotation step {s} is out of range: |step| < slots = {self.slots}")
            if s % self.slots == 0:
                continue  # rotation by 0 needs no key
            out.setdefault(s % self.slots, f"galois:{s}")
        return out

    # -- validation helpers -------------------------------------------------------------------
    @abstractmethod
    def _meta(self, obj: Ciphertext | Plaintext) -> tuple[int, float, int]:
        """``(level, scale, size)`` of an object already checked to be ours (size 1 for plaintexts)."""

    def _own(self, obj: Any, kind: type | tuple[type, ...], op: str) -> Any:
        if not isinstance(obj, kind):
            what = " or ".join(k.__name__ for k in kind) if isinstance(kind, tuple) else kind.__name__
            raise CkksError(f"{op}: expected a {what}, got {type(obj).__name__}")
        if obj.owner != self.fingerprint:
            raise CkksError(f"{op}: the {type(obj).__name__.lower()} belongs to another context or key set "
                            f"({obj.owner.hex()[:8]}, this one {self.fingerprint.hex()[:8]})")
        return obj.raw

    def _same_level(self, op: str, a: Any, b: Any) -> int:
        la, lb = self._meta(a)[0], self._meta(b)[0]
        if la != lb:
            raise CkksError(f"{op}: level mismatch ({la} vs {lb}); mod_switch_to the lower level first")
        return la

    def _same_scale(self, op: str, a: Any, b: Any) -> None:
        sa, sb = self._meta(a)[1], self._meta(b)[1]
        if not _are_close(sa, sb):
            raise CkksError(f"{op}: scale mismatch (2^{math.log2(sa):.4f} vs 2^{math.log2(sb):.4f}); encode the "
                            "plaintext with like=ct, or rescale both operands the same way")

    def _scale_in_bounds(self, op: str, scale: float, level: int) -> None:
        """SEAL's ``is_scale_within_bounds``: log2(scale) below the modulus bits at the level."""
        if not scale > 0 or int(math.log2(scale)) >= self._level_bits[level]:
            raise CkksError(f"{op}: scale 2^{math.log2(scale) if scale > 0 else float('nan'):.1f} is out of bounds "
                            f"at level {level} ({self._level_bits[level]}-bit modulus); rescale first")

    def _size2(self, op: str, ct: Ciphertext) -> None:
        size = self._meta(ct)[2]
        if size != 2:
            raise CkksError(f"{op}: needs a size-2 ciphertext, got size {size}; relinearize first")

    def _need_relin(self, op: str, ct: Ciphertext) -> None:
        size = self._meta(ct)[2]
        if not self._has_relin:
            raise CkksError(f"{op}: no relinearisation key (keygen(relin=True))")
        if size == 2:
            raise CkksError(f"{op}: the ciphertext is already size 2 (relinearize once, after mul)")
        if size > 3:
            raise CkksError(f"{op}: size {size} needs more relinearisation keys than exist; "
                            "relinearize after every mul")

    def _need_secret(self, op: str) -> None:
        if not self._has_secret:
            raise CkksError(f"{op}: this backend holds no secret key (built from a public context, or no keygen)")

    def _need_public(self, op: str) -> None:
        if self._key_id is None:
            raise CkksError(f"{op}: no keys yet; call keygen() first")

    def _rescale_level(self, ct: Ciphertext) -> int:
        lv = self._meta(ct)[0]
        if lv == 0:
            raise CkksError("rescale: the ciphertext is at level 0 (end of the modulus chain); "
                            "the program needs more levels than the parameters give")
        return lv

    def _target_level(self, obj: Any, level: int) -> int:
        cur = self._meta(obj)[0]
        if isinstance(level, bool) or not isinstance(level, (int, np.integer)) or not 0 <= level <= cur:
            raise CkksError(f"mod_switch_to: target level {level!r} must be between 0 and the current level {cur}")
        return int(level)

    def rotation_plan(self, steps: int) -> list[str]:
        """SEAL's rotation: the step's own key if it has one, else one key per term of its NAF
        (recursively; a term of ``slots`` is the identity and skipped); refused if a key is missing."""
        if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)):
            raise CkksError(f"rotate: steps must be an integer, got {steps!r}")
        steps = int(steps)
        if abs(steps) >= self.slots:
            raise CkksError(f"rotate: step {steps} is out of range: |step| < slots = {self.slots}")

        def plan(s: int) -> list[str]:
            if s == 0:
                return []
            key = self._galois.get(s % self.slots)
            if key is not None:
                return [key]
            terms = naf(s)
            if len(terms) == 1:
                raise KeyError(s)
            return [k for t in terms if abs(t) != self.slots for k in plan(t)]

        try:
            return plan(steps)
        except KeyError as exc:
            have = sorted(self.rotation_steps, key=lambda x: (abs(x), x))
            raise CkksError(f"rotate: no Galois key for step {steps} (missing {exc.args[0]}; "
                            f"keys: {have[:12]}{' ...' if len(have) > 12 else ''}); "
                            "pass it to keygen(rotations=...)") from None

    # -- values ----------------------------------------------------------------------------
    def _values(self, values: Any, op: str = "encode") -> np.ndarray:
        """Real slot vector, zero-padded to ``slots``; a scalar fills every slot (as SEAL's
        scalar encode does)."""
        if isinstance(values, Plaintext):
            raise CkksError(f"{op}: values are already a Plaintext")
        arr = np.asarray(values)
        if arr.dtype.kind == "c":
            if np.any(arr.imag != 0):
                raise CkksError(f"{op}: only real values are supported")
            arr = arr.real
        try:
            arr = np.asarray(arr, dtype=np.float64)
        except (TypeError, ValueError):
            raise CkksError(f"{op}: values must be real numbers") from None
        if arr.ndim == 0:
            arr = np.full(self.slots, float(arr))
        if arr.ndim != 1:
            raise CkksError(f"{op}: values must be one-dimensional, got shape {arr.shape}")
        if arr.size > self.slots:
            raise CkksError(f"{op}: {arr.size} values do not fit in {self.slots} slots")
        if not np.all(np.isfinite(arr)):
            raise CkksError(f"{op}: values must be finite")
        if arr.size < self.slots:
            arr = np.concatenate([arr, np.zeros(self.slots - arr.size)])
        return arr

    def _encode_target(self, like: Ciphertext | None, level: int | None, scale: float | None) -> tuple[int, float]:
        if like is not None:
            if level is not None or scale is not None:
                raise CkksError("encode: give like= or level=/scale=, not both")
            self._own(like, Ciphertext, "encode(like=)")
            lv, sc, _ = self._meta(like)
            return lv, sc
        lv = self.params.levels if level is None else level
        if isinstance(lv, bool) or not isinstance(lv, (int, np.integer)) or not 0 <= lv <= self.params.levels:
            raise CkksError(f"encode: level {level!r} must be between 0 and {self.params.levels}")
        sc = self.params.scale if scale is None else float(scale)
        # SEAL's encoder bound: log2(scale) + 1 below the modulus bits
        if not sc > 0 or int(math.log2(sc)) + 1 >= self._level_bits[int(lv)]:
            raise CkksError(f"encode: scale {sc!r} is out of bounds at level {lv} ({self._level_bits[int(lv)]} bits)")
        return int(lv), sc

    # -- bookkeeping -------------------------------------------------------------------------
    def level(self, ct: Ciphertext | Plaintext) -> int:
        self._own(ct, (Ciphertext, Plaintext), "level")
        return self._meta(ct)[0]

    def scale(self, ct: Ciphertext | Plaintext) -> float:
        self._own(ct, (Ciphertext, Plaintext), "scale")
        return self._meta(ct)[1]

    def size(self, ct: Ciphertext) -> int:
        """Number of polynomials (2, or 3 after mul)."""
        self._own(ct, Ciphertext, "size")
        return self._meta(ct)[2]

    def ciphertext_bytes(self, ct: Ciphertext) -> int:
        self._own(ct, Ciphertext, "ciphertext_bytes")
        lv, _, size = self._meta(ct)
        return self.params.ciphertext_bytes(lv, size)

    def plaintext_bytes(self, pt: Plaintext) -> int:
        self._own(pt, Plaintext, "plaintext_bytes")
        return self.params.plaintext_bytes(self._meta(pt)[0])

    def key_bytes(self) -> dict[str, int]:
        """In-memory sizes of the evaluation keys, SEAL's layout (one RLWE pair over all primes
        per data prime), named as in traces."""
        out: dict[str, int] = {}
        if self._has_relin:
            out["relin"] = self.params.ksk_bytes
        for name in self._galois.values():
            out[name] = self.params.ksk_bytes
        return out

    def rotate_many(self, ct: Ciphertext, steps: Sequence[int]) -> list[Ciphertext]:
        """Not hoisted: SEAL's API has no hoisted rotation (the key-switch decomposition of the
        input is recomputed per step), so this loops; the emulator does the same."""
        return [self.rotate(ct, s) for s in steps]

    def _frame(self, kind: int, payload: bytes) -> bytes:
        return pack_frame(kind, self.name, self.params.digest(), self.key_id, payload)

    def _unframe(self, data: bytes, kind: int) -> bytes:
        return unpack_frame(data, kind, self.name, self.params.digest(), self.key_id)[0]


def _load_context_header(cls: Any, data: bytes,
                         kind: int) -> tuple[CkksParams, dict[str, Any], dict[str, bytes], bytes]:
    """Validate a serialised context of backend ``cls.name``: ``(params, header, sections, key_id)``."""
    be, _k = peek_context(data)
    if be != cls.name:
        raise CkksError(f"the context comes from the {be!r} backend, not {cls.name!r}")
    payload, key_id, pd = unpack_frame(data, kind, cls.name, None, None)
    header, sections = _unpack_sections(payload, _KIND_NAMES[kind])
    params = CkksParams.from_dict(header.get("params"))
    if params.digest() != pd:
        raise CkksError(f"serialised {_KIND_NAMES[kind]}: its parameters do not match its header")
    return params, header, sections, key_id


# --------------------------------------------------------------------------------------------
# SEAL


def _sealapi() -> Any:
    try:
        import tenseal.sealapi as sealapi  # noqa: PLC0415 -- optional native dependency
    except Exception as exc:  # ImportError, or an OSError loading the extension
        raise BackendUnavailable(f"the SEAL backend needs tenseal (tenseal.sealapi): {exc}") from None
    return sealapi


class _SealIO:
    """Byte (de)serialisation through files: the tenseal bindings only save/load to a path.

    Files live in a private directory (mode 0700), on ``/dev/shm`` when it exists so that key
    material never reaches a disk, and are removed at once.
    """

    _lock = threading.Lock()
    _dir: str | None = None
    _n = 0

    @classmethod
    def _path(cls) -> str:
        with cls._lock:
            if cls._dir is None or not os.path.isdir(cls._dir):
                base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
                cls._dir = tempfile.mkdtemp(prefix="cryptoffload-ckks-", dir=base)
                atexit.register(shutil.rmtree, cls._dir, True)
            cls._n += 1
            return os.path.join(cls._dir, f"{os.getpid()}-{threading.get_ident()}-{cls._n}")

    @classmethod
    def dump(cls, obj: Any) -> bytes:
        path = cls._path()
        try:
            obj.save(path)
            with open(path, "rb") as fh:
                return fh.read()
        finally:
            if os.path.exists(path):
                os.unlink(path)

    @classmethod
    def load(cls, obj: Any, context: Any, data: bytes) -> Any:
        path = cls._path()
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            obj.load(context, path)
            return obj
        finally:
            if os.path.exists(path):
                os.unlink(path)


class _seal_errors:
    """Turn SEAL's exceptions (std::invalid_argument -> ValueError, logic_error -> RuntimeError)
    into :class:`CkksError`, naming the op."""

    def __init__(self, op: str) -> None:
        self.op = op

    def __enter__(self) -> None:
        return None

    def __exit__(self, et: Any, ev: Any, tb: Any) -> bool:
        if et is not None and issubclass(et, (ValueError, RuntimeError, IndexError, TypeError)) \
                and not issubclass(et, CryptoffloadError):
            raise CkksError(f"{self.op}: SEAL refused: {ev}") from ev
        return False


class SealBackend(_CheckedBackend):
    """CKKS on Microsoft SEAL (through ``tenseal.sealapi``), single-threaded as SEAL is.

    SEAL throws when an op's result would be *transparent* (not encrypted at all: a product
    with an all-zero plaintext, or ``a - a``). Zero weights and masks are legitimate in packed
    networks, so such a result is replaced by a fresh public-key encryption of zero with the
    level, scale and size the op would have produced.
    """

    name = "seal"
    hoists_rotations = False

    def __init__(self, params: CkksParams = DEFAULT_PARAMS, *, insecure_study: bool = False) -> None:
        super().__init__(params, insecure_study=insecure_study)
        s = self._s = _sealapi()
        ep = s.EncryptionParameters(s.SCHEME_TYPE.CKKS)
        ep.set_poly_modulus_degree(params.poly_modulus_degree)
        with _seal_errors("parameters"):
            ep.set_coeff_modulus(s.CoeffModulus.Create(params.poly_modulus_degree, list(params.coeff_mod_bits)))
            sec = s.SEC_LEVEL_TYPE.NONE if insecure_study else s.SEC_LEVEL_TYPE.TC128
            self._ctx = s.SEALContext(ep, True, sec)
        if not self._ctx.parameters_set():
            raise ConfigError(f"SEAL refuses the parameters: {self._ctx.parameters_error_message()}")
        got = tuple(m.value() for m in ep.coeff_modulus())
        if got != self.primes:  # the emulator's bookkeeping relies on this
            raise CkksError(f"SEAL picked primes {got}, expected {self.primes}")
        self._parms_ids: list[Any] = [None] * (params.levels + 1)
        self._level_of: dict[tuple[int, ...], int] = {}
        cd = self._ctx.first_context_data()
        while cd is not None:
            lv = cd.chain_index()
            pid = cd.parms_id()
            self._parms_ids[lv] = pid
            self._level_of[tuple(pid)] = lv
            cd = cd.next_context_data()
        self._encoder = s.CKKSEncoder(self._ctx)
        self._ev = s.Evaluator(self._ctx)
        self._sk = self._pk = self._rk = self._gk = self._kg = None
        self._encryptor = self._decryptor = None
        self._blobs: dict[str, bytes] = {}  # compact serialised keys, for contexts

    # -- keys ------------------------------------------------------------------------------
    def keygen(self, rotations: Sequence[int] | None = None, relin: bool = True) -> None:
        """A fresh key set (a new key id: ciphertexts of the previous key set are refused)."""
        if self._key_id is not None and not self._has_secret:
            raise CkksError("keygen: a backend from a public context cannot make keys (no secret key)")
        s = self._s
        steps = self._normalise_steps(rotations)
        with _seal_errors("keygen"):
            kg = s.KeyGenerator(self._ctx)
            sk = kg.secret_key()
            pk = s.PublicKey()
            kg.create_public_key(pk)
        self._sk, self._pk = sk, pk
        self._blobs = {"public": _SealIO.dump(pk)}
        self._key_id = hashlib.blake2b(self._blobs["public"], digest_size=16, person=b"ckks-keyset").digest()
        self._has_secret = True
        self._encryptor = s.Encryptor(self._ctx, pk)
        self._decryptor = s.Decryptor(self._ctx, sk)
        self._rk = self._gk = None
        self._has_relin = False
        self._galois = {}
        if relin:
            with _seal_errors("keygen"):
                blob = _SealIO.dump(kg.create_relin_keys())  # seeded: half the size
                self._rk = _SealIO.load(s.RelinKeys(), self._ctx, blob)
            self._blobs["relin"] = blob
            self._has_relin = True
        self._kg = kg
        self._make_galois(steps)

    def add_rotation_keys(self, steps: Sequence[int]) -> None:
        """Add Galois keys for more steps to the current key set (same secret key and key id)."""
        self._need_secret("add_rotation_keys")
        new = {k: v for k, v in self._normalise_steps(steps).items() if k not in self._galois}
        if new:
            self._make_galois({**self._galois, **new})

    def _make_galois(self, steps: dict[int, str]) -> None:
        self._galois = dict(steps)
        self._gk = None
        self._blobs.pop("galois", None)
        if not steps:
            return
        # Galois elements, not steps: the binding's first overload takes a list of non-negative
        # ints as *elements*, so a list of positive steps would silently make the wrong keys
        elts = [self._galois_elt(step) for step in steps]
        with _seal_errors("keygen"):
            blob = _SealIO.dump(self._kg.create_galois_keys(elts))
            self._gk = _SealIO.load(self._s.GaloisKeys(), self._ctx, blob)
        self._blobs["galois"] = blob

    def _galois_elt(self, step: int) -> int:
        """SEAL's ``GaloisTool::get_elt_from_step`` for a left rotation by ``step`` (mod slots):
        ``3**step mod 2N``."""
        return pow(3, step % self.slots, 2 * self.params.poly_modulus_degree)

    # -- meta ------------------------------------------------------------------------------
    def _meta(self, obj: Ciphertext | Plaintext) -> tuple[int, float, int]:
        raw = obj.raw
        lv = self._level_of[tuple(raw.parms_id())]
        return lv, raw.scale, (raw.size() if isinstance(obj, Ciphertext) else 1)

    def _ct_out(self, raw: Any) -> Ciphertext:
        return Ciphertext(raw, self.fingerprint)

    # -- encoding ---------------------------------------------------------------------------
    def encode(self, values: Any, *, like: Ciphertext | None = None, level: int | None = None,
               scale: float | None = None) -> Plaintext:
        self._need_public("encode")
        lv, sc = self._encode_target(like, level, scale)
        vals = self._values(values)
        pt = self._s.Plaintext()
        with _seal_errors("encode"):
            self._encoder.encode(vals.tolist(), self._parms_ids[lv], sc, pt)
        return Plaintext(pt, self.fingerprint)

    def encrypt(self, values: Any, *, level: int | None = None, scale: float | None = None) -> Ciphertext:
        """Public-key encryption of ``values`` (or of a :class:`Plaintext`)."""
        self._need_public("encrypt")
        pt = values if isinstance(values, Plaintext) else self.encode(values, level=level, scale=scale)
        raw_pt = self._own(pt, Plaintext, "encrypt")
        ct = self._s.Ciphertext()
        with _seal_errors("encrypt"):
            self._encryptor.encrypt(raw_pt, ct)
        return self._ct_out(ct)

    def decrypt(self, ct: Ciphertext) -> np.ndarray:
        raw = self._own(ct, Ciphertext, "decrypt")
        self._need_secret("decrypt")
        pt = self._s.Plaintext()
        with _seal_errors("decrypt"):
            self._decryptor.decrypt(raw, pt)
            return np.asarray(self._encoder.decode_double(pt), dtype=np.float64)

    def decode(self, pt: Plaintext) -> np.ndarray:
        raw = self._own(pt, Plaintext, "decode")
        with _seal_errors("decode"):
            return np.asarray(self._encoder.decode_double(raw), dtype=np.float64)

    def _pt_values(self, pt: Plaintext) -> np.ndarray:
        return self.decode(pt)

    # -- arithmetic -------------------------------------------------------------------------
    def _binary(self, op: str, fn: str, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        ra, rb = self._own(a, Ciphertext, op), self._own(b, Ciphertext, op)
        self._same_level(op, a, b)
        self._same_scale(op, a, b)
        out = self._s.Ciphertext()
        with _seal_errors(op):
            if not self._transparent_safe(getattr(self._ev, fn), ra, rb, out):
                la, sa, za = self._meta(a)
                return self._zero(la, sa, max(za, self._meta(b)[2]))
        return self._ct_out(out)

    @staticmethod
    def _transparent_safe(fn: Callable[..., Any], *args: Any) -> bool:
        """Run a SEAL op; False when SEAL refuses its result as *transparent* (not encrypted:
        ``ct * 0`` or ``a - a``), which SEAL is built to throw on."""
        try:
            fn(*args)
        except RuntimeError as exc:
            if "transparent" in str(exc):
                return False
            raise
        return True

    def _zero(self, level: int, scale: float, size: int) -> Ciphertext:
        """A fresh public-key encryption of zero standing for a transparent result, with the
        level, scale and size the op would have produced (so the bookkeeping matches the
        emulator's), instead of an unencrypted ciphertext or an error on legitimate zero
        weights and masks."""
        out = self._s.Ciphertext()
        with _seal_errors("encrypt zero"):
            self._encryptor.encrypt_zero(self._parms_ids[level], out)
            out.scale = scale
            if size > 2:
                out.resize(size)
        return self._ct_out(out)

    def add(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        return self._binary("add", "add", a, b)

    def sub(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        return self._binary("sub", "sub", a, b)

    def negate(self, a: Ciphertext) -> Ciphertext:
        ra = self._own(a, Ciphertext, "negate")
        out = self._s.Ciphertext()
        with _seal_errors("negate"):
            self._ev.negate(ra, out)
        return self._ct_out(out)

    def _plain(self, op: str, fn: str, ct: Ciphertext, pt: Plaintext, same_scale: bool) -> Ciphertext:
        rc, rp = self._own(ct, Ciphertext, op), self._own(pt, Plaintext, op)
        lv = self._same_level(op, ct, pt)
        _, sc, size = self._meta(ct)
        if same_scale:
            self._same_scale(op, ct, pt)
        else:
            sc *= self._meta(pt)[1]
            self._scale_in_bounds(op, sc, lv)
        out = self._s.Ciphertext()
        with _seal_errors(op):
            if not self._transparent_safe(getattr(self._ev, fn), rc, rp, out):
                return self._zero(lv, sc, size)
        return self._ct_out(out)

    def add_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        return self._plain("add_plain", "add_plain", ct, pt, True)

    def sub_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        return self._plain("sub_plain", "sub_plain", ct, pt, True)

    def mul_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        return self._plain("mul_plain", "multiply_plain", ct, pt, False)

    def mul(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        ra, rb = self._own(a, Ciphertext, "mul"), self._own(b, Ciphertext, "mul")
        lv = self._same_level("mul", a, b)
        self._scale_in_bounds("mul", self._meta(a)[1] * self._meta(b)[1], lv)
        out = self._s.Ciphertext()
        with _seal_errors("mul"):
            self._ev.multiply(ra, rb, out)
        return self._ct_out(out)

    def relinearize(self, ct: Ciphertext) -> Ciphertext:
        raw = self._own(ct, Ciphertext, "relinearize")
        self._need_relin("relinearize", ct)
        out = self._s.Ciphertext()
        with _seal_errors("relinearize"):
            self._ev.relinearize(raw, self._rk, out)
        return self._ct_out(out)

    def rescale(self, ct: Ciphertext) -> Ciphertext:
        raw = self._own(ct, Ciphertext, "rescale")
        self._rescale_level(ct)
        out = self._s.Ciphertext()
        with _seal_errors("rescale"):
            self._ev.rescale_to_next(raw, out)
        return self._ct_out(out)

    def mod_switch_to(self, ct_or_pt: Ciphertext | Plaintext, level: int) -> Ciphertext | Plaintext:
        if isinstance(ct_or_pt, Plaintext):
            raw = self._own(ct_or_pt, Plaintext, "mod_switch_to")
            lv = self._target_level(ct_or_pt, level)
            out_pt = self._s.Plaintext()
            with _seal_errors("mod_switch_to"):
                self._ev.mod_switch_to(raw, self._parms_ids[lv], out_pt)
            return Plaintext(out_pt, self.fingerprint)
        raw = self._own(ct_or_pt, Ciphertext, "mod_switch_to")
        lv = self._target_level(ct_or_pt, level)
        self._scale_in_bounds("mod_switch_to", self._meta(ct_or_pt)[1], lv)
        out = self._s.Ciphertext()
        with _seal_errors("mod_switch_to"):
            self._ev.mod_switch_to(raw, self._parms_ids[lv], out)
        return self._ct_out(out)

    def rotate(self, ct: Ciphertext, steps: int) -> Ciphertext:
        raw = self._own(ct, Ciphertext, "rotate")
        plan = self.rotation_plan(steps)  # refuses a missing key with the same message as the emulator
        self._size2("rotate", ct)
        out = self._s.Ciphertext()
        with _seal_errors("rotate"):
            if not plan:
                self._ev.mod_switch_to(raw, raw.parms_id(), out)  # a copy
            else:
                self._ev.rotate_vector(raw, int(steps), self._gk, out)
        return self._ct_out(out)

    # -- serialisation -------------------------------------------------------------------------
    def serialize_ciphertext(self, ct: Ciphertext) -> bytes:
        raw = self._own(ct, Ciphertext, "serialize_ciphertext")
        with _seal_errors("serialize_ciphertext"):
            return self._frame(KIND_CIPHERTEXT, _SealIO.dump(raw))

    def deserialize_ciphertext(self, data: bytes) -> Ciphertext:
        payload = self._unframe(data, KIND_CIPHERTEXT)
        with _seal_errors("deserialize_ciphertext"):
            raw = _SealIO.load(self._s.Ciphertext(), self._ctx, payload)
        if tuple(raw.parms_id()) not in self._level_of:
            raise CkksError("deserialize_ciphertext: the ciphertext is not at a data level of this context")
        return self._ct_out(raw)

    def serialize_plaintext(self, pt: Plaintext) -> bytes:
        raw = self._own(pt, Plaintext, "serialize_plaintext")
        return self._frame(KIND_PLAINTEXT, _SealIO.dump(raw))

    def deserialize_plaintext(self, data: bytes) -> Plaintext:
        payload = self._unframe(data, KIND_PLAINTEXT)
        with _seal_errors("deserialize_plaintext"):
            raw = _SealIO.load(self._s.Plaintext(), self._ctx, payload)
        return Plaintext(raw, self.fingerprint)

    def _context(self, kind: int) -> bytes:
        self._need_public("public_context")
        sections = [("public", self._blobs["public"])]
        if "relin" in self._blobs:
            sections.append(("relin", self._blobs["relin"]))
        if "galois" in self._blobs:
            sections.append(("galois", self._blobs["galois"]))
        if kind == KIND_SECRET:
            self._need_secret("secret_context")
            sections.append(("secret", _SealIO.dump(self._sk)))
        header = {"params": self.params.to_dict(), "galois": sorted(self._galois.items()),
                  "insecure_study": self.insecure_study}
        return self._frame(kind, _pack_sections(header, sections))

    def public_context(self) -> bytes:
        """Parameters + public, relinearisation and Galois keys; never the secret key."""
        return self._context(KIND_PUBLIC)

    def secret_context(self) -> bytes:
        """Everything, secret key included: for the client to persist its keys (see
        :meth:`save_secret_context`, which writes with mode 0600)."""
        return self._context(KIND_SECRET)

    @classmethod
    def _from_context(cls, data: bytes, kind: int, insecure_study: bool) -> "SealBackend":
        params, header, sec, key_id = _load_context_header(cls, data, kind)
        self = cls(params, insecure_study=insecure_study)
        if "public" not in sec or (kind == KIND_SECRET and "secret" not in sec):
            raise CkksError(f"serialised {_KIND_NAMES[kind]} lacks its keys")
        s = self._s
        with _seal_errors("load context"):
            self._pk = _SealIO.load(s.PublicKey(), self._ctx, sec["public"])
            if "relin" in sec:
                self._rk = _SealIO.load(s.RelinKeys(), self._ctx, sec["relin"])
            if "galois" in sec:
                self._gk = _SealIO.load(s.GaloisKeys(), self._ctx, sec["galois"])
            if kind == KIND_SECRET:
                self._sk = _SealIO.load(s.SecretKey(), self._ctx, sec["secret"])
        if hashlib.blake2b(sec["public"], digest_size=16, person=b"ckks-keyset").digest() != key_id:
            raise CkksError("the context's public key does not match its key id")
        self._blobs = {k: v for k, v in sec.items() if k != "secret"}
        self._key_id = key_id
        self._has_relin = "relin" in sec
        self._galois = {int(k): str(v) for k, v in header.get("galois", [])}
        self._encryptor = s.Encryptor(self._ctx, self._pk)
        if kind == KIND_SECRET:
            self._has_secret = True
            self._decryptor = s.Decryptor(self._ctx, self._sk)
            self._kg = s.KeyGenerator(self._ctx, self._sk)
        return self

    @classmethod
    def from_public_context(cls, data: bytes, *, insecure_study: bool = False) -> "SealBackend":
        """A server-side backend: evaluates (and encrypts) but cannot decrypt."""
        return cls._from_context(data, KIND_PUBLIC, insecure_study)

    @classmethod
    def from_secret_context(cls, data: bytes, *, insecure_study: bool = False) -> "SealBackend":
        return cls._from_context(data, KIND_SECRET, insecure_study)

    def measured_key_bytes(self) -> dict[str, int]:
        """Key sizes counted from SEAL's key objects (checks :meth:`key_bytes`' formula)."""
        out: dict[str, int] = {}

        def size(keys: Any) -> int:
            return sum(pk.data().size() * pk.data().coeff_modulus_size() * self.params.poly_modulus_degree
                       * WORD_BYTES for pk in keys)

        if self._rk is not None:
            out["relin"] = sum(size(v) for v in self._rk.data())
        if self._gk is not None:
            for step, name in self._galois.items():
                out[name] = size(self._gk.key(self._galois_elt(step)))
        return out

    def serialized_key_bytes(self) -> dict[str, int]:
        """Sizes of the compact (seeded, compressed) serialised keys, as shipped in contexts."""
        return {k: len(v) for k, v in self._blobs.items()}


# --------------------------------------------------------------------------------------------
# emulator


@dataclass(frozen=True)
class _Emu:
    values: np.ndarray
    level: int
    scale: float
    size: int = 2


class EmulatorBackend(_CheckedBackend):
    """NOT ENCRYPTION. Exact float64 arithmetic on the slot vectors, with CKKS's bookkeeping.

    Why: packing logic (rotations, masks, level and scale management) can be tested in
    milliseconds, and a program that runs here runs on SEAL: levels, scales (the same primes,
    so rescaled scales are bit-identical), sizes, key requirements and refusals are SEAL's.
    Values are kept exactly (no noise), so a result is the ideal CKKS result; an
    :class:`EmulatorBackend` "ciphertext" holds its values in the clear, serialised ones too.
    Difference: the emulator refuses to decrypt a value whose polynomial coefficients overflow
    the modulus at its level (SEAL silently returns garbage there); noise is not modelled.
    """

    name = "emulator"
    hoists_rotations = False

    def __init__(self, params: CkksParams = DEFAULT_PARAMS, *, insecure_study: bool = False) -> None:
        super().__init__(params, insecure_study=insecure_study)
        self._roots: np.ndarray | None = None

    def coefficients(self, values: np.ndarray) -> np.ndarray:
        """The real polynomial whose canonical embedding is ``values`` (unscaled): slot ``i``
        is its value at the primitive ``2N``-th root ``zeta**(3**i mod 2N)``, the conjugate root
        carries the conjugate (SEAL's slot order: generator 3, as in its Galois elements). Why:
        overflow in CKKS is a property of these coefficients times the scale, not of the
        slot values (a sparse vector can hold values far larger than a dense one)."""
        n = self.params.poly_modulus_degree
        m = 2 * n
        if self._roots is None:
            roots = np.empty(self.slots, dtype=np.int64)
            r = 1
            for i in range(self.slots):
                roots[i] = r
                r = r * 3 % m
            self._roots = roots
        spectrum = np.zeros(m, dtype=np.complex128)
        spectrum[self._roots] = values
        spectrum[m - self._roots] = values  # real values: the conjugate is the value itself
        return np.fft.fft(spectrum)[:n].real / n

    def _coeff_bits(self, values: np.ndarray, scale: float) -> float:
        peak = float(np.max(np.abs(self.coefficients(values)))) * scale
        return math.log2(peak) if peak > 0 else float("-inf")

    def keygen(self, rotations: Sequence[int] | None = None, relin: bool = True) -> None:
        if self._key_id is not None and not self._has_secret:
            raise CkksError("keygen: a backend from a public context cannot make keys (no secret key)")
        steps = self._normalise_steps(rotations)
        self._key_id = os.urandom(16)
        self._has_secret = True
        self._has_relin = bool(relin)
        self._galois = steps

    def add_rotation_keys(self, steps: Sequence[int]) -> None:
        self._need_secret("add_rotation_keys")
        for k, v in self._normalise_steps(steps).items():
            self._galois.setdefault(k, v)

    def _meta(self, obj: Ciphertext | Plaintext) -> tuple[int, float, int]:
        e = obj.raw
        return e.level, e.scale, (e.size if isinstance(obj, Ciphertext) else 1)

    def _out(self, values: np.ndarray, level: int, scale: float, size: int = 2) -> Ciphertext:
        return Ciphertext(_Emu(values, level, scale, size), self.fingerprint)

    def encode(self, values: Any, *, like: Ciphertext | None = None, level: int | None = None,
               scale: float | None = None) -> Plaintext:
        self._need_public("encode")
        lv, sc = self._encode_target(like, level, scale)
        vals = self._values(values)
        # SEAL's encoder check: bits of the largest scaled coefficient vs the modulus bits
        if math.ceil(max(self._coeff_bits(vals, sc), 0.0)) >= self._level_bits[lv]:
            raise CkksError(f"encode: encoded values are too large for the {self._level_bits[lv]}-bit modulus "
                            f"at level {lv}")
        return Plaintext(_Emu(vals, lv, sc, 1), self.fingerprint)

    def encrypt(self, values: Any, *, level: int | None = None, scale: float | None = None) -> Ciphertext:
        self._need_public("encrypt")
        pt = values if isinstance(values, Plaintext) else self.encode(values, level=level, scale=scale)
        e = self._own(pt, Plaintext, "encrypt")
        return self._out(e.values.copy(), e.level, e.scale)

    def decrypt(self, ct: Ciphertext) -> np.ndarray:
        e = self._own(ct, Ciphertext, "decrypt")
        self._need_secret("decrypt")
        bits = self._coeff_bits(e.values, e.scale)
        if bits >= math.log2(math.prod(self.primes[: e.level + 1]) / 2):
            raise CkksError(f"decrypt: a coefficient of 2^{bits:.1f} (values x scale 2^{math.log2(e.scale):.1f}) "
                            f"overflows the {self._level_bits[e.level]}-bit modulus at level {e.level}; real CKKS "
                            "would return garbage: rescale earlier or keep values smaller")
        return e.values.copy()

    def decode(self, pt: Plaintext) -> np.ndarray:
        return self._own(pt, Plaintext, "decode").values.copy()

    def _pt_values(self, pt: Plaintext) -> np.ndarray:
        return self.decode(pt)

    def add(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        ea, eb = self._own(a, Ciphertext, "add"), self._own(b, Ciphertext, "add")
        self._same_level("add", a, b)
        self._same_scale("add", a, b)
        return self._out(ea.values + eb.values, ea.level, ea.scale, max(ea.size, eb.size))

    def sub(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        ea, eb = self._own(a, Ciphertext, "sub"), self._own(b, Ciphertext, "sub")
        self._same_level("sub", a, b)
        self._same_scale("sub", a, b)
        return self._out(ea.values - eb.values, ea.level, ea.scale, max(ea.size, eb.size))

    def negate(self, a: Ciphertext) -> Ciphertext:
        e = self._own(a, Ciphertext, "negate")
        return self._out(-e.values, e.level, e.scale, e.size)

    def add_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        e, p = self._own(ct, Ciphertext, "add_plain"), self._own(pt, Plaintext, "add_plain")
        self._same_level("add_plain", ct, pt)
        self._same_scale("add_plain", ct, pt)
        return self._out(e.values + p.values, e.level, e.scale, e.size)

    def sub_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        e, p = self._own(ct, Ciphertext, "sub_plain"), self._own(pt, Plaintext, "sub_plain")
        self._same_level("sub_plain", ct, pt)
        self._same_scale("sub_plain", ct, pt)
        return self._out(e.values - p.values, e.level, e.scale, e.size)

    def mul_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        e, p = self._own(ct, Ciphertext, "mul_plain"), self._own(pt, Plaintext, "mul_plain")
        lv = self._same_level("mul_plain", ct, pt)
        self._scale_in_bounds("mul_plain", e.scale * p.scale, lv)
        return self._out(e.values * p.values, lv, e.scale * p.scale, e.size)

    def mul(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        ea, eb = self._own(a, Ciphertext, "mul"), self._own(b, Ciphertext, "mul")
        lv = self._same_level("mul", a, b)
        self._scale_in_bounds("mul", ea.scale * eb.scale, lv)
        return self._out(ea.values * eb.values, lv, ea.scale * eb.scale, ea.size + eb.size - 1)

    def relinearize(self, ct: Ciphertext) -> Ciphertext:
        e = self._own(ct, Ciphertext, "relinearize")
        self._need_relin("relinearize", ct)
        return self._out(e.values.copy(), e.level, e.scale, 2)

    def rescale(self, ct: Ciphertext) -> Ciphertext:
        e = self._own(ct, Ciphertext, "rescale")
        lv = self._rescale_level(ct)
        return self._out(e.values.copy(), lv - 1, e.scale / float(self.primes[lv]), e.size)

    def mod_switch_to(self, ct_or_pt: Ciphertext | Plaintext, level: int) -> Ciphertext | Plaintext:
        if isinstance(ct_or_pt, Plaintext):
            p = self._own(ct_or_pt, Plaintext, "mod_switch_to")
            lv = self._target_level(ct_or_pt, level)
            return Plaintext(_Emu(p.values.copy(), lv, p.scale, 1), self.fingerprint)
        e = self._own(ct_or_pt, Ciphertext, "mod_switch_to")
        lv = self._target_level(ct_or_pt, level)
        self._scale_in_bounds("mod_switch_to", e.scale, lv)
        return self._out(e.values.copy(), lv, e.scale, e.size)

    def rotate(self, ct: Ciphertext, steps: int) -> Ciphertext:
        e = self._own(ct, Ciphertext, "rotate")
        self.rotation_plan(steps)
        self._size2("rotate", ct)
        return self._out(np.roll(e.values, -int(steps)), e.level, e.scale, e.size)

    # -- serialisation ------------------------------------------------------------------------
    def serialize_ciphertext(self, ct: Ciphertext) -> bytes:
        e = self._own(ct, Ciphertext, "serialize_ciphertext")
        return self._frame(KIND_CIPHERTEXT, struct.pack("<BdB", e.level, e.scale, e.size)
                           + e.values.astype("<f8").tobytes())

    def deserialize_ciphertext(self, data: bytes) -> Ciphertext:
        payload = self._unframe(data, KIND_CIPHERTEXT)
        if len(payload) != 10 + 8 * self.slots:
            raise CkksError("deserialize_ciphertext: malformed emulator ciphertext")
        lv, sc, size = struct.unpack_from("<BdB", payload)
        if lv > self.params.levels or size < 2:
            raise CkksError("deserialize_ciphertext: malformed emulator ciphertext")
        vals = np.frombuffer(payload, dtype="<f8", offset=10).astype(np.float64)
        return self._out(vals, lv, sc, size)

    def _context(self, kind: int) -> bytes:
        self._need_public("public_context")
        if kind == KIND_SECRET:
            self._need_secret("secret_context")
        header = {"params": self.params.to_dict(), "galois": sorted(self._galois.items()), "relin": self._has_relin,
                  "insecure_study": self.insecure_study}
        return self._frame(kind, _pack_sections(header, []))

    def public_context(self) -> bytes:
        return self._context(KIND_PUBLIC)

    def secret_context(self) -> bytes:
        return self._context(KIND_SECRET)

    @classmethod
    def _from_context(cls, data: bytes, kind: int, insecure_study: bool) -> "EmulatorBackend":
        params, header, _sec, key_id = _load_context_header(cls, data, kind)
        self = cls(params, insecure_study=insecure_study)
        self._key_id = key_id
        self._has_relin = bool(header.get("relin"))
        self._galois = {int(k): str(v) for k, v in header.get("galois", [])}
        self._has_secret = kind == KIND_SECRET
        return self

    @classmethod
    def from_public_context(cls, data: bytes, *, insecure_study: bool = False) -> "EmulatorBackend":
        return cls._from_context(data, KIND_PUBLIC, insecure_study)

    @classmethod
    def from_secret_context(cls, data: bytes, *, insecure_study: bool = False) -> "EmulatorBackend":
        return cls._from_context(data, KIND_SECRET, insecure_study)


# --------------------------------------------------------------------------------------------
# factory

_REGISTRY: dict[str, Callable[..., CkksBackend]] = {}


def register_backend(name: str, factory: Callable[..., CkksBackend]) -> None:
    """Let an adapter module register itself (``factory(params, **kw)``)."""
    _REGISTRY[name.lower()] = factory


def _openfhe_factory() -> Callable[..., CkksBackend]:
    try:
        import importlib

        mod = importlib.import_module("cryptoffload.crypto.ckks_openfhe")
    except Exception as exc:  # ImportError (openfhe not installed), or its native library failing to load
        raise BackendUnavailable(f"the OpenFHE CKKS backend is unavailable: {type(exc).__name__}: {exc}") from None
    if "openfhe" in _REGISTRY:
        return _REGISTRY["openfhe"]
    for attr in ("OpenFheBackend", "OpenFHEBackend", "OpenfheBackend"):
        if isinstance(getattr(mod, attr, None), type):
            return getattr(mod, attr)
    for value in vars(mod).values():
        if isinstance(value, type) and issubclass(value, CkksBackend) and getattr(value, "name", "") == "openfhe":
            return value
    raise BackendUnavailable("cryptoffload.crypto.ckks_openfhe defines no CkksBackend named 'openfhe'")


def make_backend(name: str = "seal", params: CkksParams = DEFAULT_PARAMS, **kw: Any) -> CkksBackend:
    """``"seal"`` (default), ``"emulator"`` (not encryption) or ``"openfhe"`` (lazy import).

    Keyword arguments go to the backend (``insecure_study=True`` to allow parameters beyond
    the 128-bit-security bound). Keys are not made here: call ``keygen``.
    """
    key = str(name).lower()
    if key == "seal":
        _sealapi()
        return SealBackend(params, **kw)
    if key == "emulator":
        return EmulatorBackend(params, **kw)
    if key == "openfhe":
        return _openfhe_factory()(params, **kw)
    if key in _REGISTRY:
        return _REGISTRY[key](params, **kw)
    raise ConfigError(f"unknown CKKS backend {name!r} (known: seal, emulator, openfhe"
                      + "".join(f", {k}" for k in _REGISTRY if k not in ("seal", "emulator", "openfhe")) + ")")


def backend_from_context(data: bytes, **kw: Any) -> CkksBackend:
    """Rebuild a backend from a public or secret context, whichever backend made it."""
    be, kind = peek_context(data)
    cls: Any = {"seal": SealBackend, "emulator": EmulatorBackend}.get(be)
    if cls is None and be == "openfhe":
        cls = _openfhe_factory()
    if cls is None:
        raise CkksError(f"the context comes from an unknown backend {be!r}")
    if kind == KIND_SECRET:
        return cls.from_secret_context(data, **kw)
    if kind == KIND_PUBLIC:
        return cls.from_public_context(data, **kw)
    raise CkksError(f"not a context (a {_KIND_NAMES.get(kind, kind)})")


# --------------------------------------------------------------------------------------------
# tracing


class TracingEvaluator:
    """Wraps a backend, runs every op on it and records a ``cryptoffload-he-trace/1`` trace.

    Why: the in-storage study needs the program an encrypted inference really runs -- op
    order, levels, which weights and keys each op reads, and sizes -- to model when bytes must
    reach the accelerator; measuring the ops here also gives the CPU baseline (``wall_s``).

    Naming: each op gets an integer ``id``, its output the same id. A ciphertext the tracer
    did not produce (encrypted or deserialised elsewhere) is a *program input*, named by
    :meth:`name_input` or ``input:<k>`` on first use, with its size in ``input_bytes``. A
    plaintext from :meth:`encode` is an ``encode`` op (a stored weight); ``*_plain`` ops name it
    in ``plaintext`` and give ``plaintext_bytes``. A rotation that the library composes from
    several keys is recorded as one ``rotate`` op per key switch (wall time split evenly); a
    ``mod_switch_to`` over several levels as one ``mod_switch`` per dropped level, as SEAL does.
    Non-op methods (``level``, sizes, serialisation, ...) pass through unrecorded.
    """

    def __init__(self, backend: CkksBackend, *, phase: str | None = None, name: str = "he-trace") -> None:
        self.backend = backend
        self.name = name
        self._phase = phase
        self._ops: list[dict[str, Any]] = []
        self._names: dict[int, Any] = {}
        self._pinned: list[Any] = []  # objects that cannot be weak-referenced
        self._inputs: dict[str, int] = {}
        self._n_inputs = 0
        self._n_plain = 0

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.backend, attr)

    # -- phases and names ----------------------------------------------------------------------
    def set_phase(self, name: str | None) -> None:
        """Label the following ops (a layer name such as ``conv1``)."""
        self._phase = name

    @property
    def phase(self) -> str | None:
        return self._phase

    def _bind(self, obj: Any, name: Any) -> None:
        key = id(obj)
        self._names[key] = name
        try:
            weakref.finalize(obj, self._names.pop, key, None)
        except TypeError:
            self._pinned.append(obj)

    def name_input(self, ct: Ciphertext, name: str) -> Ciphertext:
        """Name a program input (e.g. the client's ``image``) before its first use."""
        if not isinstance(name, str) or not name or name.isdigit():
            raise CkksError(f"an input name must be a non-numeric string, got {name!r}")
        self._bind(ct, name)
        self._inputs[name] = self.backend.ciphertext_bytes(ct)
        return ct

    def _ref(self, ct: Any) -> Any:
        name = self._names.get(id(ct))
        if name is None:
            name = f"input:{self._n_inputs}"
            self._n_inputs += 1
            self.name_input(ct, name)
        return name

    def _pt_ref(self, pt: Any) -> Any:
        name = self._names.get(id(pt))
        if name is None:
            name = f"pt:{self._n_plain}"
            self._n_plain += 1
            self._bind(pt, name)
        return name

    # -- recording -----------------------------------------------------------------------------
    def _record(self, op: str, level: int, inputs: list[Any], bytes_in: int, bytes_out: int, wall: float,
                keys: Sequence[str] = (), **extra: Any) -> int:
        i = len(self._ops)
        rec: dict[str, Any] = {"id": i, "op": op, "level": int(level), "inputs": inputs, "output": i,
                               "bytes_in": int(bytes_in), "bytes_out": int(bytes_out), "keys": list(keys)}
        rec.update(extra)
        rec["wall_s"] = wall
        rec["phase"] = self._phase or ""
        self._ops.append(rec)
        return i

    def _timed(self, fn: Callable[..., Any], *args: Any) -> tuple[Any, float]:
        t = time.perf_counter()
        out = fn(*args)
        return out, time.perf_counter() - t

    @property
    def _vec(self) -> int:
        return self.backend.slots * WORD_BYTES

    def _ctb(self, ct: Any) -> int:
        return self.backend.ciphertext_bytes(ct)

    def _unary(self, op: str, fn: Callable[..., Any], ct: Ciphertext, *args: Any, keys: Sequence[str] = ()) -> Any:
        lv = self.backend.level(ct)
        ref = self._ref(ct)
        out, wall = self._timed(fn, ct, *args)
        self._bind(out, self._record(op, lv, [ref], self._ctb(ct), self._ctb(out), wall, keys))
        return out

    def _binary(self, op: str, fn: Callable[..., Any], a: Ciphertext, b: Ciphertext) -> Any:
        lv = self.backend.level(a)
        refs = [self._ref(a), self._ref(b)]
        out, wall = self._timed(fn, a, b)
        self._bind(out, self._record(op, lv, refs, self._ctb(a) + self._ctb(b), self._ctb(out), wall))
        return out

    def _plain_op(self, op: str, fn: Callable[..., Any], ct: Ciphertext, pt: Plaintext) -> Any:
        lv = self.backend.level(ct)
        ref, pref = self._ref(ct), self._pt_ref(pt)
        out, wall = self._timed(fn, ct, pt)
        self._bind(out, self._record(op, lv, [ref], self._ctb(ct), self._ctb(out), wall, (), plaintext=pref,
                                     plaintext_bytes=self.backend.plaintext_bytes(pt)))
        return out

    # -- the backend's methods, recorded ------------------------------------------------------
    def keygen(self, rotations: Sequence[int] | None = None, relin: bool = True) -> None:
        self.backend.keygen(rotations, relin)

    def encode(self, values: Any, *, like: Ciphertext | None = None, level: int | None = None,
               scale: float | None = None, name: str | None = None) -> Plaintext:
        """Encode (recorded as a host-side ``encode`` op: the output is a stored weight);
        ``name`` is a label kept in the record (``"name"``)."""
        pt, wall = self._timed(lambda: self.backend.encode(values, like=like, level=level, scale=scale))
        extra = {"name": name} if name else {}
        nb = self.backend.plaintext_bytes(pt)
        # bytes_in of a host-side encode/encrypt: the float64 slot vector it reads
        self._bind(pt, self._record("encode", self.backend.level(pt), [], self._vec, nb, wall, **extra))
        return pt

    def encrypt(self, values: Any, *, name: str | None = None) -> Ciphertext:
        """Encrypt (a host-side ``encrypt`` op, whose output is a program input in DRAM)."""
        ct, wall = self._timed(self.backend.encrypt, values)
        extra = {"name": name} if name else {}
        nb = self._ctb(ct)
        self._bind(ct, self._record("encrypt", self.backend.level(ct), [], self._vec, nb, wall, **extra))
        return ct

    def decrypt(self, ct: Ciphertext) -> np.ndarray:
        lv = self.backend.level(ct)
        ref = self._ref(ct)
        out, wall = self._timed(self.backend.decrypt, ct)
        self._record("decrypt", lv, [ref], self._ctb(ct), max(1, out.nbytes), wall)
        return out

    def add(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        return self._binary("add", self.backend.add, a, b)

    def sub(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        return self._binary("sub", self.backend.sub, a, b)

    def mul(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        return self._binary("mul", self.backend.mul, a, b)

    def negate(self, a: Ciphertext) -> Ciphertext:
        return self._unary("negate", self.backend.negate, a)

    def add_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        return self._plain_op("add_plain", self.backend.add_plain, ct, pt)

    def sub_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        return self._plain_op("sub_plain", self.backend.sub_plain, ct, pt)

    def mul_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        return self._plain_op("mul_plain", self.backend.mul_plain, ct, pt)

    def relinearize(self, ct: Ciphertext) -> Ciphertext:
        return self._unary("relinearize", self.backend.relinearize, ct, keys=("relin",))

    def rescale(self, ct: Ciphertext) -> Ciphertext:
        return self._unary("rescale", self.backend.rescale, ct)

    def mod_switch_to(self, ct_or_pt: Ciphertext | Plaintext, level: int) -> Ciphertext | Plaintext:
        be = self.backend
        cur = be.level(ct_or_pt)
        if isinstance(ct_or_pt, Plaintext):
            ref = self._pt_ref(ct_or_pt)
            out, wall = self._timed(be.mod_switch_to, ct_or_pt, level)
            # a plaintext at another level is another stored weight: a host-side encode
            self._bind(out, self._record("encode", be.level(out), [], be.plaintext_bytes(ct_or_pt),
                                         be.plaintext_bytes(out), wall, **{"from": ref}))
            return out
        ref = self._ref(ct_or_pt)
        out, wall = self._timed(be.mod_switch_to, ct_or_pt, level)
        if level == cur:
            self._bind(out, ref)
            return out
        polys = self._ctb(ct_or_pt) // be.params.ciphertext_bytes(cur, 1)
        n = cur - int(level)
        for lv in range(cur, int(level), -1):
            ref = self._record("mod_switch", lv, [ref], be.params.ciphertext_bytes(lv, polys),
                               be.params.ciphertext_bytes(lv - 1, polys), wall / n)
        self._bind(out, ref)
        return out

    def _rotation_records(self, ct: Ciphertext, steps: int, wall: float, ref: Any, **extra: Any) -> Any:
        plan = self.backend.rotation_plan(steps)
        lv = self.backend.level(ct)
        nb = self._ctb(ct)
        for key in plan:
            ref = self._record("rotate", lv, [ref], nb, nb, wall / len(plan), (key,), step=int(steps), **extra)
        return ref

    def rotate(self, ct: Ciphertext, steps: int) -> Ciphertext:
        ref = self._ref(ct)
        out, wall = self._timed(self.backend.rotate, ct, steps)
        self._bind(out, self._rotation_records(ct, steps, wall, ref))
        return out

    def rotate_many(self, ct: Ciphertext, steps: Sequence[int]) -> list[Ciphertext]:
        """Recorded per step (wall time split evenly over the key switches); ``hoisted`` marks
        a backend that shares the decomposition across steps."""
        steps = list(steps)
        ref = self._ref(ct)
        outs, wall = self._timed(self.backend.rotate_many, ct, steps)
        switches = sum(len(self.backend.rotation_plan(s)) for s in steps) or 1
        extra = {"hoisted": True} if getattr(self.backend, "hoists_rotations", False) else {}
        for s, out in zip(steps, outs):
            share = wall * len(self.backend.rotation_plan(s)) / switches
            self._bind(out, self._rotation_records(ct, s, share, ref, **extra))
        return outs

    def deserialize_ciphertext(self, data: bytes, *, name: str | None = None) -> Ciphertext:
        """Deserialise; the ciphertext is a program input (named ``name`` or ``input:<k>``)."""
        ct = self.backend.deserialize_ciphertext(data)
        if name:
            self.name_input(ct, name)
        return ct

    # -- output ----------------------------------------------------------------------------
    @property
    def ops(self) -> list[dict[str, Any]]:
        return self._ops

    def trace(self) -> dict[str, Any]:
        """The JSON trace (schema ``cryptoffload-he-trace/1``)."""
        be = self.backend
        return {
            "schema": TRACE_SCHEMA,
            "name": self.name,
            "backend": be.name,
            "params": be.params.to_dict(),
            "key_bytes": dict(be.key_bytes()),
            "input_bytes": dict(self._inputs),
            "ops": [dict(op) for op in self._ops],
        }

    def save(self, path: str | os.PathLike[str]) -> Path:
        p = Path(path)
        p.write_text(json.dumps(self.trace(), indent=None), encoding="utf-8")
        return p

    def summary(self) -> dict[str, Any]:
        """Op counts and summed wall time per op (host-side ops included)."""
        counts: dict[str, int] = {}
        walls: dict[str, float] = {}
        for op in self._ops:
            counts[op["op"]] = counts.get(op["op"], 0) + 1
            walls[op["op"]] = walls.get(op["op"], 0.0) + op["wall_s"]
        return {"ops": len(self._ops), "counts": counts, "wall_s": walls}

