"""Real block-cipher encryption for the ten ciphers of the encrypting web server (Niwa, Maeda, Yamaguchi, IPSJ TACS 2005).

Why this module exists: the FPGA-reconfiguration study simulates a server that encrypts each
requested file with the client's cipher. To calibrate that simulator with this machine's software
speed (instead of a 2005 Pentium 4), the same ten ciphers must really run here. The canonical
names and their order are fixed, because the simulator identifies a cipher by its index
(``cipher`` id 0..9 = position in :data:`CIPHERS`; the paper assigns client id mod 10).

What runs where (a *backend* is a library implementing a cipher):

* ``"openssl"`` -- OpenSSL through the ``cryptography`` package: AES, Camellia, 3DES. Single
  DES is deliberately *not* emulated as TripleDES(k, k, k): that performs three DES passes and
  would report a third of DES's real speed.
* ``"libgcrypt"`` -- the system libgcrypt through ctypes (:mod:`._gcrypt`): AES, DES, 3DES,
  Camellia-128, Serpent-128, Twofish-128. It is the library the paper benchmarked.
* RC6 has no implementation in libgcrypt, OpenSSL or Botan 2 and this project does not write its
  own; ``rc6-ecb`` therefore raises :class:`~cryptoffload.errors.BackendUnavailable` and
  calibration lists it as unavailable (the paper itself derived RC6's speed from a cycle count).

Modes are plain ECB and CBC without padding, as in the paper's cipher list: data must be whole
blocks. :func:`pad_pkcs7` / :func:`unpad_pkcs7` are provided for callers with arbitrary lengths.

Weak keys: libgcrypt refuses the 64 weak, semi-weak and possibly-weak DES keys. So that a key
works or fails the same way whichever backend runs it, this module refuses them on every
backend for ``des-*`` and (per 8-byte part) ``3des-*``, with :class:`WeakKeyError`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Callable, NamedTuple, Protocol

from cryptoffload.crypto import _gcrypt
from cryptoffload.crypto._gcrypt import WeakKeyError
from cryptoffload.errors import BackendUnavailable, ConfigError, CryptoffloadError

if TYPE_CHECKING:
    from cryptography.hazmat.backends.openssl.backend import Backend as OsslBackend
    from cryptography.hazmat.primitives.ciphers import Cipher, CipherAlgorithm, modes
    from cryptography.hazmat.primitives.ciphers import CipherContext as OsslContext

__all__ = [
    "BACKENDS",
    "CIPHERS",
    "DISPLAY_NAMES",
    "CipherContext",
    "CipherSpec",
    "PaddingError",
    "WeakKeyError",
    "available_ciphers",
    "backend_versions",
    "backends_for",
    "block_size",
    "cipher_index",
    "cipher_spec",
    "decrypt",
    "encrypt",
    "is_weak_des_key",
    "iv_size",
    "key_size",
    "open_context",
    "pad_pkcs7",
    "random_iv",
    "random_key",
    "request_encryptor",
    "unavailable_reason",
    "unpad_pkcs7",
]

#: Canonical cipher names; the position is the simulator's cipher id (client id mod 10).
CIPHERS: tuple[str, ...] = (
    "rc6-ecb",
    "camellia",
    "des-ecb",
    "des-cbc",
    "aes-ecb",
    "aes-cbc",
    "3des-ecb",
    "3des-cbc",
    "serpent",
    "twofish",
)

#: Names as printed in the paper's Table 2, for tables placed beside it.
DISPLAY_NAMES: dict[str, str] = {
    "rc6-ecb": "RC6-ECB",
    "camellia": "Camellia",
    "des-ecb": "DES-ECB",
    "des-cbc": "DES-CBC",
    "aes-ecb": "AES-ECB",
    "aes-cbc": "AES-CBC",
    "3des-ecb": "3DES-ECB",
    "3des-cbc": "3DES-CBC",
    "serpent": "SERPENT",
    "twofish": "TWOFISH",
}

#: Every backend this module knows, in no particular order (see :func:`backends_for`).
BACKENDS: tuple[str, ...] = ("openssl", "libgcrypt")


class PaddingError(CryptoffloadError):
    """PKCS#7 padding is malformed (wrong key, corrupted or truncated ciphertext)."""


@dataclass(frozen=True)
class CipherSpec:
    """What a canonical cipher name means: primitive, mode and sizes in bytes."""

    name: str
    index: int
    display: str
    algo: str  # primitive: aes, des, 3des, camellia, serpent, twofish, rc6
    mode: str  # "ecb" or "cbc"
    key_size: int
    block_size: int

    @property
    def iv_size(self) -> int:
        """Bytes of IV the mode needs: the block size for CBC, 0 for ECB."""
        return self.block_size if self.mode == "cbc" else 0


# primitive -> (key bytes, block bytes). 128-bit keys for the 128-bit-block ciphers, as in the
# paper (SERPENT128-ECB, TWOFISH128-ECB, Camellia-128, AES-128); 3DES is three-key (24 bytes).
_PRIMITIVES: dict[str, tuple[int, int]] = {
    "rc6": (16, 16),
    "camellia": (16, 16),
    "des": (8, 8),
    "aes": (16, 16),
    "3des": (24, 8),
    "serpent": (16, 16),
    "twofish": (16, 16),
}

_NAME_TO_ALGO_MODE: dict[str, tuple[str, str]] = {
    "rc6-ecb": ("rc6", "ecb"),
    "camellia": ("camellia", "ecb"),
    "des-ecb": ("des", "ecb"),
    "des-cbc": ("des", "cbc"),
    "aes-ecb": ("aes", "ecb"),
    "aes-cbc": ("aes", "cbc"),
    "3des-ecb": ("3des", "ecb"),
    "3des-cbc": ("3des", "cbc"),
    "serpent": ("serpent", "ecb"),
    "twofish": ("twofish", "ecb"),
}

_SPECS: dict[str, CipherSpec] = {
    name: CipherSpec(
        name=name,
        index=i,
        display=DISPLAY_NAMES[name],
        algo=_NAME_TO_ALGO_MODE[name][0],
        mode=_NAME_TO_ALGO_MODE[name][1],
        key_size=_PRIMITIVES[_NAME_TO_ALGO_MODE[name][0]][0],
        block_size=_PRIMITIVES[_NAME_TO_ALGO_MODE[name][0]][1],
    )
    for i, name in enumerate(CIPHERS)
}

# Preferred backend order per primitive, fastest first, as measured by `calibrate` on an x86-64
# Xeon with AES-NI/VAES/AVX-512 (OpenSSL 4.0 in cryptography 50.0.2, libgcrypt 1.10.1), per
# 24 KiB request: AES openssl ~1.5x libgcrypt; Camellia openssl ~1.03x (a tie); 3DES libgcrypt
# ~1.35x openssl. The order only picks the default when the caller names no backend; calibration
# always measures every backend and records the fastest of this machine in the profile.
_PREFERENCE: dict[str, tuple[str, ...]] = {
    "aes": ("openssl", "libgcrypt"),
    "camellia": ("openssl", "libgcrypt"),
    "3des": ("libgcrypt", "openssl"),
    "des": ("libgcrypt",),
    "serpent": ("libgcrypt",),
    "twofish": ("libgcrypt",),
    "rc6": (),
}


# --- name lookup ----------------------------------------------------------------------------


def cipher_spec(name: str) -> CipherSpec:
    """The :class:`CipherSpec` of a canonical name; an unknown name raises ConfigError."""
    try:
        return _SPECS[name]
    except (KeyError, TypeError):
        raise ConfigError(f"unknown cipher {name!r} (known: {', '.join(CIPHERS)})") from None


def cipher_index(name: str) -> int:
    """Simulator cipher id of ``name`` (its position in :data:`CIPHERS`)."""
    return cipher_spec(name).index


def block_size(name: str) -> int:
    """Block size in bytes; data passed to :func:`encrypt` must be a multiple of it."""
    return cipher_spec(name).block_size


def key_size(name: str) -> int:
    """Key size in bytes (16 for the 128-bit ciphers, 8 for DES, 24 for 3DES)."""
    return cipher_spec(name).key_size


def iv_size(name: str) -> int:
    """IV size in bytes: the block size for CBC ciphers, 0 for ECB ciphers."""
    return cipher_spec(name).iv_size


# --- DES weak keys --------------------------------------------------------------------------

_WEAK_HALF_HI = (0x00, 0x1E, 0xE0, 0xFE)
_WEAK_HALF_LO = {0x00: 0x00, 0x1E: 0x0E, 0xE0: 0xF0, 0xFE: 0xFE}


def _weak_des_keys() -> frozenset[bytes]:
    # The 64 keys libgcrypt refuses (4 weak, 12 semi-weak, 48 possibly weak), with parity bits
    # cleared: each is built from byte values whose key-schedule halves C and D are constant or
    # alternating. Bytes 0-3 take values in {00,1E,E0,FE} with XOR 0, bytes 4-7 mirror them as
    # {00,0E,F0,FE}. Pinned against libgcrypt over all 65,536 keys of that shape in the tests.
    keys = set()
    for a in _WEAK_HALF_HI:
        for b in _WEAK_HALF_HI:
            for c in _WEAK_HALF_HI:
                d = a ^ b ^ c
                hi = (a, b, c, d)
                keys.add(bytes(hi + tuple(_WEAK_HALF_LO[x] for x in hi)))
    return frozenset(keys)


_WEAK_DES_KEYS = _weak_des_keys()


def is_weak_des_key(key: bytes) -> bool:
    """True for an 8-byte DES key that is weak, semi-weak or possibly weak (parity ignored)."""
    if len(key) != 8:
        raise ConfigError(f"a DES key is 8 bytes, got {len(key)}")
    return bytes(b & 0xFE for b in key) in _WEAK_DES_KEYS


def _check_weak(spec: CipherSpec, key: bytes) -> None:
    if spec.algo == "des":
        if is_weak_des_key(key):
            raise WeakKeyError(
                f"{spec.name}: weak DES key {key.hex()} refused (one of the 64 weak, semi-weak "
                "or possibly-weak keys); use random_key()"
            )
    elif spec.algo == "3des":
        for i in range(3):
            part = key[8 * i : 8 * i + 8]
            if is_weak_des_key(part):
                raise WeakKeyError(
                    f"{spec.name}: key part {i + 1} ({part.hex()}) is a weak DES key and is "
                    "refused; use random_key()"
                )


# --- backends -------------------------------------------------------------------------------


class _BackendContext(Protocol):
    def update(self, data: bytes) -> bytes: ...

    def close(self) -> None: ...


class _Backend(Protocol):
    name: str

    def reason(self, algo: str, mode: str) -> str | None:
        """None when this backend can run algo/mode here, else a short reason."""

    def one_shot(
        self, algo: str, mode: str, key: bytes, iv: bytes | None, data: bytes, decrypt: bool
    ) -> bytes: ...

    def context(
        self, algo: str, mode: str, key: bytes, iv: bytes | None, decrypt: bool
    ) -> _BackendContext: ...


class _OpenSSLContext:
    __slots__ = ("_ctx",)

    def __init__(self, ctx: OsslContext) -> None:
        self._ctx: OsslContext | None = ctx

    def update(self, data: bytes) -> bytes:
        if self._ctx is None:
            raise ValueError("the cipher context is closed")
        return self._ctx.update(data)

    def close(self) -> None:
        if self._ctx is not None:
            self._ctx.finalize()  # whole blocks only, so nothing is left to flush
            self._ctx = None


class _OpenSSLModules(NamedTuple):
    """What ``cryptography`` gives the OpenSSL backend, imported once."""

    backend: OsslBackend
    cipher: type[Cipher[modes.ECB | modes.CBC]]
    mode_types: _Modes
    algos: dict[str, Callable[[bytes], CipherAlgorithm]]


class _Modes(Protocol):
    """The two modes we run (``cryptography.hazmat.primitives.ciphers.modes``)."""

    def ECB(self) -> modes.ECB: ...  # noqa: N802 -- the module's names

    def CBC(self, iv: bytes) -> modes.CBC: ...  # noqa: N802


class _OpenSSLBackend:
    """OpenSSL via ``cryptography``: AES, Camellia and 3DES in ECB/CBC."""

    name = "openssl"

    def __init__(self) -> None:
        self._mods: _OpenSSLModules | None = None
        self._import_error: str | None = None

    def _modules(self) -> _OpenSSLModules:
        if self._mods is None and self._import_error is None:
            try:
                from cryptography.hazmat.backends.openssl import backend as ossl
                from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

                try:  # cryptography >= 43 keeps the legacy ciphers in "decrepit"
                    from cryptography.hazmat.decrepit.ciphers.algorithms import (
                        Camellia,
                        TripleDES,
                    )

                    legacy: dict[str, Callable[[bytes], CipherAlgorithm]] = {"camellia": Camellia,
                                                                              "3des": TripleDES}
                except ImportError:  # pragma: no cover - older cryptography
                    legacy = {"camellia": algorithms.Camellia, "3des": algorithms.TripleDES}
                algos: dict[str, Callable[[bytes], CipherAlgorithm]] = {"aes": algorithms.AES, **legacy}
                self._mods = _OpenSSLModules(ossl, Cipher, modes, algos)
            except ImportError as exc:  # pragma: no cover - cryptography is a dependency
                self._import_error = f"the cryptography package cannot be imported ({exc})"
        if self._mods is None:
            raise BackendUnavailable(f"openssl: {self._import_error}")
        return self._mods

    def reason(self, algo: str, mode: str) -> str | None:
        if algo == "des":
            return "OpenSSL single DES is not used (TripleDES(k,k,k) would cost 3x)"
        if algo in ("serpent", "twofish", "rc6"):
            return f"OpenSSL has no {algo.upper() if algo == 'rc6' else algo.capitalize()}"
        try:
            ossl, _, modes, algos = self._modules()
        except BackendUnavailable as exc:
            return str(exc)
        k, b = _PRIMITIVES[algo]
        mode_obj = modes.ECB() if mode == "ecb" else modes.CBC(bytes(b))
        if not ossl.cipher_supported(algos[algo](bytes(k)), mode_obj):
            return f"this OpenSSL build does not enable {algo}-{mode}"
        return None

    def _cipher(self, algo: str, mode: str, key: bytes, iv: bytes | None) -> Cipher[modes.ECB | modes.CBC]:
        mods = self._modules()
        if mode == "ecb":
            return mods.cipher(mods.algos[algo](key), mods.mode_types.ECB())
        if iv is None:   # the checks before give CBC its IV
            raise AssertionError("CBC without an IV")
        return mods.cipher(mods.algos[algo](key), mods.mode_types.CBC(iv))

    def one_shot(
        self, algo: str, mode: str, key: bytes, iv: bytes | None, data: bytes, decrypt: bool
    ) -> bytes:
        c = self._cipher(algo, mode, key, iv)
        ctx = c.decryptor() if decrypt else c.encryptor()
        out = ctx.update(data)
        ctx.finalize()
        return out

    def context(
        self, algo: str, mode: str, key: bytes, iv: bytes | None, decrypt: bool
    ) -> _OpenSSLContext:
        c = self._cipher(algo, mode, key, iv)
        return _OpenSSLContext(c.decryptor() if decrypt else c.encryptor())


class _GcryptContext:
    __slots__ = ("_h", "_decrypt")

    def __init__(self, h: _gcrypt.Handle, decrypt: bool) -> None:
        self._h = h
        self._decrypt = decrypt

    def update(self, data: bytes) -> bytes:
        return self._h.crypt(data, self._decrypt)

    def close(self) -> None:
        self._h.close()


class _GcryptBackend:
    """The system libgcrypt via ctypes: every cipher of the paper except RC6."""

    name = "libgcrypt"

    def reason(self, algo: str, mode: str) -> str | None:
        if algo not in _gcrypt.ALGORITHMS:
            return f"libgcrypt has no {algo.upper()}"
        why = _gcrypt.unavailable_reason()
        if why is not None:
            return why
        if not _gcrypt.algo_available(algo):
            return f"libgcrypt {_gcrypt.version()} has {algo} disabled (FIPS mode or build option)"
        return None

    def one_shot(
        self, algo: str, mode: str, key: bytes, iv: bytes | None, data: bytes, decrypt: bool
    ) -> bytes:
        return _gcrypt.crypt(algo, mode, key, iv, data, decrypt)

    def context(
        self, algo: str, mode: str, key: bytes, iv: bytes | None, decrypt: bool
    ) -> _GcryptContext:
        h = _gcrypt.Handle(algo, mode)
        try:
            h.setkey(key)
            if iv is not None:
                h.setiv(iv)
        except BaseException:
            h.close()
            raise
        return _GcryptContext(h, decrypt)


_BACKEND_IMPLS: dict[str, _Backend] = {
    "openssl": _OpenSSLBackend(),
    "libgcrypt": _GcryptBackend(),
}


@lru_cache(maxsize=None)
def _reason(backend: str, algo: str, mode: str) -> str | None:
    return _BACKEND_IMPLS[backend].reason(algo, mode)


def backends_for(name: str) -> list[str]:
    """Backends that can run ``name`` on this machine, fastest preferred first (may be empty)."""
    spec = cipher_spec(name)
    return [b for b in _PREFERENCE[spec.algo] if _reason(b, spec.algo, spec.mode) is None]


def unavailable_reason(name: str) -> str | None:
    """None if ``name`` can run here, else one line naming each library tried and why not."""
    spec = cipher_spec(name)
    if backends_for(name):
        return None
    tried = "; ".join(f"{b}: {_reason(b, spec.algo, spec.mode)}" for b in BACKENDS)
    return f"no implementation of {name} on this machine (tried {tried})"


def available_ciphers() -> list[str]:
    """Canonical names, in :data:`CIPHERS` order, that at least one backend can run here."""
    return [n for n in CIPHERS if backends_for(n)]


def backend_versions() -> dict[str, str]:
    """Library versions behind each usable backend, for provenance in measured profiles."""
    out: dict[str, str] = {}
    try:
        import cryptography
        from cryptography.hazmat.backends.openssl import backend as ossl

        out["openssl"] = f"{ossl.openssl_version_text()} (cryptography {cryptography.__version__})"
    except ImportError:  # pragma: no cover
        pass
    if _gcrypt.available():
        out["libgcrypt"] = f"libgcrypt {_gcrypt.version()}"
    return out


def _backend(spec: CipherSpec, backend: str | None) -> _Backend:
    if backend is None:
        usable = backends_for(spec.name)
        if not usable:
            raise BackendUnavailable(unavailable_reason(spec.name) or spec.name)
        return _BACKEND_IMPLS[usable[0]]
    if backend not in _BACKEND_IMPLS:
        raise ConfigError(f"unknown backend {backend!r} (known: {', '.join(BACKENDS)})")
    why = _reason(backend, spec.algo, spec.mode)
    if why is not None:
        raise BackendUnavailable(f"{spec.name} is not available from {backend}: {why}")
    return _BACKEND_IMPLS[backend]


# --- argument checks ------------------------------------------------------------------------


def _as_bytes(value: object, what: str) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{what} must be bytes-like, not {type(value).__name__}")


def _checked_key(name: str, key_in: object, iv_in: object) -> tuple[CipherSpec, bytes, bytes | None]:
    spec = cipher_spec(name)
    key = _as_bytes(key_in, "key")
    if len(key) != spec.key_size:
        raise ConfigError(
            f"{name}: key must be {spec.key_size} bytes ({spec.key_size * 8} bits), got {len(key)}"
        )
    iv: bytes | None = None
    if spec.mode == "cbc":
        if iv_in is None:
            raise ConfigError(f"{name}: CBC needs an IV of {spec.block_size} bytes")
        iv = _as_bytes(iv_in, "iv")
        if len(iv) != spec.block_size:
            raise ConfigError(f"{name}: IV must be {spec.block_size} bytes, got {len(iv)}")
    elif iv_in is not None:
        raise ConfigError(f"{name}: ECB takes no IV")
    return spec, key, iv


def _checked_data(spec: CipherSpec, name: str, data_in: object) -> bytes:
    data = _as_bytes(data_in, "data")
    if len(data) % spec.block_size:
        raise ConfigError(
            f"{name}: data length {len(data)} is not a multiple of the "
            f"{spec.block_size}-byte block (no padding in ECB/CBC here; see pad_pkcs7)"
        )
    return data


def _checked(name: str, key_in: object, iv_in: object,
             data_in: object) -> tuple[CipherSpec, bytes, bytes | None, bytes]:
    """A one-shot call's arguments as bytes: key and IV, then the data, then a weak key."""
    spec, key, iv = _checked_key(name, key_in, iv_in)
    data = _checked_data(spec, name, data_in)
    _check_weak(spec, key)
    return spec, key, iv, data


# --- public operations ----------------------------------------------------------------------


def encrypt(
    name: str, key: bytes, data: bytes, iv: bytes | None = None, backend: str | None = None
) -> bytes:
    """Encrypt whole blocks of ``data`` with cipher ``name`` (one fresh context, like a request).

    ``backend`` picks a library ("openssl", "libgcrypt"); None takes the fastest available.
    Raises ConfigError for an unknown cipher, a wrong key/IV length or a partial block,
    WeakKeyError for a weak DES key, BackendUnavailable when nothing here implements ``name``.
    """
    spec, key, iv, data = _checked(name, key, iv, data)
    impl = _backend(spec, backend)
    return impl.one_shot(spec.algo, spec.mode, key, iv, data, False)


def decrypt(
    name: str, key: bytes, data: bytes, iv: bytes | None = None, backend: str | None = None
) -> bytes:
    """Inverse of :func:`encrypt`, with the same arguments and errors."""
    spec, key, iv, data = _checked(name, key, iv, data)
    impl = _backend(spec, backend)
    return impl.one_shot(spec.algo, spec.mode, key, iv, data, True)


class CipherContext:
    """A keyed cipher kept open across calls: streaming, and bulk-throughput measurement.

    ``update`` takes whole blocks; in CBC the chain continues from one call to the next, so
    ``update(a) + update(b) == encrypt(a + b)``. Close it (or use ``with``) to free the
    library context.
    """

    __slots__ = ("name", "backend", "decrypting", "_ctx", "_block")

    def __init__(self, name: str, backend: str, decrypting: bool, ctx: _BackendContext) -> None:
        self.name = name
        self.backend = backend
        self.decrypting = decrypting
        self._ctx: _BackendContext | None = ctx
        self._block = block_size(name)

    def update(self, data: bytes) -> bytes:
        """Encrypt (or decrypt) the next whole blocks of the stream."""
        if self._ctx is None:
            raise ConfigError(f"{self.name} context is closed")
        data = _as_bytes(data, "data")
        if len(data) % self._block:
            raise ConfigError(
                f"{self.name}: data length {len(data)} is not a multiple of the "
                f"{self._block}-byte block"
            )
        return self._ctx.update(data)

    def close(self) -> None:
        """Release the library context (idempotent)."""
        if self._ctx is not None:
            self._ctx.close()
            self._ctx = None

    def __enter__(self) -> CipherContext:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_context(
    name: str,
    key: bytes,
    iv: bytes | None = None,
    *,
    backend: str | None = None,
    decrypt: bool = False,
) -> CipherContext:
    """Set up ``name`` with ``key`` (and IV) once and return a :class:`CipherContext`."""
    spec, key, iv = _checked_key(name, key, iv)
    _check_weak(spec, key)
    impl = _backend(spec, backend)
    ctx = impl.context(spec.algo, spec.mode, key, iv, decrypt)
    return CipherContext(name, impl.name, decrypt, ctx)


def request_encryptor(
    name: str, backend: str | None = None
) -> tuple[str, Callable[[bytes, bytes | None, bytes], bytes]]:
    """``(backend, fn)`` where ``fn(key, iv, data)`` encrypts one message with a fresh context.

    This is exactly the library work a server does per request (context, key schedule, IV,
    encryption, release) without :func:`encrypt`'s argument checks, so timing loops measure the
    library rather than this module's validation. The caller guarantees valid arguments (right
    sizes, whole blocks, no weak DES key, e.g. from :func:`random_key`).
    """
    spec = cipher_spec(name)
    impl = _backend(spec, backend)
    algo, mode, one_shot = spec.algo, spec.mode, impl.one_shot

    def fn(key: bytes, iv: bytes | None, data: bytes) -> bytes:
        return one_shot(algo, mode, key, iv, data, False)

    return impl.name, fn


def random_key(name: str) -> bytes:
    """A fresh random key of the right size, never a weak DES key (redrawn if one appears)."""
    spec = cipher_spec(name)
    while True:
        key = os.urandom(spec.key_size)
        try:
            _check_weak(spec, key)
        except WeakKeyError:  # probability ~2^-50 per draw; redraw rather than fail
            continue
        return key


def random_iv(name: str) -> bytes | None:
    """A fresh random IV for a CBC cipher, None for an ECB cipher."""
    n = iv_size(name)
    return os.urandom(n) if n else None


# --- padding --------------------------------------------------------------------------------


def pad_pkcs7(data: bytes, block_size: int) -> bytes:
    """Append PKCS#7 padding (1..block_size bytes, each equal to the count)."""
    if not 1 <= block_size <= 255:
        raise ConfigError(f"PKCS#7 block size must be 1..255, got {block_size}")
    data = _as_bytes(data, "data")
    n = block_size - len(data) % block_size
    return data + bytes([n]) * n


def unpad_pkcs7(data: bytes, block_size: int) -> bytes:
    """Remove PKCS#7 padding; PaddingError when the length or the padding bytes are wrong."""
    if not 1 <= block_size <= 255:
        raise ConfigError(f"PKCS#7 block size must be 1..255, got {block_size}")
    data = _as_bytes(data, "data")
    if not data or len(data) % block_size:
        raise PaddingError(
            f"padded data length {len(data)} is not a positive multiple of {block_size}"
        )
    n = data[-1]
    if not 1 <= n <= block_size or data[-n:] != bytes([n]) * n:
        raise PaddingError("invalid PKCS#7 padding")
    return data[:-n]
