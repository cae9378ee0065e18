"""A JPEG is checked whole before Pillow sees it: its markers, its tables and that its scans code
exactly the blocks its header declares. Pillow (libjpeg) decoded a file whose header declares
more rows than its data holds (padding with grey), fewer (dropping the rest), or with bytes
after its end: each is refused here, as are the kinds of JPEG the product does not decode."""

from __future__ import annotations

import io
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from cryptoffload.apps.he_cnn.jpeg_check import MAX_METADATA_BYTES, check_jpeg
from cryptoffload.apps.he_cnn.jpeg_scan import huffman_table
from cryptoffload.apps.he_cnn.png_check import ImageRefused

from .image_craft import jpeg_bytes, jpeg_scan_data, jpeg_with_size

RNG = np.random.default_rng(3)
COLOUR = RNG.integers(0, 256, (61, 83, 3), dtype=np.uint8)
VALID = jpeg_bytes(COLOUR, quality=90)


def _pillow_decodes(data: bytes) -> bool:
    try:
        with Image.open(io.BytesIO(data)) as im:
            im.load()
        return True
    except Exception:
        return False


@pytest.mark.parametrize("shape", [(1, 1), (9, 17), (64, 50), (61, 83, 3), (17, 300, 3), (8, 8, 3)])
@pytest.mark.parametrize("save", [{}, {"subsampling": 0}, {"subsampling": 1}, {"subsampling": 2, "optimize": True},
                                  {"restart_marker_blocks": 3}, {"restart_marker_rows": 1, "quality": 100}])
def test_sequential_jpegs_in_every_sampling_and_restart_layout_are_accepted(shape: tuple[int, ...], save: dict) -> None:
    pixels = RNG.integers(0, 256, shape, dtype=np.uint8)
    header = check_jpeg(jpeg_bytes(pixels, **save))
    assert (header.width, header.height, len(header.components)) == (shape[1], shape[0], 1 if len(shape) == 2 else 3)


def _restart_swapped() -> bytes:
    data = jpeg_bytes(COLOUR, restart_marker_blocks=2)
    first, second = data.index(b"\xff\xd0"), data.index(b"\xff\xd1")
    out = bytearray(data)
    out[first + 1], out[second + 1] = 0xD1, 0xD0
    return bytes(out)


def _with_marker(data: bytes, old: bytes, new: bytes) -> bytes:
    return data.replace(old, new, 1)


def _comments(total: int) -> bytes:
    body = b"x" * 65_000
    segment = b"\xff\xfe" + struct.pack(">H", len(body) + 2) + body
    return VALID[:2] + segment * (total // len(segment) + 1) + VALID[2:]


def _cmyk() -> bytes:
    buf = io.BytesIO()
    Image.new("CMYK", (16, 16)).save(buf, "JPEG")
    return buf.getvalue()


def _progressive() -> bytes:
    return jpeg_bytes(COLOUR, progressive=True)


REFUSED = {
    "a header taller than its data": (jpeg_with_size(VALID, 83, 61 + 16), "ends before the blocks its header declares"),
    "a header shorter than its data": (jpeg_with_size(VALID, 83, 61 - 16), "are left after the blocks"),
    "a header wider than its data": (jpeg_with_size(VALID, 83 + 16, 61), "its header declares"),
    "bytes after EOI": (VALID + b"\x00" * 9, "9 bytes follow its end-of-image marker"),
    "a second image after EOI (MPO-like)": (VALID + VALID, "follow its end-of-image marker"),
    "no EOI": (VALID[:-2], "truncated"),
    "cut in its data": (VALID[:len(VALID) * 2 // 3], "truncated"),
    "cut in its tables": (VALID[:100], "truncated"),
    "restart markers out of order": (_restart_swapped(), "restart markers are out of order"),
    "a restart marker missing": (_with_marker(jpeg_bytes(COLOUR, restart_marker_blocks=2), b"\xff\xd3", b"\xa5\xa5"),
                                 "restart markers where its header implies"),
    "progressive": (_progressive(), "progressive JPEG"),
    "lossless": (_with_marker(VALID, b"\xff\xc0", b"\xff\xc3"), "lossless JPEG"),
    "arithmetic-coded": (_with_marker(VALID, b"\xff\xc0", b"\xff\xc9"), "arithmetic-coded JPEG"),
    "12-bit samples": (_with_marker(VALID, b"\xff\xc0\x00\x11\x08", b"\xff\xc0\x00\x11\x0c"), "12-bit samples"),
    "a height given later (DNL)": (jpeg_with_size(VALID, 83, 0), "0 pixels"),
    "CMYK": (_cmyk(), "4 colour components"),
    "over a mebibyte of metadata": (_comments(MAX_METADATA_BYTES), "metadata"),
    "a stray start marker": (VALID[:2] + VALID, "stray marker 0xFFD8"),
    "not a JPEG": (b"\xff\xd8\x00" + VALID[3:], "not a JPEG file"),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_each_damaged_inconsistent_or_undecoded_kind_is_refused_with_its_reason(name: str) -> None:
    data, reason = REFUSED[name]
    with pytest.raises(ImageRefused) as info:
        check_jpeg(data)
    assert reason in str(info.value), str(info.value)


def test_pillow_alone_decoded_these_inconsistent_files_as_whole_images() -> None:
    for name in ("a header taller than its data", "a header shorter than its data", "bytes after EOI",
                 "a second image after EOI (MPO-like)"):
        assert _pillow_decodes(REFUSED[name][0]), name


def test_a_code_no_table_defines_is_refused() -> None:
    """The all-ones code is never assigned: 0xFF 0x00 (a stuffed 0xFF) at the start of the scan
    data reads eight 1-bits, which no table's code can start past its longest code."""
    start, _ = jpeg_scan_data(VALID)
    damaged = VALID[:start] + b"\xff\x00\xff\x00" + VALID[start + 4:]
    with pytest.raises(ImageRefused, match="damaged|ends before|left after"):
        check_jpeg(damaged)


def test_a_huffman_table_with_more_codes_than_fit_is_refused() -> None:
    with pytest.raises(ValueError, match="more codes of 1 bits than fit"):
        huffman_table(bytes([2] + [0] * 15), b"\x00\x01")
    assert huffman_table(bytes([1, 1] + [0] * 14), b"\x05\x06")[3, :2].tolist() == [5, 6]


def test_bit_flips_that_desynchronise_the_codes_are_detected_and_none_crashes() -> None:
    """JPEG has no checksum: a flip that changes a coefficient's magnitude bits decodes to a
    slightly different picture, undetectable. A flip that desynchronises the codes is caught.
    Measured here on a disc (a digit-like image), every bit of its scan data: 3,051 of 7,168
    flips (43 %) are caught; the rest change a coefficient and decode to a different picture."""
    ys, xs = np.mgrid[0:64, 0:64]
    smooth = (np.hypot(ys - 32, xs - 32) < 20).astype(np.uint8) * 200 + 20
    data = jpeg_bytes(smooth.astype(np.uint8), quality=90)
    start, end = jpeg_scan_data(data)
    caught = total = 0
    for offset in range(start, end):
        for bit in range(8):
            out = bytearray(data)
            out[offset] ^= 1 << bit
            total += 1
            try:
                check_jpeg(bytes(out))
            except ImageRefused:
                caught += 1
    assert caught / total > 0.4, (caught, total)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_any_damage_is_refused_or_read_never_a_crash(data: st.DataObject) -> None:
    offset = data.draw(st.integers(0, len(VALID) - 1))
    value = data.draw(st.integers(0, 255))
    out = bytearray(VALID)
    out[offset] = value
    try:
        check_jpeg(bytes(out))
    except ImageRefused:
        pass
