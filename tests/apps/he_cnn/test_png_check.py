"""A PNG is checked whole before Pillow sees it. Each damaged or inconsistent file here was
decoded by Pillow as if whole (a bad image-data CRC, trailing bytes, a header taller or shorter
than the data, no IEND) or is a class the decoder must never take (a bomb, an animation): each
is refused with its reason. Every single flipped bit of a valid PNG is refused."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from cryptoffload.apps.he_cnn import png_check
from cryptoffload.apps.he_cnn.png_check import ImageRefused, check_png
from cryptoffload.errors import ConfigError

from .image_craft import chunk, png_bytes, png_chunks, raw_rows

RNG = np.random.default_rng(7)
GREY = RNG.integers(0, 256, (37, 23), dtype=np.uint8)


def _pillow_decodes(data: bytes) -> bool:
    try:
        with Image.open(io.BytesIO(data)) as im:
            im.load()
        return True
    except Exception:
        return False


@pytest.mark.parametrize("pixels, interlaced", [
    (GREY, False), (GREY, True), (RNG.integers(0, 65536, (19, 31), dtype=np.uint16), True),
    (RNG.integers(0, 256, (17, 13, 4), dtype=np.uint8), True), (RNG.integers(0, 256, (1, 1, 2), dtype=np.uint8), True),
    (RNG.integers(0, 65536, (9, 40, 3), dtype=np.uint16), False)])
def test_valid_pngs_are_accepted_and_decode_to_their_pixels(pixels: np.ndarray, interlaced: bool) -> None:
    data = png_bytes(pixels, interlaced=interlaced, idat_pieces=3)
    header = check_png(data)
    assert (header.width, header.height, header.interlaced) == (pixels.shape[1], pixels.shape[0], interlaced)
    with Image.open(io.BytesIO(data)) as im:
        if pixels.dtype == np.uint8:
            np.testing.assert_array_equal(np.asarray(im).reshape(pixels.shape), pixels)


def test_pngs_pillow_writes_are_accepted() -> None:
    for mode in ("1", "L", "P", "RGB", "RGBA", "LA", "I;16"):
        buf = io.BytesIO()
        Image.new(mode, (29, 11)).save(buf, "PNG", optimize=mode != "I;16")
        assert check_png(buf.getvalue()).width == 29, mode


def _with_byte(data: bytes, offset: int, xor: int) -> bytes:
    out = bytearray(data)
    out[offset] ^= xor
    return bytes(out)


def _idat(data: bytes) -> tuple[int, int]:
    return next((pos, n) for pos, n, kind in png_chunks(data) if kind == b"IDAT")


VALID = png_bytes(GREY)


def _damaged() -> dict[str, tuple[bytes, str]]:
    pos, n = _idat(VALID)
    stream = zlib.compress(raw_rows(GREY), 9)
    return {
        "an image-data CRC flipped": (_with_byte(VALID, pos + 8 + n, 1), "IDAT chunk at byte 33 fails its CRC"),
        "trailing bytes after IEND": (VALID + b"garbage", "7 bytes follow its IEND chunk"),
        "no IEND": (VALID[:-12], "ends before its IEND chunk"),
        "cut in the image data": (VALID[:pos + 40], "the IDAT chunk at byte 33 declares"),
        "a header taller than the data": (png_bytes(GREY, header_size=(23, 40)), "truncated or shorter than its header"),
        "a header shorter than the data": (png_bytes(GREY, header_size=(23, 30)), "inflates past"),
        "a header wider than the data": (png_bytes(GREY, header_size=(24, 37)), "filter type"),
        "data beyond the image in its stream (a bomb)": (png_bytes(GREY, data=zlib.compress(raw_rows(GREY) + bytes(10**6))),
                                                         "inflates past the 888 bytes"),
        "a damaged zlib checksum": (png_bytes(GREY, data=stream[:-1] + bytes([stream[-1] ^ 1])), "compressed image data is damaged"),
        "bytes after the zlib stream": (png_bytes(GREY, data=stream + b"\x00\x01"), "bytes follow the end of its compressed"),
        "an unknown filter type": (png_bytes(GREY, data=zlib.compress(b"\x07" + raw_rows(GREY)[1:])), "filter type 7"),
        "an animation (APNG)": (png_bytes(GREY, extra=[chunk(b"acTL", struct.pack(">II", 2, 0))]), "animated PNG"),
        "an unknown critical chunk": (png_bytes(GREY, extra=[chunk(b"ZZZZ", b"")]), "critical chunks no PNG decoder knows"),
        "2 MB of text": (png_bytes(GREY, extra=[chunk(b"tEXt", b"k\x00" + b"x" * 2_000_000)]), "metadata chunks hold"),
        "17 compressed text chunks": (png_bytes(GREY, extra=[chunk(b"zTXt", b"k\x00\x00" + zlib.compress(b"x"))] * 17),
                                      "17 compressed text or profile chunks"),
        "a colour type with a depth PNG lacks": (_with_ihdr(VALID, depth=3), "colour type 0 with 3-bit samples"),
        "a palette image without its palette": (_with_ihdr(VALID, colour=3), "palette image without a palette"),
        "not a PNG": (b"GIF89a" + VALID[6:], "not a PNG file"),
    }


def _with_ihdr(data: bytes, *, depth: int = 8, colour: int = 0) -> bytes:
    body = bytearray(data[16:29])
    body[8], body[9] = depth, colour
    return data[:8] + chunk(b"IHDR", bytes(body)) + data[33:]


DAMAGED = _damaged()


@pytest.mark.parametrize("name", list(DAMAGED))
def test_each_damaged_or_inconsistent_png_is_refused_with_its_reason(name: str) -> None:
    data, reason = DAMAGED[name]
    with pytest.raises(ImageRefused) as info:
        check_png(data)
    assert reason in str(info.value), str(info.value)
    assert isinstance(info.value, ConfigError)


def test_pillow_alone_decoded_these_damaged_files_as_whole_images() -> None:
    """Why the checker exists: each of these decodes without a word in Pillow."""
    for name in ("an image-data CRC flipped", "trailing bytes after IEND", "no IEND", "a header taller than the data",
                 "a header shorter than the data", "data beyond the image in its stream (a bomb)"):
        assert _pillow_decodes(DAMAGED[name][0]), name


def test_image_data_split_by_another_chunk_is_refused() -> None:
    first = png_bytes(GREY, idat_pieces=2)
    cut = [pos for pos, _, kind in png_chunks(first) if kind == b"IDAT"][1]
    second = first[:cut] + chunk(b"tEXt", b"k\x00v") + first[cut:]
    with pytest.raises(ImageRefused, match="split by other chunks"):
        check_png(second)


def test_a_bomb_is_refused_after_inflating_no_more_than_a_piece_past_its_size(monkeypatch) -> None:
    """A 1 KB stream that inflates to 100 MB: refused once the inflated bytes pass the header's
    size, in pieces of at most a mebibyte (never held whole)."""
    seen = []
    real = png_check._check_filters
    monkeypatch.setattr(png_check, "_check_filters", lambda piece, at, seg: (seen.append(len(piece)), real(piece, at, seg)))
    bomb = zlib.compress(raw_rows(GREY) + bytes(100 * 2**20), 9)
    with pytest.raises(ImageRefused, match="inflates past"):
        check_png(png_bytes(GREY, data=bomb))
    assert max(seen) <= 2**20 and sum(seen) <= 2 * 2**20


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_every_single_flipped_bit_of_a_png_is_refused(data: st.DataObject) -> None:
    """Every byte of a PNG is under a CRC, a length, the signature or the IEND rule."""
    offset = data.draw(st.integers(0, len(VALID) - 1))
    bit = data.draw(st.integers(0, 7))
    with pytest.raises(ImageRefused):
        check_png(_with_byte(VALID, offset, 1 << bit))


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_after_the_signature_are_refused_or_read_never_crash(tail: bytes) -> None:
    try:
        check_png(png_check.PNG_MAGIC + tail)
    except ImageRefused:
        pass
