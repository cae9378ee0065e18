"""An image is decoded within a memory budget computed from its header, or refused before a
pixel is decoded; what is decoded is at most 512 pixels a side, upright, and Pillow never pads
a truncated file. (Peak memory itself is measured in benchmarks/image_decode_memory.py.)"""

from __future__ import annotations

import io
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageFile

from cryptoffload.apps.he_cnn import image_decode, png_check
from cryptoffload.apps.he_cnn.image_decode import (MAX_DECODE_BYTES, WORK_SIDE, decode_grey_alpha, decode_plan,
                                                   draft_scale)
from cryptoffload.apps.he_cnn.png_check import ImageRefused

from .image_craft import jpeg_bytes, png_bytes

RNG = np.random.default_rng(11)


def _zero_png(width: int, height: int, channels: int, depth: int) -> bytes:
    """A PNG of zeros whose stream is made row by row (a few MB, inflating to gigabytes)."""
    row = b"\x00" * (1 + width * channels * depth // 8)
    deflate = zlib.compressobj(9)
    stream = b"".join(deflate.compress(row) for _ in range(height)) + deflate.flush()
    pixels = np.zeros((1, 1, channels), dtype=np.uint16 if depth == 16 else np.uint8)
    return png_bytes(pixels if channels > 1 else pixels[..., 0], header_size=(width, height), data=stream)


def test_a_16_bit_rgba_png_under_the_pixel_ceiling_is_refused_for_its_memory_before_inflating(monkeypatch) -> None:
    """7,000 x 7,000 (49 megapixels, under the 50 M ceiling): Pillow would hold it at 4 bytes a
    pixel and take its grey and opacity bands (2 more): 280 MiB, 301 MiB with the working arrays.
    Refused from the header, before its 392 MB of image data are inflated."""
    data = _zero_png(7000, 7000, 4, 16)
    inflated = []
    monkeypatch.setattr(image_decode, "check_png_data", lambda *a: inflated.append(a))
    with pytest.raises(ImageRefused, match=r"decoding its 7000 x 7000 pixels would take about 301 MiB "
                                           r"\(decoded image 187, conversion 93, working arrays 20\); at most 256 MiB"):
        decode_plan(data)
    assert not inflated


def test_the_estimate_names_each_share() -> None:
    plan = decode_plan(png_bytes(RNG.integers(0, 256, (40, 30, 4), dtype=np.uint8)))
    assert plan.parts["decoded image"] == 40 * 30 * 4 and plan.parts["conversion"] == 40 * 30 * 2
    assert plan.total == sum(plan.parts.values()) < MAX_DECODE_BYTES
    grey = decode_plan(png_bytes(RNG.integers(0, 256, (40, 30), dtype=np.uint8)))
    assert grey.parts["decoded image"] == 1200 and grey.parts["conversion"] == 0


def test_an_8_bit_grey_bomb_at_the_pixel_ceiling_is_decoded_small() -> None:
    """A 50 KB file of 7,000 x 7,000 grey zeros plus one white bar: within the budget (1 byte a
    pixel), decoded and reduced to at most 512 pixels a side."""
    pixels = np.zeros((700, 700), np.uint8)
    pixels[100:600, 300:400] = 255
    big = np.kron(pixels, np.ones((10, 10), np.uint8))
    grey, alpha = decode_grey_alpha(png_bytes(big))
    assert alpha is None and max(grey.shape) <= WORK_SIDE and grey.max() == 1.0


def test_the_pixel_ceiling_still_holds() -> None:
    with pytest.raises(ImageRefused, match=r"it is 8000 x 7000 pixels; at most 50,000,000 pixels are read"):
        decode_plan(_zero_png(8000, 7000, 1, 8))


@pytest.mark.parametrize("width, height, scale", [(100, 50, 1), (1024, 700, 2), (2500, 1500, 4), (4000, 3000, 8),
                                                  (60000, 600, 8)])
def test_a_large_jpeg_is_decoded_by_libjpeg_already_scaled_down(width: int, height: int, scale: int) -> None:
    assert draft_scale(width, height) == scale


def test_a_large_colour_jpeg_decodes_to_at_most_512_pixels_in_grey() -> None:
    pixels = np.full((1500, 2600, 3), 230, np.uint8)
    pixels[300:1200, 1200:1400] = 10
    data = jpeg_bytes(pixels, quality=85)
    plan = decode_plan(data)
    assert plan.parts["decoded image"] == 650 * 375
    grey, alpha = decode_grey_alpha(data)
    assert alpha is None and grey.shape == (188, 325) and grey.min() < 0.1 < 0.8 < grey.max()


def test_exif_orientation_turns_the_image_upright() -> None:
    pixels = np.zeros((40, 20), np.uint8)
    pixels[:10, :5] = 255  # a mark in the top left corner
    exif = Image.Exif()
    exif[0x0112] = 6  # stored rotated: turn 90 degrees clockwise to view
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, "JPEG", exif=exif, quality=95)
    grey, _ = decode_grey_alpha(buf.getvalue())
    assert grey.shape == (20, 40) and grey[:5, -10:].mean() > 0.9 and grey[-5:, :10].mean() < 0.1


def test_transparency_is_kept_as_opacity() -> None:
    rgba = np.zeros((30, 30, 4), np.uint8)
    rgba[5:25, 10:20, 3] = 255
    grey, alpha = decode_grey_alpha(png_bytes(rgba, interlaced=True))
    assert alpha is not None and alpha[10, 15] == 1.0 and alpha[0, 0] == 0.0


@pytest.mark.parametrize("kind", ["APNG", "MPO-like JPEG", "GIF"])
def test_more_than_one_frame_and_other_formats_are_refused(kind: str) -> None:
    im = Image.fromarray(RNG.integers(0, 256, (16, 16), dtype=np.uint8))
    buf = io.BytesIO()
    if kind == "APNG":
        im.save(buf, "PNG", save_all=True, append_images=[im.rotate(90)])
    elif kind == "GIF":
        im.save(buf, "GIF")
    data = buf.getvalue() if kind != "MPO-like JPEG" else jpeg_bytes(np.asarray(im)) * 2
    with pytest.raises(ImageRefused, match="animated|follow its end-of-image|not a PNG or JPEG"):
        decode_grey_alpha(data)


def test_pillow_decodes_strictly_even_when_another_library_turned_truncation_on(monkeypatch) -> None:
    """``LOAD_TRUNCATED_IMAGES`` is off while decoding, whatever the process set, and restored."""
    seen = []
    real = png_check._check_inflation
    monkeypatch.setattr(ImageFile, "LOAD_TRUNCATED_IMAGES", True)
    monkeypatch.setattr(image_decode, "check_png_data", lambda h, idat: seen.append(ImageFile.LOAD_TRUNCATED_IMAGES))
    pixels = RNG.integers(0, 256, (64, 64), dtype=np.uint8)
    stream = zlib.compress(b"".join(b"\x00" + r.tobytes() for r in pixels))
    truncated = png_bytes(pixels, data=stream[:len(stream) // 2])  # a stream cut short: only Pillow is left to see it
    with pytest.raises(ImageRefused, match="cannot decode it"):
        decode_grey_alpha(truncated)
    assert ImageFile.LOAD_TRUNCATED_IMAGES is True and seen == [True]
    assert real is png_check._check_inflation


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["png", "jpeg"]), st.integers(0, 10**6), st.integers(0, 255))
def test_a_damaged_file_is_refused_or_decoded_never_a_crash(kind: str, where: int, value: int) -> None:
    pixels = RNG.integers(0, 256, (24, 24), dtype=np.uint8)
    data = bytearray(png_bytes(pixels) if kind == "png" else jpeg_bytes(pixels))
    data[where % len(data)] = value
    try:
        grey, _ = decode_grey_alpha(bytes(data))
    except ImageRefused:
        return
    assert grey.shape == (24, 24)
