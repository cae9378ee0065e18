"""SEAL objects measured before SEAL inflates them: the header parser on crafted headers (a lie
about the size, an unknown compression mode, truncated), zstd frames that hide or misstate
their size, and bombs (zstd and zlib) refused past the limit without being inflated whole."""

from __future__ import annotations

import ctypes
import ctypes.util
import struct
import tracemalloc
import zlib

import pytest

from cryptoffload.crypto.ckks import CkksError
from cryptoffload.crypto.ckks.inflate import (
    COMPR_NONE,
    COMPR_ZLIB,
    COMPR_ZSTD,
    MAX_WINDOW,
    InflateLimit,
    inflated_size,
    parse_seal_header,
    seal_header,
    uncompressed,
    zstd_frame_header,
)

MIB = 1 << 20


def zstd_compress(data: bytes, level: int = 19) -> bytes:
    """One zstd frame (declaring its content size) from the system's libzstd."""
    lib = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
    lib.ZSTD_compressBound.restype = ctypes.c_size_t
    lib.ZSTD_compressBound.argtypes = [ctypes.c_size_t]
    lib.ZSTD_compress.restype = ctypes.c_size_t
    lib.ZSTD_compress.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]
    out = ctypes.create_string_buffer(lib.ZSTD_compressBound(len(data)))
    n = lib.ZSTD_compress(out, len(out), data, len(data), level)
    return out.raw[:n]


def seal_object(mode: int, body: bytes) -> bytes:
    return seal_header(mode, 16 + len(body)) + body


def test_header_is_parsed_and_checked():
    blob = seal_object(COMPR_NONE, b"x" * 100)
    head = parse_seal_header(blob, "key")
    assert (head.major, head.compr_mode, head.size) == (4, COMPR_NONE, 116)
    assert inflated_size(blob, 100, "key") == 100
    with pytest.raises(InflateLimit, match="holds 100 bytes uncompressed, above the 99 bytes") as exc:
        inflated_size(blob, 99, "key")
    assert exc.value.limit == 99


@pytest.mark.parametrize("blob, message", [
    (seal_header(COMPR_NONE, 1000) + b"x" * 100, "states 1,000 bytes, the object has 116"),     # a lie, larger
    (seal_header(COMPR_NONE, 20) + b"x" * 100, "states 20 bytes, the object has 116"),         # a lie, smaller
    (seal_header(7, 116) + b"x" * 100, "unknown SEAL compression mode 7"),
    (seal_header(COMPR_ZSTD, 116)[:9], "truncated SEAL header"),
    (b"\x00" * 116, "not a SEAL object"),
    (seal_header(COMPR_NONE, 116, major=9) + b"x" * 100, "unsupported version 9"),
    (struct.pack("<HBBBBHQ", 0xA15E, 16, 4, 1, 0, 5, 116) + b"x" * 100, "reserved 5"),
])
def test_crafted_headers_refused(blob, message):
    with pytest.raises(CkksError, match=message) as exc:
        inflated_size(blob, 1 << 30, "key")
    assert not isinstance(exc.value, InflateLimit)


def test_zstd_frame_declares_its_size_and_window():
    frame = zstd_compress(b"\x01\x02" * 50_000)
    assert zstd_frame_header(frame, "key")[0] == 100_000
    assert inflated_size(seal_object(COMPR_ZSTD, frame), 100_000, "key") == 100_000
    with pytest.raises(InflateLimit, match="declares 100,000 bytes"):
        inflated_size(seal_object(COMPR_ZSTD, frame), 99_999, "key")
    exact = zstd_compress(bytes(2 * MIB))      # a whole number of output chunks: the end is still found
    assert inflated_size(seal_object(COMPR_ZSTD, exact), 2 * MIB, "key") == 2 * MIB


def test_zstd_frames_that_hide_or_misstate_their_size_refused():
    frame = bytearray(zstd_compress(bytes(4 * MIB)))
    fhd = frame[4]
    assert fhd >> 6 == 2 and fhd & 0x20        # 4-byte content size, single segment
    lie = bytearray(frame)
    lie[5:9] = (1000).to_bytes(4, "little")    # declares 1,000 bytes, holds 4 MiB: the decoder
    with pytest.raises(CkksError, match="garbled zstd stream"):  # holds it to its declaration
        inflated_size(seal_object(COMPR_ZSTD, bytes(lie)), 10 * MIB, "key")
    hidden = bytearray(frame)
    hidden[4] = 0x00                           # no content size, a window descriptor instead
    hidden[5] = 0x58
    with pytest.raises(CkksError, match="does not declare its content size"):
        inflated_size(seal_object(COMPR_ZSTD, bytes(hidden)), 10 * MIB, "key")
    wide = bytearray(frame)
    wide[4] = 0x80                             # not single segment: window descriptor, 4-byte size
    wide[5:5] = bytes([(27 - 10) << 3])        # a 128 MiB window
    with pytest.raises(CkksError, match=f"window \\(at most {MAX_WINDOW:,}\\)"):
        inflated_size(seal_object(COMPR_ZSTD, bytes(wide)), 10 * MIB, "key")
    with pytest.raises(CkksError, match="truncated"):
        inflated_size(seal_object(COMPR_ZSTD, bytes(frame[:-3])), 10 * MIB, "key")
    with pytest.raises(CkksError, match="not a zstd frame"):
        inflated_size(seal_object(COMPR_ZSTD, b"garbage!"), 10 * MIB, "key")


def test_bombs_refused_without_being_inflated():
    """256 MiB of zeros in ~10 KB: refused by its declaration (zstd) or after inflating one
    chunk past the limit (zlib, which declares nothing), with ~1 MiB in hand, never 256."""
    zeros = bytes(256 * MIB)
    bomb_zstd = seal_object(COMPR_ZSTD, zstd_compress(zeros, 3))
    bomb_zlib = seal_object(COMPR_ZLIB, zlib.compress(zeros, 9))
    del zeros
    assert len(bomb_zstd) < 64 * 1024 and len(bomb_zlib) < 512 * 1024
    tracemalloc.start()
    try:
        with pytest.raises(InflateLimit, match="declares 268,435,456 bytes uncompressed, above the 8,388,608"):
            inflated_size(bomb_zstd, 8 * MIB, "galois keys")
        with pytest.raises(InflateLimit, match="inflates to more than [0-9,]+ bytes uncompressed, above the 8,388,608"):
            inflated_size(bomb_zlib, 8 * MIB, "galois keys")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * MIB


def test_zlib_measured_exactly_and_truncation_refused():
    data = bytes(range(256)) * 4000
    blob = seal_object(COMPR_ZLIB, zlib.compress(data))
    assert inflated_size(blob, len(data), "key") == len(data)
    with pytest.raises(CkksError, match="truncated"):
        inflated_size(seal_object(COMPR_ZLIB, zlib.compress(data)[:-10]), 1 << 30, "key")
    with pytest.raises(CkksError, match="after the end"):
        inflated_size(seal_object(COMPR_ZLIB, zlib.compress(data) + b"tail"), 1 << 30, "key")
    with pytest.raises(CkksError, match="garbled zlib"):
        inflated_size(seal_object(COMPR_ZLIB, b"\x00\x01garbage"), 1 << 30, "key")


@pytest.mark.parametrize("mode, pack", [(COMPR_ZSTD, zstd_compress), (COMPR_ZLIB, zlib.compress),
                                        (COMPR_NONE, lambda b: b)])
def test_uncompressed_is_the_same_object_stored_whole(mode, pack):
    """The key file's form of a SEAL object (uncompressed): the same body under a header that
    says compression none and the whole size; bounded like inflated_size."""
    body = bytes(range(256)) * 5000 + b"tail"
    blob = seal_object(mode, pack(body))
    whole = b"".join(uncompressed(blob, len(body), "keys"))
    assert parse_seal_header(whole, "keys").compr_mode == COMPR_NONE and whole[16:] == body
    with pytest.raises(InflateLimit):
        b"".join(uncompressed(blob, len(body) - 1, "keys"))


def test_uncompressed_refuses_a_truncated_zstd_frame():
    frame = zstd_compress(bytes(range(256)) * 400)
    with pytest.raises(CkksError, match="truncated|garbled"):
        b"".join(uncompressed(seal_object(COMPR_ZSTD, frame[:-8]), MIB, "keys"))
