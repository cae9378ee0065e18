"""A digit of one's own (a PNG or JPEG file) as an MNIST image, for ``he-cnn infer --image FILE``.

What the CLI calls::

    load_digit_image(path) -> np.ndarray   # (28, 28) float64 in [0, 1], as check_image wants

Why the preprocessing: the model was trained on MNIST, whose digits are light on a dark field,
each scaled (aspect kept, anti-aliased) to fit a 20 x 20 box and placed in the 28 x 28 field so
that its centre of mass is at the centre (pixel (14, 14): the held-out images' mean centre of
mass is (14.01, 13.99)). A photo or a drawing given as is -- dark ink on white paper, any size,
off centre -- would be classified as noise. So, in order:

1. Read the file with a ceiling (:data:`MAX_IMAGE_FILE_BYTES`) and decode it within a memory
   budget (:mod:`.image_decode`: PNG and JPEG only, the whole file checked first -- a damaged,
   truncated or inconsistent file, or more than one frame, is refused, never classified --
   then decoded to at most 512 pixels a side, upright from its EXIF orientation).
2. Ink: on a transparent background the opacity is the ink, whatever its colour; otherwise the
   grey level, inverted when the border is light (dark ink on paper). The border's level becomes
   0, the strongest ink 1, and faint noise below :data:`INK_FLOOR` is dropped.
3. The ink's bounding box is scaled so that its longer side is 20 pixels (Lanczos) and placed
   in 28 x 28 with its centre of mass at (14, 14), moved inwards where that would cut it.

An image with no contrast (one flat colour: no digit) is refused, as is anything not a PNG or
JPEG; every refusal is a ConfigError naming the file. :func:`digit_from_bytes` is the same
without the file (for tests and fuzzing).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cryptoffload.apps.he_cnn.image_decode import decode_grey_alpha
from cryptoffload.apps.he_cnn.mnist_checks import IMAGE_SIDE, check_image
from cryptoffload.apps.he_cnn.png_check import ImageRefused
from cryptoffload.errors import ConfigError
from cryptoffload.io import read_input

MAX_IMAGE_FILE_BYTES = 32 * 1024 * 1024  # a large phone photo is under 10 MB
BOX = 20  # MNIST: the digit fits a 20 x 20 box ...
CENTRE = IMAGE_SIDE / 2  # ... whose centre of mass is at pixel (14, 14) of the 28 x 28 field
INK_FLOOR = 0.1  # ink below a tenth of the strongest is noise (paper grain, JPEG ringing)
MIN_CONTRAST = 0.1  # less between the border and the strongest ink: no digit to find


def load_digit_image(path: str | Path) -> np.ndarray:
    """The digit in ``path`` (PNG or JPEG) as a 28 x 28 MNIST image in [0, 1]."""
    path = Path(path)
    data = read_input(path, "image file (--image)", max_bytes=MAX_IMAGE_FILE_BYTES, error=ConfigError)
    return digit_from_bytes(data, f"image {path}")


def digit_from_bytes(data: bytes, what: str = "the image") -> np.ndarray:
    """The digit in the PNG or JPEG ``data`` as a 28 x 28 MNIST image in [0, 1]; anything else
    (and a damaged file) is a ConfigError naming ``what``."""
    if len(data) > MAX_IMAGE_FILE_BYTES:
        raise ConfigError(f"{what} is {len(data):,} bytes; at most {MAX_IMAGE_FILE_BYTES:,} are read")
    try:
        decoded = decode_grey_alpha(data)
    except ImageRefused as exc:
        raise ConfigError(f"{what}: {exc}") from None
    return check_image(_mnist_frame(_ink(what, decoded)), what=what)


def _border(a: np.ndarray) -> np.ndarray:
    return np.concatenate([a[0], a[-1], a[1:-1, 0], a[1:-1, -1]])


def _ink(what: str, decoded: "tuple[np.ndarray, np.ndarray | None]") -> np.ndarray:
    """Ink in [0, 1] (1: the strongest stroke, 0: the background)."""
    grey, alpha = decoded
    if alpha is not None and np.median(_border(alpha)) < 0.5:
        ink = alpha  # a drawing on a transparent background: opacity is the stroke
    else:
        ink = grey if np.median(_border(grey)) <= 0.5 else 1.0 - grey  # MNIST: light ink on dark
    background, strongest = float(np.median(_border(ink))), float(ink.max())
    if strongest - background < MIN_CONTRAST:
        raise ConfigError(f"{what} has no digit to find: it is one flat colour (contrast "
                          f"{max(strongest - background, 0.0):.2f}); give a dark digit on a light background or the reverse")
    ink = np.clip((ink - background) / (strongest - background), 0.0, 1.0)
    ink[ink < INK_FLOOR] = 0.0
    return ink


def _box(ink: np.ndarray) -> np.ndarray:
    rows = np.flatnonzero(ink.any(axis=1))
    cols = np.flatnonzero(ink.any(axis=0))
    return ink[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]


def _scaled_to_box(crop: np.ndarray) -> np.ndarray:
    """The crop with its longer side :data:`BOX` pixels, aspect kept (Lanczos, clipped back
    into [0, 1] where it rings)."""
    from PIL import Image

    h, w = crop.shape
    scale = BOX / max(h, w)
    size = (max(1, int(np.floor(w * scale + 0.5))), max(1, int(np.floor(h * scale + 0.5))))
    small = Image.fromarray(crop.astype(np.float32)).resize(size, Image.Resampling.LANCZOS)
    return np.clip(np.asarray(small, dtype=np.float64), 0.0, 1.0)


def _mnist_frame(ink: np.ndarray) -> np.ndarray:
    """The ink's box, scaled to 20 pixels, placed in 28 x 28 by its centre of mass."""
    small = _scaled_to_box(_box(ink))
    h, w = small.shape
    ys, xs = np.mgrid[0:h, 0:w]
    mass = small.sum()
    if mass <= 0.0:  # only a faint speck, lost in the scaling
        raise ConfigError("the image's ink vanished when scaled to MNIST's 20 pixels; give a larger, darker digit")
    cy, cx = (ys * small).sum() / mass, (xs * small).sum() / mass
    top = min(max(int(np.floor(CENTRE - cy + 0.5)), 0), IMAGE_SIDE - h)
    left = min(max(int(np.floor(CENTRE - cx + 0.5)), 0), IMAGE_SIDE - w)
    frame = np.zeros((IMAGE_SIDE, IMAGE_SIDE))
    frame[top:top + h, left:left + w] = small
    return frame
