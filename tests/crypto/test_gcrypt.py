"""The ctypes binding to libgcrypt: constants, return-code handling, lazy loading."""

from __future__ import annotations

import ctypes.util
import itertools

import pytest

from cryptoffload.crypto import _gcrypt, ciphers
from cryptoffload.errors import BackendUnavailable, ConfigError

needs_gcrypt = pytest.mark.skipif(not _gcrypt.available(), reason="libgcrypt not installed")


def test_constants_match_gcrypt_h() -> None:
    # Pinned here so an edit is deliberate; the known-answer tests prove they are the right ones.
    assert _gcrypt.ALGORITHMS == {
        "aes": 7, "des": 302, "3des": 2, "camellia": 310, "serpent": 304, "twofish": 303,
    }
    assert _gcrypt.CIPHER_MODES == {"ecb": 1, "cbc": 3}
    assert _gcrypt.GCRY_CIPHER_TWOFISH == 10 and _gcrypt.GCRY_CIPHER_TWOFISH128 == 303


@needs_gcrypt
def test_libgcrypt_sizes_agree_with_the_cipher_table() -> None:
    # This is the test that catches a wrong id within a cipher family: libgcrypt's Twofish and
    # Camellia take the key size from the key length, so GCRY_CIPHER_TWOFISH (10, "256-bit")
    # or GCRY_CIPHER_CAMELLIA192 given a 16-byte key still pass the 128-bit known answers;
    # only the key length the id declares (32 and 24) gives the mistake away.
    names = {"aes": "aes-ecb", "des": "des-ecb", "3des": "3des-ecb", "camellia": "camellia",
             "serpent": "serpent", "twofish": "twofish"}
    for algo, name in names.items():
        assert _gcrypt.algo_available(algo)
        assert _gcrypt.key_length(algo) == ciphers.key_size(name), algo
        assert _gcrypt.block_length(algo) == ciphers.block_size(name), algo


@needs_gcrypt
def test_version_is_reported() -> None:
    major, minor = (int(x) for x in _gcrypt.version().split(".")[:2])
    assert (major, minor) >= (1, 8)


@needs_gcrypt
def test_weak_key_table_equals_libgcrypts() -> None:
    """Every key built from the weak-key byte alphabet: our predicate == libgcrypt's verdict."""
    hi, lo = (0x00, 0x1E, 0xE0, 0xFE), (0x00, 0x0E, 0xF0, 0xFE)
    h = _gcrypt.Handle("des", "ecb")
    refused = 0
    try:
        for first in itertools.product(hi, repeat=4):
            for second in itertools.product(lo, repeat=4):
                key = bytes(first + second)
                try:
                    h.setkey(key)
                    gcry_weak = False
                except _gcrypt.WeakKeyError:
                    gcry_weak = True
                assert gcry_weak == ciphers.is_weak_des_key(key), key.hex()
                refused += gcry_weak
                # parity bits must not matter, to either side
                odd = bytes(b | 1 for b in key)
                assert ciphers.is_weak_des_key(odd) == gcry_weak
    finally:
        h.close()
    assert refused == 64


@needs_gcrypt
def test_wrong_iv_length_is_an_error_not_a_warning() -> None:
    # libgcrypt itself only warns and pads/truncates a wrong-length IV.
    with _gcrypt.Handle("aes", "cbc") as hd:
        hd.setkey(bytes(16))
        with pytest.raises(ConfigError, match="IV must be 16 bytes"):
            hd.setiv(bytes(3))


@needs_gcrypt
def test_return_codes_become_errors() -> None:
    with _gcrypt.Handle("aes", "ecb") as hd:
        hd.setkey(bytes(16))
        with pytest.raises(_gcrypt.GcryptError, match="gcry_cipher_encrypt"):
            hd.crypt(bytes(15))  # not a whole block
    with _gcrypt.Handle("des", "ecb") as hd:
        with pytest.raises(ConfigError, match="invalid key length 7"):
            hd.setkey(bytes(7))
        with pytest.raises(_gcrypt.WeakKeyError):
            hd.setkey(bytes(8))
    hd = _gcrypt.Handle("aes", "ecb")
    hd.close()
    hd.close()  # idempotent
    with pytest.raises(_gcrypt.GcryptError, match="closed"):
        hd.crypt(bytes(16))
    with pytest.raises(ConfigError):
        _gcrypt.Handle("rc6", "ecb")


@needs_gcrypt
def test_crypt_with_preallocated_buffer() -> None:
    out = ctypes.create_string_buffer(64)
    data = bytes(32)
    a = _gcrypt.crypt("twofish", "ecb", bytes(16), None, data, out=out)
    assert a == _gcrypt.crypt("twofish", "ecb", bytes(16), None, data)
    assert a[:16].hex() == "9f589f5cf6122c32b6bfec2f2ae8c35a"


def test_missing_library_is_backend_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_gcrypt, "_state", None)
    monkeypatch.setattr(_gcrypt, "_LIBRARY_NAMES", ("libgcrypt-not-here.so.99",))
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None)
    assert not _gcrypt.available()
    reason = _gcrypt.unavailable_reason()
    assert reason and "libgcrypt not found" in reason and "libgcrypt-not-here.so.99" in reason
    with pytest.raises(BackendUnavailable, match="libgcrypt not found"):
        _gcrypt.Handle("aes", "ecb")
    with pytest.raises(BackendUnavailable):
        _gcrypt.version()
