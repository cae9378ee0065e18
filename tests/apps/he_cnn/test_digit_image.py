"""A digit of one's own as an MNIST image: a known shape lands exactly where MNIST's rule puts
it, whatever the polarity, transparency, size or format; held-out MNIST digits drawn large, dark
on light, come back as images the model classifies as it does the originals; files that are no
image, a blank image and too many pixels are refused naming the file, and a damaged file is
never classified."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from cryptoffload.apps.he_cnn import image_decode
from cryptoffload.apps.he_cnn.digit_image import digit_from_bytes, load_digit_image
from cryptoffload.errors import ConfigError


def _bar(light_background: bool = True) -> np.ndarray:
    """100 x 50 pixels, an 80 x 30 solid bar (rows 10..89, columns 10..39)."""
    a = np.full((100, 50), 255 if light_background else 0, np.uint8)
    a[10:90, 10:40] = 0 if light_background else 255
    return a


def _expected_bar() -> np.ndarray:
    """The bar scaled by 20/80 is 20 x 8 (7.5 rounded half up); its centre of mass (9.5, 3.5)
    goes to (14, 14) rounded half up: rows 5..24, columns 11..18."""
    out = np.zeros((28, 28))
    out[5:25, 11:19] = 1.0
    return out


@pytest.mark.parametrize("light_background", [True, False])
def test_a_bar_lands_where_mnist_puts_it_in_either_polarity(tmp_path: Path, light_background: bool) -> None:
    Image.fromarray(_bar(light_background)).save(tmp_path / "bar.png")
    np.testing.assert_allclose(load_digit_image(tmp_path / "bar.png"), _expected_bar(), atol=1e-6)


def test_on_a_transparent_background_the_opacity_is_the_ink(tmp_path: Path) -> None:
    """A white stroke on a transparent (white) background would be invisible as grey; its
    opacity is the digit."""
    rgba = np.zeros((100, 50, 4), np.uint8)
    rgba[..., :3] = 255
    rgba[..., 3] = 255 - _bar()  # opaque where the bar is
    Image.fromarray(rgba, "RGBA").save(tmp_path / "bar.png")
    np.testing.assert_allclose(load_digit_image(tmp_path / "bar.png"), _expected_bar(), atol=1e-6)


def test_a_16_bit_grey_png_keeps_its_range(tmp_path: Path) -> None:
    Image.fromarray(_bar().astype(np.uint16) * 257).save(tmp_path / "bar16.png")
    assert Image.open(tmp_path / "bar16.png").mode.startswith("I")
    np.testing.assert_allclose(load_digit_image(tmp_path / "bar16.png"), _expected_bar(), atol=1e-6)


def _nearest_shift(img: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Per shift of at most one pixel each way, the mean |img shifted - target|; the least."""
    return min(np.abs(np.roll(img, (dy, dx), axis=(0, 1)) - target).mean() for dy in (-1, 0, 1) for dx in (-1, 0, 1))


def test_a_jpeg_with_its_artefacts_gives_the_same_bar(tmp_path: Path) -> None:
    """JPEG ringing moves the bar's centre of mass off its rounding tie (9.5): the bar lands one
    pixel up and left, and is otherwise the PNG's."""
    Image.fromarray(_bar()).convert("RGB").save(tmp_path / "bar.jpg", quality=80)
    img = load_digit_image(tmp_path / "bar.jpg")
    ink = np.argwhere(img > 0.5)
    assert ink.min(axis=0).tolist() == [4, 10] and ink.max(axis=0).tolist() == [23, 17]
    assert np.abs(np.roll(img, (1, 1), axis=(0, 1)) - _expected_bar()).max() < 0.2


def test_held_out_digits_drawn_large_are_classified_as_the_originals(tmp_path: Path) -> None:
    """Twenty held-out MNIST digits, four times larger, dark ink on white, through the file
    path: the model's answer is the original's for every one; each comes back with its longer
    side 20 pixels, its centre of mass within half a pixel of (14, 14), and its pixels within
    about 1 % of the original's once a rounding tie's one-pixel shift is allowed for."""
    from cryptoffload.apps.he_cnn.data import load_mnist
    from cryptoffload.apps.he_cnn.model import load_model
    from cryptoffload.apps.he_cnn.train import DEFAULT_WEIGHTS

    model, data = load_model(DEFAULT_WEIGHTS), load_mnist()
    for i in range(20):
        x = data.x_test[i]
        Image.fromarray((255 - np.round(np.kron(x, np.ones((4, 4))) * 255)).astype(np.uint8)).save(tmp_path / "d.png")
        y = load_digit_image(tmp_path / "d.png")
        assert np.argmax(model.forward(y)[0]) == np.argmax(model.forward(x)[0]), i
        rows, cols = np.flatnonzero(y.any(axis=1)), np.flatnonzero(y.any(axis=0))
        assert max(rows[-1] - rows[0], cols[-1] - cols[0]) + 1 == 20, i
        ys, xs = np.mgrid[0:28, 0:28]
        assert abs((ys * y).sum() / y.sum() - 14) <= 0.5 and abs((xs * y).sum() / y.sum() - 14) <= 0.5, i
        assert _nearest_shift(y, x) < 0.012, (i, _nearest_shift(y, x))


def test_files_that_are_not_a_digit_are_refused(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "notes.png").write_text("not an image\n")
    with pytest.raises(ConfigError, match=r"image .*notes.png: it is not a PNG or JPEG file"):
        load_digit_image(tmp_path / "notes.png")
    Image.fromarray(_bar()).save(tmp_path / "bar.gif")
    with pytest.raises(ConfigError, match=r"bar.gif: it is not a PNG or JPEG file"):
        load_digit_image(tmp_path / "bar.gif")
    Image.fromarray(np.full((30, 30), 200, np.uint8)).save(tmp_path / "blank.png")
    with pytest.raises(ConfigError, match=r"blank.png has no digit to find: it is one flat colour \(contrast 0.00\)"):
        load_digit_image(tmp_path / "blank.png")
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (200, 200)).astype(np.uint8)).save(tmp_path / "n.png")
    data = (tmp_path / "n.png").read_bytes()
    (tmp_path / "cut.png").write_bytes(data[:len(data) // 2])
    with pytest.raises(ConfigError, match=r"cut.png: it is truncated"):
        load_digit_image(tmp_path / "cut.png")
    with pytest.raises(ConfigError, match=r"cannot read image file \(--image\) .*absent.png"):
        load_digit_image(tmp_path / "absent.png")
    monkeypatch.setattr(image_decode, "MAX_IMAGE_PIXELS", 4999)
    with pytest.raises(ConfigError, match=r"bar.png: it is 50 x 100 pixels; at most 4,999 pixels are read"):
        Image.fromarray(_bar()).save(tmp_path / "bar.png")
        load_digit_image(tmp_path / "bar.png")


def _damaged_digits() -> dict[str, bytes]:
    """A digit (the bar) saved as PNG and JPEG, each damaged the ways Pillow decoded as whole."""
    import io
    import struct

    from .image_craft import chunk, jpeg_with_size, png_bytes, png_chunks

    png = png_bytes(_bar())
    idat = next(pos + 8 + n for pos, n, kind in png_chunks(png) if kind == b"IDAT")
    buf = io.BytesIO()
    Image.fromarray(_bar()).save(buf, "JPEG", quality=90)
    jpg = buf.getvalue()
    return {
        "PNG, a bit of its image data's CRC flipped": png[:idat] + bytes([png[idat] ^ 1]) + png[idat + 1:],
        "PNG, bytes after IEND": png + b"\x00" * 16,
        "PNG, no IEND": png[:-12],
        "PNG, a header 8 rows taller": png_bytes(_bar(), header_size=(50, 108)),
        "PNG, an animation chunk": png_bytes(_bar(), extra=[chunk(b"acTL", struct.pack(">II", 2, 0))]),
        "JPEG, a header 16 rows taller": jpeg_with_size(jpg, 50, 116),
        "JPEG, a header 16 rows shorter": jpeg_with_size(jpg, 50, 84),
        "JPEG, bytes after EOI": jpg + b"\x00" * 16,
        "JPEG, a second image after EOI": jpg + jpg,
    }


@pytest.mark.parametrize("name", list(_damaged_digits()))
def test_a_damaged_image_is_never_classified(name: str) -> None:
    """Each of these decoded in Pillow as a picture of the bar (issue 32: a damaged image was
    classified instead of refused); each is refused, so nothing reaches the model."""
    with pytest.raises(ConfigError, match=r"^the image: "):
        digit_from_bytes(_damaged_digits()[name])
