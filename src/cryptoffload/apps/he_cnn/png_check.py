"""A PNG file checked whole before it is decoded: its structure, every checksum, and that its
compressed data inflates to exactly what its header declares.

What the decoder (Pillow) lets through, and this refuses (each a :class:`ImageRefused` with the
reason): a chunk whose CRC is wrong (Pillow does not check the image data's), bytes after
``IEND``, a missing ``IEND``, a header whose size disagrees with the data (Pillow fills or
drops the missing or extra rows without a word), image data that inflates past the size the
header declares (a decompression bomb) or falls short of it (truncated), a zlib stream with a
bad checksum or trailing bytes, a row with an unknown filter, an animated PNG (``acTL``: more
than one frame), an unknown critical chunk, and ancillary chunks (text, ICC profiles, EXIF)
beyond :data:`MAX_ANCILLARY_BYTES` in all or :data:`MAX_COMPRESSED_ANCILLARY` compressed ones.

The inflation is streamed, a mebibyte at a time, and nothing is kept: the check costs one pass
of zlib and no memory proportional to the image. Callers: :mod:`.image_decode`.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from cryptoffload.errors import ConfigError

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
#: bit depths each colour type admits (PNG 1.2, table 11.1)
DEPTHS = {0: (1, 2, 4, 8, 16), 2: (8, 16), 3: (1, 2, 4, 8), 4: (8, 16), 6: (8, 16)}
CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
MAX_DIMENSION = 2**31 - 1
#: all ancillary chunks together (text, ICC profile, EXIF, physical size...): a real file holds
#: a few kilobytes; Pillow keeps them in memory
MAX_ANCILLARY_BYTES = 1 << 20
#: compressed ancillary chunks (zTXt, iTXt, iCCP): Pillow inflates each to at most 1 MiB
MAX_COMPRESSED_ANCILLARY = 16
COMPRESSED_ANCILLARY = (b"zTXt", b"iTXt", b"iCCP")
ANIMATION = (b"acTL", b"fcTL", b"fdAT")
#: Adam7: (first row, first column, row step, column step) of each of the seven passes
ADAM7 = ((0, 0, 8, 8), (0, 4, 8, 8), (4, 0, 8, 4), (0, 2, 4, 4), (2, 0, 4, 2), (0, 1, 2, 2), (1, 0, 2, 1))
_PIECE = 1 << 20


class ImageRefused(ConfigError):
    """An image file that is damaged, inconsistent or beyond what is decoded; ``str()`` is why
    (the caller names the file)."""


@dataclass(frozen=True)
class PngHeader:
    """What the header of a checked PNG declares."""

    width: int
    height: int
    bit_depth: int
    colour_type: int
    interlaced: bool
    transparency: bool        # a tRNS chunk: one colour, or palette entries, are transparent
    compressed_ancillary: int  # zTXt/iTXt/iCCP chunks, each inflated by the decoder

    @property
    def channels(self) -> int:
        return CHANNELS[self.colour_type]


def check_png(data: bytes) -> PngHeader:
    """The header of the PNG ``data``, once the whole file is checked (see the module)."""
    header, idat = read_png(data)
    check_png_data(header, idat)
    return header


def read_png(data: bytes) -> "tuple[PngHeader, list[memoryview]]":
    """The header and the image data chunks of the PNG ``data``, its structure and every CRC
    checked; :func:`check_png_data` then checks the data (a caller may refuse the header's
    size first, without inflating anything)."""
    if not data.startswith(PNG_MAGIC):
        raise ImageRefused("it is not a PNG file (no PNG signature)")
    chunks = _chunks(data)
    ihdr = _ihdr(chunks[0][0], chunks[0][1])
    _check_order(chunks, ihdr)
    header = PngHeader(ihdr.width, ihdr.height, ihdr.bit_depth, ihdr.colour_type, ihdr.interlaced,
                       any(kind == b"tRNS" for kind, _ in chunks),
                       sum(kind in COMPRESSED_ANCILLARY for kind, _ in chunks))
    return header, [body for kind, body in chunks if kind == b"IDAT"]


def check_png_data(header: PngHeader, idat: "list[memoryview]") -> None:
    """The image data inflates to exactly what ``header`` declares (see the module)."""
    _check_inflation(idat, _row_segments(header))


def _chunks(data: bytes) -> "list[tuple[bytes, memoryview]]":
    """Every chunk as (type, data), each CRC checked, up to ``IEND`` and nothing after it."""
    view = memoryview(data)
    pos, out = len(PNG_MAGIC), []
    while True:
        if pos + 12 > len(data):
            raise ImageRefused(f"it is truncated: a chunk header at byte {pos:,} is cut off" if pos < len(data)
                               else "it is truncated: it ends before its IEND chunk")
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if length > MAX_DIMENSION or not kind.isalpha() or not kind.isascii():
            raise ImageRefused(f"the chunk at byte {pos:,} is garbled (type {kind!r}, length {length:,})")
        end = pos + 12 + length
        if end > len(data):
            raise ImageRefused(f"it is truncated: the {kind.decode()} chunk at byte {pos:,} declares {length:,} "
                               f"bytes, {len(data) - pos - 12:,} are there")
        body = view[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[end - 4:end])
        if zlib.crc32(body, zlib.crc32(kind)) != crc:
            raise ImageRefused(f"the {kind.decode()} chunk at byte {pos:,} fails its CRC check (damaged)")
        out.append((kind, body))
        pos = end
        if kind == b"IEND":
            if pos != len(data):
                raise ImageRefused(f"{len(data) - pos:,} bytes follow its IEND chunk (trailing data)")
            return out


@dataclass(frozen=True)
class _Ihdr:
    width: int
    height: int
    bit_depth: int
    colour_type: int
    interlaced: bool


def _ihdr(kind: bytes, body: memoryview) -> _Ihdr:
    if kind != b"IHDR" or len(body) != 13:
        raise ImageRefused("its first chunk is not a 13-byte IHDR header")
    width, height, depth, colour, compression, filtering, interlace = struct.unpack(">IIBBBBB", body)
    if not (1 <= width <= MAX_DIMENSION and 1 <= height <= MAX_DIMENSION):
        raise ImageRefused(f"its header declares {width} x {height} pixels")
    if depth not in DEPTHS.get(colour, ()):
        raise ImageRefused(f"its header declares colour type {colour} with {depth}-bit samples, which PNG "
                           "does not define")
    if compression != 0 or filtering != 0 or interlace not in (0, 1):
        raise ImageRefused(f"its header declares compression {compression}, filter {filtering}, interlace "
                           f"{interlace}, which PNG does not define")
    return _Ihdr(width, height, depth, colour, interlace == 1)


def _check_order(chunks: "list[tuple[bytes, memoryview]]", header: _Ihdr) -> None:
    """One IHDR first, a palette where the colour type needs one, one run of IDAT, IEND last,
    one frame, no unknown critical chunk, ancillary chunks within their ceilings."""
    kinds = [kind for kind, _ in chunks]
    if kinds.count(b"IHDR") != 1 or kinds.count(b"IEND") != 1:
        raise ImageRefused("it has more than one IHDR or IEND chunk")
    first = [i for i, k in enumerate(kinds) if k == b"IDAT"]
    if not first or first[-1] - first[0] + 1 != len(first):
        raise ImageRefused("its image data (IDAT) is missing or split by other chunks")
    animated = sorted({k.decode() for k in kinds if k in ANIMATION})
    if animated:
        raise ImageRefused(f"it is an animated PNG ({', '.join(animated)} chunks): more than one frame; "
                           "give a single still image")
    unknown = sorted({k.decode() for k in kinds if k[:1].isupper() and k not in (b"IHDR", b"PLTE", b"IDAT", b"IEND")})
    if unknown:
        raise ImageRefused(f"it has critical chunks no PNG decoder knows ({', '.join(unknown)})")
    _check_palette(chunks, header, first[0])
    ancillary = sum(len(body) for kind, body in chunks if kind[:1].islower())
    if ancillary > MAX_ANCILLARY_BYTES:
        raise ImageRefused(f"its text, profile and metadata chunks hold {ancillary:,} bytes; at most "
                           f"{MAX_ANCILLARY_BYTES:,} are read (strip the metadata)")
    compressed = sum(k in COMPRESSED_ANCILLARY for k in kinds)
    if compressed > MAX_COMPRESSED_ANCILLARY:
        raise ImageRefused(f"it has {compressed} compressed text or profile chunks; at most "
                           f"{MAX_COMPRESSED_ANCILLARY} are read (strip the metadata)")


def _check_palette(chunks: "list[tuple[bytes, memoryview]]", header: _Ihdr, first_idat: int) -> None:
    palettes = [(i, body) for i, (kind, body) in enumerate(chunks) if kind == b"PLTE"]
    if len(palettes) > 1 or (palettes and (palettes[0][0] > first_idat or header.colour_type in (0, 4))):
        raise ImageRefused("its palette (PLTE) is repeated, after the image data, or in a grey image")
    if header.colour_type == 3:
        if not palettes:
            raise ImageRefused("it is a palette image without a palette (PLTE)")
        entries, rest = divmod(len(palettes[0][1]), 3)
        if rest or not 1 <= entries <= min(256, 1 << header.bit_depth):
            raise ImageRefused(f"its palette holds {len(palettes[0][1])} bytes, not 3 per entry for 1 to "
                               f"{min(256, 1 << header.bit_depth)} entries")


def _row_bytes(header: PngHeader, width: int) -> int:
    return (width * CHANNELS[header.colour_type] * header.bit_depth + 7) // 8


def _row_segments(header: PngHeader) -> list[tuple[int, int, int]]:
    """Where the filtered rows lie in the inflated data: ``(start, rows, stride)`` per pass
    (one for a plain image, up to seven for Adam7); each row is a filter byte, then its bytes."""
    passes = ADAM7 if header.interlaced else ((0, 0, 1, 1),)
    segments, start = [], 0
    for row0, col0, dy, dx in passes:
        w = (header.width - col0 + dx - 1) // dx if header.width > col0 else 0
        h = (header.height - row0 + dy - 1) // dy if header.height > row0 else 0
        if w and h:
            stride = 1 + _row_bytes(header, w)
            segments.append((start, h, stride))
            start += h * stride
    return segments


def _check_inflation(idat: "list[memoryview]", segments: list[tuple[int, int, int]]) -> None:
    """The image data inflates to exactly the size the header declares, its zlib checksum
    holds, nothing follows the stream, and every row's filter type is one PNG defines (0..4).
    Streamed: at most a mebibyte of inflated data is held at a time."""
    expected = segments[-1][0] + segments[-1][1] * segments[-1][2]
    inflater = zlib.decompressobj()
    total = 0
    try:
        for body in idat:
            pending = bytes(body)
            while pending:
                piece = inflater.decompress(pending, _PIECE)
                pending = inflater.unconsumed_tail
                _check_filters(piece, total, segments)
                total += len(piece)
                if total > expected:
                    raise ImageRefused(f"its image data inflates past the {expected:,} bytes its header declares "
                                       "(a decompression bomb, or a header that does not match the data)")
                if inflater.eof and (pending or inflater.unused_data):
                    raise ImageRefused("bytes follow the end of its compressed image data")
    except zlib.error as exc:
        raise ImageRefused(f"its compressed image data is damaged ({exc})") from None
    if not inflater.eof or total != expected:
        raise ImageRefused(f"its image data is truncated or shorter than its header declares ({total:,} of "
                           f"{expected:,} bytes)")


def _check_filters(piece: bytes, at: int, segments: list[tuple[int, int, int]]) -> None:
    """The filter bytes (one per row) that fall in ``piece``, which starts at offset ``at``."""
    end = at + len(piece)
    for start, rows, stride in segments:
        stop = start + rows * stride
        if stop <= at or start >= end:
            continue
        first = start + stride * max(0, -(-(at - start) // stride))
        if first < min(end, stop):
            filters = piece[first - at:min(end, stop) - at:stride]
            if filters and max(filters) > 4:
                raise ImageRefused(f"a row of its image data has filter type {max(filters)} (PNG defines 0..4): "
                                   "the data is damaged")
