"""ctypes binding to the system libgcrypt (``libgcrypt.so.20``), block ciphers only.

Why libgcrypt: the source paper (Niwa, Maeda, Yamaguchi, IPSJ TACS 2005) took its software
throughputs from libgcrypt's benchmark, and libgcrypt is the one library on a stock Debian
machine that has every cipher of that paper except RC6 (single DES, Serpent and Twofish are not
in OpenSSL 3's default provider). Why ctypes: the library is already installed, so binding it
needs no compiler and no extra package.

Only what :mod:`cryptoffload.crypto.ciphers` needs is bound: open a handle for an algorithm and
mode, set key and IV, encrypt or decrypt whole blocks, close. Every return code is checked and
turned into an exception whose message names the operation, the algorithm and libgcrypt's own
error text, because a silently ignored ``gcry_error_t`` leaves garbage in the output buffer.

The library is loaded lazily, on first use, so importing this module never fails; a machine
without libgcrypt gets :class:`~cryptoffload.errors.BackendUnavailable` at the point of use.

The numeric identifiers below are copied from ``gcrypt.h`` of libgcrypt 1.10 and are part of
libgcrypt's stable ABI. Each one is pinned by a known-answer test (tests/crypto), so a wrong
constant (e.g. ``GCRY_CIPHER_TWOFISH`` = 10, the 256-bit variant, instead of
``GCRY_CIPHER_TWOFISH128`` = 303) fails a test instead of producing plausible ciphertext.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from dataclasses import dataclass
from functools import lru_cache

from cryptoffload.errors import BackendUnavailable, ConfigError

# --- constants from gcrypt.h (libgcrypt 1.10) -------------------------------------------------
GCRY_CIPHER_3DES = 2
GCRY_CIPHER_AES = 7  # AES-128; GCRY_CIPHER_AES128 is an alias of it
GCRY_CIPHER_TWOFISH = 10  # 256-bit key variant: NOT the one the paper used
GCRY_CIPHER_DES = 302  # single-key 56-bit DES
GCRY_CIPHER_TWOFISH128 = 303
GCRY_CIPHER_SERPENT128 = 304
GCRY_CIPHER_CAMELLIA128 = 310

GCRY_CIPHER_MODE_ECB = 1
GCRY_CIPHER_MODE_CBC = 3

GCRYCTL_TEST_ALGO = 8
GCRYCTL_DISABLE_SECMEM = 37
GCRYCTL_INITIALIZATION_FINISHED = 38
GCRYCTL_ANY_INITIALIZATION_P = 40

# gpg-error codes (the low 16 bits of a gcry_error_t; the high bits name the error source)
GPG_ERR_CODE_MASK = 0xFFFF
GPG_ERR_CIPHER_ALGO = 12
GPG_ERR_WEAK_KEY = 43
GPG_ERR_INV_KEYLEN = 44

#: Oldest libgcrypt accepted: 1.8 has every algorithm id above and is the oldest still shipped
#: by a supported Debian/Ubuntu release.
MIN_VERSION = "1.8.0"

#: Short algorithm names used by :mod:`ciphers` -> libgcrypt algorithm id.
ALGORITHMS: dict[str, int] = {
    "aes": GCRY_CIPHER_AES,
    "des": GCRY_CIPHER_DES,
    "3des": GCRY_CIPHER_3DES,
    "camellia": GCRY_CIPHER_CAMELLIA128,
    "serpent": GCRY_CIPHER_SERPENT128,
    "twofish": GCRY_CIPHER_TWOFISH128,
}

#: Mode names -> libgcrypt mode id.
CIPHER_MODES: dict[str, int] = {"ecb": GCRY_CIPHER_MODE_ECB, "cbc": GCRY_CIPHER_MODE_CBC}

_LIBRARY_NAMES = ("libgcrypt.so.20", "libgcrypt.so")


class GcryptError(Exception):
    """A libgcrypt call failed for a reason other than a bad key (message has gcry's text).

    Not a user error (a missing library is :class:`BackendUnavailable`, a weak key
    :class:`WeakKeyError`): a failing call is a bug here or in the library."""

    def __init__(self, message: str, code: int = 0) -> None:
        super().__init__(message)
        self.code = code


class WeakKeyError(ConfigError):
    """libgcrypt refused a DES/3DES key as weak, semi-weak or possibly weak.

    A user error (the key was chosen badly), hence a :class:`ConfigError`: DES has 64 keys that
    make the key schedule degenerate (1, 2 or 4 distinct round keys); libgcrypt refuses them
    and so does this project, on every backend (see ``ciphers.is_weak_des_key``).
    """


@dataclass(frozen=True)
class _Lib:
    cdll: ctypes.CDLL
    version: str


_lock = threading.Lock()
_state: _Lib | BackendUnavailable | None = None


def _declare(lib: ctypes.CDLL) -> None:
    """Give every bound function its C signature so ctypes neither truncates nor guesses."""
    u = ctypes.c_uint  # gcry_error_t is an unsigned int
    sz = ctypes.c_size_t
    vp = ctypes.c_void_p
    lib.gcry_check_version.argtypes = [ctypes.c_char_p]
    lib.gcry_check_version.restype = ctypes.c_char_p
    lib.gcry_strerror.argtypes = [u]
    lib.gcry_strerror.restype = ctypes.c_char_p
    # gcry_control is variadic: no argtypes; every call passes C ints explicitly.
    lib.gcry_control.restype = u
    lib.gcry_cipher_open.argtypes = [ctypes.POINTER(vp), ctypes.c_int, ctypes.c_int, ctypes.c_uint]
    lib.gcry_cipher_open.restype = u
    lib.gcry_cipher_close.argtypes = [vp]
    lib.gcry_cipher_close.restype = None
    lib.gcry_cipher_setkey.argtypes = [vp, ctypes.c_char_p, sz]
    lib.gcry_cipher_setkey.restype = u
    lib.gcry_cipher_setiv.argtypes = [vp, ctypes.c_char_p, sz]
    lib.gcry_cipher_setiv.restype = u
    lib.gcry_cipher_encrypt.argtypes = [vp, vp, sz, ctypes.c_char_p, sz]
    lib.gcry_cipher_encrypt.restype = u
    lib.gcry_cipher_decrypt.argtypes = [vp, vp, sz, ctypes.c_char_p, sz]
    lib.gcry_cipher_decrypt.restype = u
    lib.gcry_cipher_algo_info.argtypes = [ctypes.c_int, ctypes.c_int, vp, ctypes.POINTER(sz)]
    lib.gcry_cipher_algo_info.restype = u
    lib.gcry_cipher_get_algo_keylen.argtypes = [ctypes.c_int]
    lib.gcry_cipher_get_algo_keylen.restype = sz
    lib.gcry_cipher_get_algo_blklen.argtypes = [ctypes.c_int]
    lib.gcry_cipher_get_algo_blklen.restype = sz


def _load() -> _Lib:
    """Load and initialise libgcrypt once per process; remember a failure as well."""
    global _state
    if isinstance(_state, _Lib):
        return _state
    with _lock:
        if _state is None:
            _state = _try_load()
    if isinstance(_state, BackendUnavailable):
        raise BackendUnavailable(str(_state))
    return _state


def _try_load() -> _Lib | BackendUnavailable:
    names = list(_LIBRARY_NAMES)
    found = ctypes.util.find_library("gcrypt")
    if found and found not in names:
        names.append(found)
    lib = None
    errors = []
    for name in names:
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError as exc:
            errors.append(f"{name}: {exc}")
    if lib is None:
        return BackendUnavailable(
            "libgcrypt not found (tried " + ", ".join(names) + "); install libgcrypt20"
        )
    try:
        _declare(lib)
    except AttributeError as exc:  # a library of that name without the expected symbols
        return BackendUnavailable(f"libgcrypt loaded but lacks a symbol: {exc}")
    # The manual requires gcry_check_version before any other call (it also initialises the
    # library). ANY_INITIALIZATION_P may be asked before it: if something else in this process
    # (another binding) already initialised libgcrypt, we must not redo its secure-memory setup.
    already = bool(lib.gcry_control(ctypes.c_int(GCRYCTL_ANY_INITIALIZATION_P), ctypes.c_int(0)))
    version = lib.gcry_check_version(MIN_VERSION.encode())
    if not version:
        have = lib.gcry_check_version(None)
        return BackendUnavailable(
            f"libgcrypt {have.decode() if have else '?'} is older than the required {MIN_VERSION}"
        )
    if not already:
        # No secure memory needed: keys live in Python objects anyway. Finishing the
        # initialisation is what the manual asks an application to do before using ciphers.
        lib.gcry_control(ctypes.c_int(GCRYCTL_DISABLE_SECMEM), ctypes.c_int(0))
        lib.gcry_control(ctypes.c_int(GCRYCTL_INITIALIZATION_FINISHED), ctypes.c_int(0))
    return _Lib(lib, version.decode())


def available() -> bool:
    """True when libgcrypt can be loaded and initialised on this machine."""
    try:
        _load()
    except BackendUnavailable:
        return False
    return True


def unavailable_reason() -> str | None:
    """Why libgcrypt cannot be used here, or None when it can."""
    try:
        _load()
    except BackendUnavailable as exc:
        return str(exc)
    return None


def version() -> str:
    """Version string reported by the loaded libgcrypt (e.g. ``"1.10.1"``)."""
    return _load().version


def _strerror(lib: ctypes.CDLL, err: int) -> str:
    text = lib.gcry_strerror(err)
    return text.decode(errors="replace") if text else f"error {err}"


def algo_available(algo: str) -> bool:
    """True when this libgcrypt has ``algo`` (a key of :data:`ALGORITHMS`) enabled.

    An algorithm can be missing from a build (configure --enable-ciphers) or disabled in FIPS
    mode (DES, Serpent, Twofish, Camellia are not FIPS-approved), so ask the library.
    """
    lib = _load().cdll
    return lib.gcry_cipher_algo_info(ALGORITHMS[algo], GCRYCTL_TEST_ALGO, None, None) == 0


@lru_cache(maxsize=None)
def key_length(algo: str) -> int:
    """Key length in bytes that libgcrypt expects for ``algo``."""
    return int(_load().cdll.gcry_cipher_get_algo_keylen(ALGORITHMS[algo]))


@lru_cache(maxsize=None)
def block_length(algo: str) -> int:
    """Block length in bytes of ``algo`` according to libgcrypt."""
    return int(_load().cdll.gcry_cipher_get_algo_blklen(ALGORITHMS[algo]))


class Handle:
    """One open libgcrypt cipher handle (``gcry_cipher_hd_t``) for an algorithm and mode.

    CBC state is kept between :meth:`crypt` calls, exactly as in libgcrypt, so a handle can
    stream a long message in pieces. Close it (or use ``with``) to free the C context;
    ``__del__`` closes a forgotten one.
    """

    __slots__ = ("_lib", "_h", "algo", "mode")

    def __init__(self, algo: str, mode: str) -> None:
        try:
            algo_id = ALGORITHMS[algo]
            mode_id = CIPHER_MODES[mode]
        except KeyError:
            raise ConfigError(
                f"libgcrypt binding has no algorithm/mode {algo!r}/{mode!r}"
            ) from None
        self._lib = _load().cdll
        self._h = None
        self.algo = algo
        self.mode = mode
        h = ctypes.c_void_p()
        err = self._lib.gcry_cipher_open(ctypes.byref(h), algo_id, mode_id, 0)
        if err:
            code = err & GPG_ERR_CODE_MASK
            if code == GPG_ERR_CIPHER_ALGO:
                raise BackendUnavailable(
                    f"libgcrypt {version()} does not provide {algo}-{mode} here "
                    f"({_strerror(self._lib, err)})"
                )
            raise GcryptError(
                f"gcry_cipher_open({algo}, {mode}) failed: {_strerror(self._lib, err)}", code
            )
        self._h = h

    def _check(self, err: int, what: str) -> None:
        if err:
            code = err & GPG_ERR_CODE_MASK
            raise GcryptError(
                f"{what} ({self.algo}-{self.mode}) failed: {_strerror(self._lib, err)}", code
            )

    def _handle(self) -> ctypes.c_void_p:
        if self._h is None:
            raise GcryptError(f"libgcrypt handle for {self.algo}-{self.mode} is closed")
        return self._h

    def setkey(self, key: bytes) -> None:
        """Run the key schedule; a weak DES/3DES key raises :class:`WeakKeyError`."""
        err = self._lib.gcry_cipher_setkey(self._handle(), key, len(key))
        if err:
            code = err & GPG_ERR_CODE_MASK
            if code == GPG_ERR_WEAK_KEY:
                raise WeakKeyError(
                    f"libgcrypt refuses this {self.algo.upper()} key as weak "
                    "(a weak, semi-weak or possibly-weak DES key); use a random key"
                )
            if code == GPG_ERR_INV_KEYLEN:
                raise ConfigError(
                    f"libgcrypt {self.algo}: invalid key length {len(key)} bytes "
                    f"(expected {key_length(self.algo)})"
                )
            self._check(err, "gcry_cipher_setkey")

    def setiv(self, iv: bytes) -> None:
        """Set the CBC initialisation vector (restarts the chain).

        The length is checked here because libgcrypt only prints a warning for a wrong-length
        IV and then pads or truncates it, which would turn a caller's bug into wrong output.
        """
        blk = block_length(self.algo)
        if len(iv) != blk:
            raise ConfigError(
                f"libgcrypt {self.algo}-{self.mode}: IV must be {blk} bytes, got {len(iv)}"
            )
        self._check(self._lib.gcry_cipher_setiv(self._handle(), iv, len(iv)), "gcry_cipher_setiv")

    def crypt(self, data: bytes, decrypt: bool = False, out: ctypes.Array[ctypes.c_char] | None = None) -> bytes:
        """Encrypt (or decrypt) whole blocks of ``data`` and return the result.

        ``out``, a ``ctypes.create_string_buffer`` at least ``len(data)`` long, avoids one
        allocation per call in timing loops; the returned bytes are a copy either way.
        """
        n = len(data)
        buf = ctypes.create_string_buffer(n) if out is None else out
        if len(buf) < n:
            raise GcryptError(f"output buffer of {len(buf)} bytes is shorter than {n}")
        fn = self._lib.gcry_cipher_decrypt if decrypt else self._lib.gcry_cipher_encrypt
        self._check(
            fn(self._handle(), buf, n, data, n),
            "gcry_cipher_decrypt" if decrypt else "gcry_cipher_encrypt",
        )
        return buf.raw[:n] if len(buf) != n else buf.raw

    def close(self) -> None:
        """Free the C context (idempotent)."""
        if self._h is not None:
            self._lib.gcry_cipher_close(self._h)
            self._h = None

    def __enter__(self) -> Handle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: ctypes may already be gone
            pass


def crypt(
    algo: str,
    mode: str,
    key: bytes,
    iv: bytes | None,
    data: bytes,
    decrypt: bool = False,
    out: ctypes.Array[ctypes.c_char] | None = None,
) -> bytes:
    """One message as a server would handle one request: open, set key (and IV), run, close."""
    h = Handle(algo, mode)
    try:
        h.setkey(key)
        if iv is not None:
            h.setiv(iv)
        return h.crypt(data, decrypt, out)
    finally:
        h.close()
