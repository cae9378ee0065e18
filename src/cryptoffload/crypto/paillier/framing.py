"""Serialised Paillier ciphertexts: one frame holding any number of ciphertexts of one key.

Layout (version 2), built like the CKKS frame (a fixed header, the payload, a BLAKE2b
checksum over both)::

    "COPC" | version (1 byte) | key fingerprint (16) | count (8, little-endian)
    | count ciphertexts, each big-endian in the key's fixed ciphertext size
    | BLAKE2b-128 of everything before it (personalised "paillier-frame")

Why a checksum over the whole frame: a Paillier ciphertext is any unit modulo n^2, so a flipped
bit almost always leaves a value that still passes the range and gcd checks and decrypts to
garbage. Version 1 had no checksum (20 of 31 bit flips decrypted silently); the checksum
turns every such flip into a refusal. It is unkeyed: it detects corruption, not forgery --
anyone holding the public key can make valid ciphertexts (Paillier is malleable by design), so
authenticity must come from the channel or a signature, not from this frame.

Version 1 files are refused with a message saying how to redo them: reading them would bring
back exactly the silent garbage this version removes.
"""

from __future__ import annotations

import hashlib
import struct
from typing import TYPE_CHECKING, Sequence

from cryptoffload.crypto.paillier.errors import CiphertextFormatError, KeyMismatchError

if TYPE_CHECKING:
    from cryptoffload.crypto.paillier.keys import PublicKey

CIPHERTEXT_MAGIC = b"COPC"
CIPHERTEXT_VERSION = 2
_HEADER = struct.Struct("<4sB16sQ")  # magic, version, key fingerprint, count
_CHECK = 16


def _checksum(data: bytes | memoryview) -> bytes:
    return hashlib.blake2b(data, digest_size=_CHECK, person=b"paillier-frame").digest()


def pack(pk: "PublicKey", values: Sequence[int]) -> bytes:
    """Frame ciphertext integers of ``pk`` (each already < n^2)."""
    size = pk.ciphertext_bytes
    body = _HEADER.pack(CIPHERTEXT_MAGIC, CIPHERTEXT_VERSION, pk.fingerprint, len(values)) + b"".join(
        v.to_bytes(size, "big") for v in values)
    return body + _checksum(body)


def unpack(pk: "PublicKey", data: bytes | bytearray | memoryview) -> list[int]:
    """The ciphertext integers of a frame made under ``pk``; every refusal says what is wrong
    (not ours, old version, another key, truncated, corrupted, a value that is no ciphertext)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise CiphertextFormatError("serialised ciphertexts must be bytes")
    data = bytes(data)
    if len(data) < 5 or data[:4] != CIPHERTEXT_MAGIC:
        raise CiphertextFormatError("not a cryptoffload Paillier ciphertext file (bad header)")
    if data[4] == 1:
        raise CiphertextFormatError(
            "ciphertext data has format version 1 (no integrity check), written by an older cryptoffload; "
            "this version reads only version 2: encrypt the plaintexts again")
    if data[4] != CIPHERTEXT_VERSION:
        raise CiphertextFormatError(
            f"ciphertext data has format version {data[4]}; this version reads version {CIPHERTEXT_VERSION}")
    if len(data) < _HEADER.size + _CHECK:
        raise CiphertextFormatError(
            f"ciphertext data is truncated ({len(data)} bytes, the header alone is {_HEADER.size + _CHECK})")
    _, _, fingerprint, count = _HEADER.unpack_from(data)
    size = pk.ciphertext_bytes
    expected = _HEADER.size + count * size + _CHECK
    intact = _checksum(memoryview(data)[:-_CHECK]) == data[-_CHECK:]
    if intact and fingerprint != pk.fingerprint:
        raise KeyMismatchError(f"ciphertexts were made under key {fingerprint.hex()}, not this key {pk.fingerprint.hex()}")
    if len(data) != expected:
        raise CiphertextFormatError(
            f"ciphertext data is {len(data)} bytes where its header announces {expected} "
            f"({count} ciphertexts of {size} bytes): truncated or garbled")
    if not intact:
        raise CiphertextFormatError("ciphertext data is corrupted (checksum mismatch): a bit changed since it was written")
    out = []
    for i in range(count):
        off = _HEADER.size + i * size
        try:
            out.append(pk.check_ciphertext(int.from_bytes(data[off:off + size], "big")))
        except CiphertextFormatError as exc:
            raise CiphertextFormatError(f"ciphertext {i}: {exc}") from None
    return out
