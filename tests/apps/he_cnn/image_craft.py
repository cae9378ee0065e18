"""Image files crafted byte by byte, as an attacker would: a PNG writer that can interlace,
write 16-bit samples, insert or damage any chunk, and lie in its header; and helpers that edit
a JPEG's markers. Used by the decoder tests and by the memory benchmark's crafted images."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
from PIL import Image

from cryptoffload.apps.he_cnn.png_check import ADAM7, PNG_MAGIC

COLOUR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}  # channels -> PNG colour type (grey, grey+alpha, RGB, RGBA)


def chunk(kind: bytes, body: bytes, crc: int | None = None) -> bytes:
    """One PNG chunk; ``crc`` overrides the true CRC (a damaged chunk)."""
    value = zlib.crc32(body, zlib.crc32(kind)) if crc is None else crc
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", value)


def raw_rows(pixels: np.ndarray, interlaced: bool = False) -> bytes:
    """The filtered (filter 0) rows PNG compresses: ``pixels`` (h, w) or (h, w, c), uint8 or
    uint16 (big-endian), Adam7 passes one after the other when ``interlaced``."""
    a = pixels if pixels.ndim == 3 else pixels[..., None]
    big = a.astype(">u2") if a.dtype == np.uint16 else a.astype(np.uint8)
    passes = ADAM7 if interlaced else ((0, 0, 1, 1),)
    out = bytearray()
    for row0, col0, dy, dx in passes:
        sub = big[row0::dy, col0::dx]
        if sub.size:
            for row in sub:
                out += b"\x00" + row.tobytes()
    return bytes(out)


def png_bytes(pixels: np.ndarray, *, interlaced: bool = False, extra: list[bytes] = (),
              after_idat: list[bytes] = (), header_size: tuple[int, int] | None = None,
              data: bytes | None = None, idat_pieces: int = 1) -> bytes:
    """A PNG of ``pixels``; ``extra`` chunks go before the image data, ``after_idat`` after it;
    ``header_size`` (w, h) lies about the size; ``data`` replaces the compressed stream."""
    a = pixels if pixels.ndim == 3 else pixels[..., None]
    h, w, c = a.shape
    depth = 16 if pixels.dtype == np.uint16 else 8
    hw, hh = header_size or (w, h)
    ihdr = struct.pack(">IIBBBBB", hw, hh, depth, COLOUR_TYPES[c], 0, 0, 1 if interlaced else 0)
    stream = zlib.compress(raw_rows(pixels, interlaced), 9) if data is None else data
    step = -(-len(stream) // idat_pieces)
    idat = b"".join(chunk(b"IDAT", stream[i:i + step]) for i in range(0, len(stream), step))
    return (PNG_MAGIC + chunk(b"IHDR", ihdr) + b"".join(extra) + idat + b"".join(after_idat)
            + chunk(b"IEND", b""))


def png_chunks(data: bytes) -> list[tuple[int, int, bytes]]:
    """(offset, length, type) of each chunk of a PNG."""
    pos, out = 8, []
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        out.append((pos, n, kind))
        pos += 12 + n
    return out


def jpeg_bytes(pixels: np.ndarray, **save: object) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, "JPEG", **save)
    return buf.getvalue()


def jpeg_with_size(data: bytes, width: int, height: int) -> bytes:
    """``data`` with its frame header (SOF0) declaring another size."""
    i = data.index(b"\xff\xc0")
    out = bytearray(data)
    out[i + 5:i + 9] = struct.pack(">HH", height, width)
    return bytes(out)


def jpeg_scan_data(data: bytes) -> tuple[int, int]:
    """(first, end) byte offsets of a single-scan JPEG's entropy-coded data."""
    sos = data.index(b"\xff\xda")
    (length,) = struct.unpack(">H", data[sos + 2:sos + 4])
    return sos + 2 + length, len(data) - 2
