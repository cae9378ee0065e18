"""A JPEG file checked whole before it is decoded: its markers, its tables, and that its scans
code exactly the blocks its frame header declares.

Accepted: a sequential Huffman-coded JPEG (baseline or extended, ``SOF0``/``SOF1``) of 8-bit
samples, grey (one component) or colour (three), the kind every camera and most programs write.
Refused, each a :class:`~.png_check.ImageRefused` with the reason and the fix: progressive
JPEG (its decoder holds every coefficient of the image at once, 2 bytes per sample: hundreds of
megabytes at the pixel ceiling, before a pixel comes out), lossless, hierarchical or
arithmetic-coded JPEG, 12-bit samples, CMYK, a height declared later (``DNL``), more than one
frame (a second image after ``EOI``, as MPO files hold), bytes after ``EOI``, a file that ends
before ``EOI``, a marker or table that is garbled, undefined tables, restart markers out of
order, and metadata (``APPn``, ``COM``) beyond :data:`MAX_METADATA_BYTES`.

Each scan's entropy-coded data is walked by :mod:`.jpeg_scan`: it must hold exactly the codes of
the blocks the header declares, no fewer (truncated, or a taller header: libjpeg would pad with
grey) and no more (leftover bytes). JPEG has no checksum, so a flipped bit that leaves a valid
code stream is not detectable by any reader; see :mod:`.jpeg_scan`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from cryptoffload.apps.he_cnn.png_check import ImageRefused

JPEG_MAGIC = b"\xff\xd8\xff"
#: APPn and COM segments together (EXIF, ICC profile, thumbnails, comments): Pillow keeps them
#: in memory; a camera's are under 100 KB
MAX_METADATA_BYTES = 1 << 20
SEQUENTIAL = (0xC0, 0xC1)
PROGRESSIVE = 0xC2
OTHER_FRAMES = {0xC3: "lossless", 0xC5: "hierarchical", 0xC6: "hierarchical", 0xC7: "hierarchical",
                0xC9: "arithmetic-coded", 0xCA: "arithmetic-coded", 0xCB: "arithmetic-coded",
                0xCD: "arithmetic-coded", 0xCE: "arithmetic-coded", 0xCF: "arithmetic-coded"}
_FIX = "save it as a baseline JPEG or as a PNG"


@dataclass(frozen=True)
class Component:
    ident: int
    h: int
    v: int
    quant: int


@dataclass(frozen=True)
class JpegHeader:
    """What the frame header of a checked JPEG declares."""

    width: int
    height: int
    components: tuple[Component, ...]
    metadata_bytes: int

    @property
    def h_max(self) -> int:
        return max(c.h for c in self.components)

    @property
    def v_max(self) -> int:
        return max(c.v for c in self.components)


@dataclass
class _State:
    data: bytes
    array: np.ndarray
    frame: JpegHeader | None = None
    dc: dict[int, np.ndarray] = field(default_factory=dict)
    ac: dict[int, np.ndarray] = field(default_factory=dict)
    quant: set[int] = field(default_factory=set)
    scanned: set[int] = field(default_factory=set)
    restart: int = 0
    metadata: int = 0


def check_jpeg(data: bytes) -> JpegHeader:
    """The frame header of the JPEG ``data``, once the whole file is checked (see the module)."""
    if not data.startswith(JPEG_MAGIC):
        raise ImageRefused("it is not a JPEG file (no JPEG start marker)")
    state = _State(data, np.frombuffer(data, dtype=np.uint8))
    pos = 2
    while True:
        marker, pos = _next_marker(data, pos)
        if marker == 0xD9:
            return _end(state, pos)
        if marker in (0xD8, 0x01, 0x00) or 0xD0 <= marker <= 0xD7:
            raise ImageRefused(f"it has a stray marker 0xFF{marker:02X} before byte {pos:,} (damaged)")
        if pos + 2 > len(data):
            raise ImageRefused("it is truncated: a segment header is cut off")
        (length,) = struct.unpack(">H", data[pos:pos + 2])
        if length < 2 or pos + length > len(data):
            raise ImageRefused(f"it is truncated or garbled: the 0xFF{marker:02X} segment at byte {pos:,} "
                               f"declares {length:,} bytes, {len(data) - pos:,} remain")
        body = data[pos + 2:pos + length]
        pos += length
        pos = _segment(state, marker, body, pos)


def _next_marker(data: bytes, pos: int) -> tuple[int, int]:
    """The marker at ``pos`` (fill bytes 0xFF skipped) and the byte after it."""
    if pos >= len(data):
        raise ImageRefused("it is truncated: it ends before its end-of-image marker (EOI)")
    if data[pos] != 0xFF:
        raise ImageRefused(f"byte {pos:,} should start a marker and does not (garbled)")
    while pos < len(data) and data[pos] == 0xFF:
        pos += 1
    if pos >= len(data):
        raise ImageRefused("it is truncated: it ends in the middle of a marker")
    return data[pos], pos + 1


def _segment(state: _State, marker: int, body: bytes, pos: int) -> int:
    """Read one segment; returns where the next marker starts (after a scan's data for SOS)."""
    if marker in SEQUENTIAL:
        _frame(state, body)
    elif marker == PROGRESSIVE:
        raise ImageRefused(f"it is a progressive JPEG, which is not decoded here (its decoder holds every "
                           f"coefficient of the image at once); {_FIX}")
    elif marker in OTHER_FRAMES or marker == 0xCC:
        raise ImageRefused(f"it is a {OTHER_FRAMES.get(marker, 'arithmetic-coded')} JPEG; {_FIX}")
    elif marker == 0xDC:
        raise ImageRefused(f"it declares its height after the image data (DNL); {_FIX}")
    elif marker == 0xC4:
        _huffman(state, body)
    elif marker == 0xDB:
        _quantisation(state, body)
    elif marker == 0xDD:
        if len(body) != 2:
            raise ImageRefused("its restart interval segment (DRI) is garbled")
        (state.restart,) = struct.unpack(">H", body)
    elif 0xE0 <= marker <= 0xEF or marker == 0xFE:
        state.metadata += len(body) + 4
        if state.metadata > MAX_METADATA_BYTES:
            raise ImageRefused(f"its metadata (EXIF, ICC profile, comments) passes {MAX_METADATA_BYTES:,} bytes; "
                               "strip the metadata")
    elif marker == 0xDA:
        return _scan(state, body, pos)
    else:
        raise ImageRefused(f"it has a marker no JPEG reader knows (0xFF{marker:02X}) before byte {pos:,}")
    return pos


def _frame(state: _State, body: bytes) -> None:
    if state.frame is not None:
        raise ImageRefused("it has more than one frame header: more than one image")
    if len(body) < 6:
        raise ImageRefused("its frame header (SOF) is garbled")
    precision, height, width, count = struct.unpack(">BHHB", body[:6])
    if len(body) != 6 + 3 * count:
        raise ImageRefused("its frame header (SOF) is garbled")
    if precision != 8:
        raise ImageRefused(f"it has {precision}-bit samples; {_FIX} with 8-bit samples")
    if height == 0 or width == 0:
        raise ImageRefused(f"its frame header declares {width} x {height} pixels")
    if count not in (1, 3):
        raise ImageRefused(f"it has {count} colour components (CMYK?); {_FIX} in grey or RGB")
    comps = []
    for i in range(count):
        ident, hv, quant = body[6 + 3 * i:9 + 3 * i]
        h, v = hv >> 4, hv & 15
        if not (1 <= h <= 4 and 1 <= v <= 4) or quant > 3:
            raise ImageRefused(f"component {ident} declares sampling {h} x {v} and table {quant} (garbled)")
        comps.append(Component(ident, h, v, quant))
    if len({c.ident for c in comps}) != count:
        raise ImageRefused("its frame header names a component twice (garbled)")
    state.frame = JpegHeader(width, height, tuple(comps), 0)


def _huffman(state: _State, body: bytes) -> None:
    off = 0
    while off < len(body):
        if off + 17 > len(body):
            raise ImageRefused("its Huffman table segment (DHT) is garbled")
        kind, slot = body[off] >> 4, body[off] & 15
        counts = body[off + 1:off + 17]
        n = sum(counts)
        values = body[off + 17:off + 17 + n]
        if kind > 1 or slot > 3 or n > 256 or len(values) != n:
            raise ImageRefused("its Huffman table segment (DHT) is garbled")
        from cryptoffload.apps.he_cnn.jpeg_scan import huffman_table  # numba: imported for JPEG only

        try:
            (state.ac if kind else state.dc)[slot] = huffman_table(counts, values)
        except ValueError as exc:
            raise ImageRefused(str(exc)) from None
        off += 17 + n


def _quantisation(state: _State, body: bytes) -> None:
    off = 0
    while off < len(body):
        precision, slot = body[off] >> 4, body[off] & 15
        size = 1 + 64 * (precision + 1)
        if precision > 1 or slot > 3 or off + size > len(body):
            raise ImageRefused("its quantisation table segment (DQT) is garbled")
        state.quant.add(slot)
        off += size


def _scan(state: _State, body: bytes, pos: int) -> int:
    """Check one scan's header and walk its data; returns where the marker after it starts."""
    frame = state.frame
    if frame is None or not body or len(body) != 4 + 2 * body[0]:
        raise ImageRefused("a scan comes before the frame header, or its header (SOS) is garbled")
    count = body[0]
    by_id = {c.ident: c for c in frame.components}
    comps, tables = [], []
    for i in range(count):
        ident, sel = body[1 + 2 * i:3 + 2 * i]
        c = by_id.get(ident)
        if c is None or ident in state.scanned or sel >> 4 not in state.dc or sel & 15 not in state.ac:
            raise ImageRefused(f"a scan names component {ident}, which is unknown, scanned twice, or without "
                               "its Huffman tables (damaged)")
        if c.quant not in state.quant:
            raise ImageRefused(f"component {ident} uses quantisation table {c.quant}, which is not defined")
        comps.append(c)
        tables.append((sel >> 4, sel & 15))
        state.scanned.add(ident)
    start, end, approx = body[1 + 2 * count:4 + 2 * count]
    if (start, end, approx) != (0, 63, 0) or (count > 1 and sum(c.h * c.v for c in comps) > 10):
        raise ImageRefused("a scan's header (SOS) is not that of a sequential JPEG (garbled)")
    mcus, dc_of, ac_of = _blocks(frame, comps, tables)
    return _walk(state, pos, mcus, dc_of, ac_of)


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _blocks(frame: JpegHeader, comps: list[Component], tables: list[tuple[int, int]]
            ) -> tuple[int, np.ndarray, np.ndarray]:
    """MCUs of a scan and, per block of an MCU, its DC and AC table (a scan of one component
    codes that component's blocks one by one; an interleaved one, MCUs of h x v blocks each)."""
    if len(comps) == 1:
        c = comps[0]
        width = _ceil(frame.width * c.h, frame.h_max)
        height = _ceil(frame.height * c.v, frame.v_max)
        return _ceil(width, 8) * _ceil(height, 8), np.array([tables[0][0]]), np.array([tables[0][1]])
    mcus = _ceil(frame.width, 8 * frame.h_max) * _ceil(frame.height, 8 * frame.v_max)
    dc = [t[0] for c, t in zip(comps, tables) for _ in range(c.h * c.v)]
    ac = [t[1] for c, t in zip(comps, tables) for _ in range(c.h * c.v)]
    return mcus, np.array(dc), np.array(ac)


def _walk(state: _State, pos: int, mcus: int, dc_of: np.ndarray, ac_of: np.ndarray) -> int:
    """Walk the entropy-coded data from ``pos``, restart interval by interval; returns where the
    marker that ends it starts."""
    from cryptoffload.apps.he_cnn.jpeg_scan import BAD_CODE, check_interval  # numba: imported for JPEG only

    arr = state.array
    ff = np.flatnonzero(arr[pos:-1] == 0xFF) + pos
    following = arr[ff + 1]
    restart = (following >= 0xD0) & (following <= 0xD7)
    ends = ff[~restart & (following != 0)]
    if not ends.size:
        raise ImageRefused("it is truncated: its image data ends without a marker after it")
    end = int(ends[0])
    marks = ff[restart & (ff < end)]
    per = state.restart or mcus
    intervals = _ceil(mcus, per)
    if marks.size != intervals - 1:
        raise ImageRefused(f"its image data has {marks.size} restart markers where its header implies "
                           f"{intervals - 1} (damaged, truncated, or a header that does not match the data)")
    if np.any(arr[marks + 1] != 0xD0 + np.arange(marks.size) % 8):
        raise ImageRefused("its restart markers are out of order (damaged)")
    bounds = [pos, *(int(m) + 2 for m in marks)]
    stops = [*(int(m) for m in marks), end]
    dc_tables, ac_tables = _stack(state.dc), _stack(state.ac)
    for i, (a, b) in enumerate(zip(bounds, stops)):
        n = per if i < intervals - 1 else mcus - per * (intervals - 1)
        segment = _unstuffed(arr[a:b])
        used = check_interval(segment, n, dc_of, ac_of, dc_tables, ac_tables)
        if used == BAD_CODE:
            raise ImageRefused("its image data holds a code no Huffman table defines (damaged)")
        if used < 0:
            raise ImageRefused("its image data ends before the blocks its header declares (truncated, or a header "
                               "that does not match the data)")
        if segment.size * 8 - used >= 8:
            raise ImageRefused(f"{(segment.size * 8 - used) // 8:,} bytes of image data are left after the blocks "
                               "its header declares (damaged, or a header that does not match the data)")
    return end


def _stack(tables: dict[int, np.ndarray]) -> np.ndarray:
    out = np.full((4, 4, 256), -1, dtype=np.int64)
    for slot, table in tables.items():
        out[slot] = table
    return out


def _unstuffed(segment: np.ndarray) -> np.ndarray:
    """The bytes with the zero stuffed after each 0xFF removed."""
    stuffed = np.flatnonzero(segment[:-1] == 0xFF) + 1
    return np.delete(segment, stuffed) if stuffed.size else segment


def _end(state: _State, pos: int) -> JpegHeader:
    frame = state.frame
    if frame is None or state.scanned != {c.ident for c in frame.components}:
        raise ImageRefused("it ends (EOI) before every component of its image was coded (truncated)")
    if pos != len(state.data):
        raise ImageRefused(f"{len(state.data) - pos:,} bytes follow its end-of-image marker (trailing data, or a "
                           "second image: give one still image)")
    return JpegHeader(frame.width, frame.height, frame.components, state.metadata)
