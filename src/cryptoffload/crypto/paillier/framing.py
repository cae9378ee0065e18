"""Serialised Paillier ciphertexts: one frame holding any number of ciphertexts of one key, and
the bound B (|m| <= B) every plaintext among them was encrypted or computed under.

Layout (version 3), built like the CKKS frame (a fixed header, the payload, a BLAKE2b
checksum over both)::

    "COPC" | version (1 byte) | key fingerprint (16) | count (8, little-endian)
    | bound (big-endian, the key's plaintext size: ceil(bits(n) / 8) bytes)
    | count ciphertexts, each big-endian in the key's fixed ciphertext size
    | BLAKE2b-128 of everything before it (personalised "paillier-frame")

Why a bound in the header: arithmetic on files (:mod:`.bounds`) refuses a result that could pass
the signed range before computing it, and decryption refuses a value outside its file's bound,
instead of both producing a small wrong number. The field has the key's plaintext size, so every
bound up to n/3 fits and the header of a key has one length; a bound above n/3 is refused.

Why a checksum over the whole frame: a Paillier ciphertext is any unit modulo n^2, so a flipped
bit almost always leaves a value that still passes the range and gcd checks and decrypts to
garbage. Version 1 had no checksum (20 of 31 bit flips decrypted silently); the checksum
turns every such flip -- in the bound too -- into a refusal. It is unkeyed: it detects
corruption, not forgery -- anyone holding the public key can make valid ciphertexts (Paillier is
malleable by design) and redo the checksum over any bound, so authenticity must come from the
channel or a signature, not from this frame.

Version 2 files (the same frame without the bound) are still read, with the bound taken as the
key's whole signed range n/3 -- the most a version 2 file can honestly hold, and exactly what
decoding checked before bounds existed; :attr:`FrameHeader.bound_recorded` tells callers so they
can say it. Version 1 files are refused with a message saying how to redo them: reading them
would bring back exactly the silent garbage the checksum removes.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from typing import Sequence

from cryptoffload.crypto.paillier.errors import CiphertextFormatError, KeyMismatchError
from cryptoffload.crypto.paillier.public_key import PublicKey


CIPHERTEXT_MAGIC = b"COPC"
CIPHERTEXT_VERSION = 3
UNBOUNDED_VERSION = 2  # still read: no bound field, the bound is the key's signed limit
_HEADER = struct.Struct("<4sB16sQ")  # magic, version, key fingerprint, count
_CHECK = 16


@dataclass(frozen=True)
class FrameHeader:
    """What a frame's header says: its format version, how many ciphertexts, and their bound
    (for a version 2 frame, which records none, the key's signed limit n/3)."""

    version: int
    count: int
    bound: int

    @property
    def bound_recorded(self) -> bool:
        return self.version >= CIPHERTEXT_VERSION


def _checksum(data: bytes | memoryview) -> bytes:
    return hashlib.blake2b(data, digest_size=_CHECK, person=b"paillier-frame").digest()


def bound_bytes(pk: PublicKey) -> int:
    """Bytes of the bound field under ``pk``: the size of a plaintext (an integer below n)."""
    return (pk.n.bit_length() + 7) // 8


def header_size(pk: PublicKey, version: int = CIPHERTEXT_VERSION) -> int:
    return _HEADER.size + (bound_bytes(pk) if version >= CIPHERTEXT_VERSION else 0)


def frame_size(pk: PublicKey, count: int, version: int = CIPHERTEXT_VERSION) -> int:
    """Bytes of a frame of ``count`` ciphertexts under ``pk``."""
    return header_size(pk, version) + count * pk.ciphertext_bytes + _CHECK


def pack(pk: PublicKey, values: Sequence[int], bound: int | None = None) -> bytes:
    """Frame ciphertext integers of ``pk`` (each already < n^2) whose plaintexts satisfy
    |m| <= ``bound`` (None: nothing is known, the key's signed limit n/3)."""
    bound = pk.max_int if bound is None else bound
    if isinstance(bound, bool) or not isinstance(bound, int) or not 0 <= bound <= pk.max_int:
        raise CiphertextFormatError("a frame's bound must be an integer in [0, n/3]")
    size = pk.ciphertext_bytes
    body = (_HEADER.pack(CIPHERTEXT_MAGIC, CIPHERTEXT_VERSION, pk.fingerprint, len(values))
            + bound.to_bytes(bound_bytes(pk), "big") + b"".join(v.to_bytes(size, "big") for v in values))
    return body + _checksum(body)


def _version(data: bytes) -> int:
    """The frame's version, once the magic is ours and the version one this code reads."""
    if len(data) < 5 or data[:4] != CIPHERTEXT_MAGIC:
        raise CiphertextFormatError("not a cryptoffload Paillier ciphertext file (bad header)")
    if data[4] == 1:
        raise CiphertextFormatError(
            "ciphertext data has format version 1 (no integrity check), written by an older cryptoffload; "
            f"this version reads versions {UNBOUNDED_VERSION} and {CIPHERTEXT_VERSION}: encrypt the plaintexts again")
    if data[4] not in (UNBOUNDED_VERSION, CIPHERTEXT_VERSION):
        raise CiphertextFormatError(f"ciphertext data has format version {data[4]}; this version reads versions "
                                    f"{UNBOUNDED_VERSION} and {CIPHERTEXT_VERSION}")
    return data[4]


def _bound(pk: PublicKey, data: bytes, version: int) -> int:
    if version < CIPHERTEXT_VERSION:
        return pk.max_int
    bound = int.from_bytes(data[_HEADER.size:_HEADER.size + bound_bytes(pk)], "big")
    if bound > pk.max_int:
        raise CiphertextFormatError(f"the header records a bound of {bound.bit_length():,} bits, above the key's "
                                    f"signed limit n/3 ({pk.max_int.bit_length():,} bits): not a file cryptoffload wrote")
    return bound


def read_header(pk: PublicKey, head: bytes, total_size: int) -> FrameHeader:
    """The header of a frame of ``total_size`` bytes from its first bytes (at least
    :func:`header_size`), before the rest is read: magic, version, key, a size that matches
    the count, a bound within n/3. Nothing here is checksummed yet -- the caller reads the
    whole frame with :func:`unpack_frame` before it uses a ciphertext, and must find the same
    header there."""
    version = _version(head)
    if len(head) < header_size(pk, version) or total_size < header_size(pk, version) + _CHECK:
        raise CiphertextFormatError(f"ciphertext data is truncated ({total_size} bytes, the header alone is "
                                    f"{header_size(pk, version) + _CHECK})")
    _, _, fingerprint, count = _HEADER.unpack_from(head)
    if fingerprint != pk.fingerprint:
        raise KeyMismatchError(f"ciphertexts were made under key {fingerprint.hex()}, not this key {pk.fingerprint.hex()}")
    if total_size != frame_size(pk, count, version):
        raise CiphertextFormatError(f"ciphertext data is {total_size} bytes where its header announces "
                                    f"{frame_size(pk, count, version)}: truncated or garbled")
    return FrameHeader(version, count, _bound(pk, head, version))


def unpack_frame(pk: PublicKey, data: bytes | bytearray | memoryview) -> tuple[FrameHeader, list[int]]:
    """The header and the ciphertext integers of a frame made under ``pk``; every refusal says
    what is wrong (not ours, old version, another key, truncated, corrupted, a bound above n/3,
    a value that is no ciphertext)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise CiphertextFormatError("serialised ciphertexts must be bytes")
    data = bytes(data)
    version = _version(data)
    start = header_size(pk, version)
    if len(data) < _HEADER.size + _CHECK:
        raise CiphertextFormatError(
            f"ciphertext data is truncated ({len(data)} bytes, the header alone is {_HEADER.size + _CHECK})")
    _, _, fingerprint, count = _HEADER.unpack_from(data)
    intact = _checksum(memoryview(data)[:-_CHECK]) == data[-_CHECK:]
    if intact and fingerprint != pk.fingerprint:
        raise KeyMismatchError(f"ciphertexts were made under key {fingerprint.hex()}, not this key {pk.fingerprint.hex()}")
    size = pk.ciphertext_bytes
    if len(data) != frame_size(pk, count, version):
        raise CiphertextFormatError(
            f"ciphertext data is {len(data)} bytes where its header announces {frame_size(pk, count, version)} "
            f"({count} ciphertexts of {size} bytes): truncated or garbled")
    if not intact:
        raise CiphertextFormatError("ciphertext data is corrupted (checksum mismatch): a bit changed since it was written")
    header = FrameHeader(version, count, _bound(pk, data, version))
    out = []
    for i in range(count):
        off = start + i * size
        try:
            out.append(pk.check_ciphertext(int.from_bytes(data[off:off + size], "big")))
        except CiphertextFormatError as exc:
            raise CiphertextFormatError(f"ciphertext {i}: {exc}") from None
    return header, out


def unpack(pk: PublicKey, data: bytes | bytearray | memoryview) -> list[int]:
    """The ciphertext integers of a frame (its bound left aside: see :func:`unpack_frame`)."""
    return unpack_frame(pk, data)[1]
