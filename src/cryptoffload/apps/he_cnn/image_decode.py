"""An image file from outside decoded within a memory budget, or refused before decoding.

What callers use::

    plan = decode_plan(data)            # checks the whole file, estimates the decoder's memory
    grey, alpha = decode_grey_alpha(data)  # (h, w) arrays in [0, 1]; alpha None without one

Why a budget and not only a pixel ceiling: what decoding costs depends on more than the pixel
count. Pillow holds an RGB, RGBA, LA or 16-bit-RGB(A) image at 4 bytes a pixel, a 16-bit grey
one at 2; each conversion (to grey, to grey and opacity) is another copy; and the float arrays
that find a digit are 8 bytes a pixel each. An image under the old 50-megapixel ceiling took
1.2 to 1.6 GB. So, in order, each refusal an :class:`~.png_check.ImageRefused` with the reason:

1. The format, from the file's first bytes: PNG or JPEG only (what ``he-cnn infer --image``
   documents); the whole file checked before any decoder sees it (:mod:`.png_check`,
   :mod:`.jpeg_check`): checksums, truncation, trailing data, a header that does not match the
   data, more than one frame, metadata beyond its ceiling.
2. :data:`MAX_IMAGE_PIXELS` (the decoding time), then the memory the decoding will take,
   estimated from the header (:func:`decode_plan`: the decoded image in Pillow's layout, the
   conversion to grey and opacity, the decoder's buffers, the metadata Pillow inflates, the
   file itself and the working arrays), refused above :data:`MAX_DECODE_BYTES`.
3. Decoding small: a JPEG is decoded by libjpeg already scaled down (DCT scaling, 1/2 to 1/8)
   to about :data:`WORK_SIDE` pixels and in grey; any image is then box-averaged to at most
   :data:`WORK_SIDE` pixels a side before the float work (a 20-pixel MNIST digit needs no more),
   and turned upright from its EXIF orientation after that.

Pillow's ``LOAD_TRUNCATED_IMAGES`` is held off while decoding (a truncated file is an error,
never an image padded with grey), and whatever Pillow raises becomes an ``ImageRefused``.
The measured peak memory is in ``benchmarks/image_decode_memory.py``.
"""

from __future__ import annotations

import io
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

import numpy as np
from PIL import Image, ImageFile

from cryptoffload.apps.he_cnn.jpeg_check import JPEG_MAGIC, check_jpeg
from cryptoffload.apps.he_cnn.png_check import PNG_MAGIC, ImageRefused, PngHeader, check_png_data, read_png

MAX_IMAGE_PIXELS = 50_000_000  # 50 megapixels: any camera; also bounds the decoding time
MAX_DECODE_BYTES = 256 * 1024 * 1024  # the memory one decoding may take, estimated from the header
WORK_SIDE = 512  # longest side of the image the digit is looked for in (MNIST's box is 20 pixels)
#: float64 arrays of WORK_SIDE^2 pixels alive at once while the digit is found (grey, opacity,
#: ink, and numpy's temporaries), with a margin
WORK_ARRAYS = 10
#: what Pillow inflates one compressed PNG text or ICC chunk to, at most (PngImagePlugin's limit)
PIL_TEXT_CHUNK = 1 << 20
#: Pillow's bytes per pixel of each mode it decodes into
MODE_BYTES = {"1": 1, "L": 1, "P": 1, "I;16": 2, "I;16B": 2, "LA": 4, "RGB": 4, "RGBA": 4, "I": 4}
_ORIENTATION = 0x0112


@dataclass(frozen=True)
class DecodePlan:
    """How an image will be decoded and what that costs: ``parts`` names each share of the
    estimated memory in bytes, ``total`` their sum."""

    format: str
    width: int
    height: int
    parts: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.parts.values())


def decode_plan(data: bytes) -> DecodePlan:
    """Check the whole file and estimate the memory its decoding takes; refused (with the
    figure and the fix) beyond :data:`MAX_IMAGE_PIXELS` or :data:`MAX_DECODE_BYTES`."""
    idat = None
    if data.startswith(PNG_MAGIC):
        png, idat = read_png(data)
        plan = _png_plan(png, len(data))
    elif data.startswith(JPEG_MAGIC):
        header = check_jpeg(data)
        plan = _jpeg_plan(header.width, header.height, len(header.components), header.v_max,
                          header.metadata_bytes, len(data))
    else:
        raise ImageRefused("it is not a PNG or JPEG file; give a PNG or JPEG of one digit")
    if plan.width * plan.height > MAX_IMAGE_PIXELS:
        raise ImageRefused(f"it is {plan.width} x {plan.height} pixels; at most {MAX_IMAGE_PIXELS:,} pixels are "
                           "read (scale it down first)")
    if plan.total > MAX_DECODE_BYTES:
        shares = ", ".join(f"{k} {v / 2**20:.0f}" for k, v in plan.parts.items() if v >= 2**20)
        raise ImageRefused(f"decoding its {plan.width} x {plan.height} pixels would take about "
                           f"{plan.total / 2**20:,.0f} MiB ({shares}); at most {MAX_DECODE_BYTES / 2**20:.0f} MiB "
                           "are spent on one image (scale it down, or save it as an 8-bit grey PNG or a JPEG)")
    if idat is not None:  # inflated (streamed) only once its size is known to be decodable
        check_png_data(png, idat)
    return plan


def _work_bytes() -> int:
    return WORK_ARRAYS * 8 * WORK_SIDE * WORK_SIDE


def _png_plan(h: PngHeader, file_bytes: int) -> DecodePlan:
    """Pillow decodes a PNG whole, in its mode's layout; then its grey and opacity bands are
    taken (:func:`_bands`) before they are reduced."""
    mode = _png_mode(h)
    pixels = h.width * h.height
    if h.transparency and mode not in ("LA", "RGBA"):
        convert = 6  # to RGBA (4 bytes a pixel), then grey (1) and opacity (1)
    elif mode in ("LA", "RGBA"):
        convert = 2  # grey (1) and opacity (1)
    else:
        convert = {"L": 0, "I;16": 4}.get(mode, 1)  # as it is, to 32-bit grey (4), to grey (1)
    row = (h.width * h.channels * h.bit_depth + 7) // 8 + 1
    parts = {"decoded image": pixels * MODE_BYTES[mode], "conversion": pixels * convert,
             "decoder rows": 4 * row, "metadata": h.compressed_ancillary * PIL_TEXT_CHUNK,
             "file": file_bytes, "working arrays": _work_bytes()}
    return DecodePlan("PNG", h.width, h.height, parts)


def _png_mode(h: PngHeader) -> str:
    if h.colour_type == 0:
        return "I;16" if h.bit_depth == 16 else "L"
    return {2: "RGB", 3: "P", 4: "LA" if h.bit_depth == 8 else "RGBA", 6: "RGBA"}[h.colour_type]


def draft_scale(width: int, height: int) -> int:
    """The DCT scaling libjpeg decodes with (1, 2, 4 or 8), as Pillow's ``draft`` chooses it for
    a requested size of :func:`_draft_size`: the largest that keeps both sides at least that."""
    want_w, want_h = _draft_size(width, height)
    scale = min(width // want_w, height // want_h)
    return next(s for s in (8, 4, 2, 1) if scale >= s)


def _draft_size(width: int, height: int) -> tuple[int, int]:
    factor = max(1, -(-max(width, height) // WORK_SIDE))
    return max(1, width // factor), max(1, height // factor)


def _jpeg_plan(width: int, height: int, components: int, v_max: int, metadata: int,
               file_bytes: int) -> DecodePlan:
    """libjpeg decodes a sequential JPEG an MCU row at a time, already scaled and in grey: the
    output image (1 byte a pixel), its sample rows, the metadata Pillow keeps."""
    s = draft_scale(width, height)
    out = -(-width // s) * -(-height // s)
    parts = {"decoded image": out, "decoder rows": components * width * 8 * v_max * 4,
             "metadata": metadata, "file": file_bytes, "working arrays": _work_bytes()}
    return DecodePlan("JPEG", width, height, parts)


def decode_grey_alpha(data: bytes) -> "tuple[np.ndarray, np.ndarray | None]":
    """Grey levels in [0, 1] and, where the image has transparency, opacity in [0, 1], of the
    PNG or JPEG ``data``, at most :data:`WORK_SIDE` pixels a side, upright."""
    plan = decode_plan(data)
    with _strict_pillow():
        try:
            with Image.open(io.BytesIO(data), formats=[plan.format]) as im:
                if im.size != (plan.width, plan.height) or getattr(im, "n_frames", 1) != 1:
                    raise ImageRefused(f"its decoder reads {im.size} and {getattr(im, 'n_frames', 1)} frames where "
                                       f"its header declares ({plan.width}, {plan.height}) and one")
                orientation = im.getexif().get(_ORIENTATION, 1)
                if plan.format == "JPEG":
                    im.draft("L", _draft_size(plan.width, plan.height))
                im.load()
                full_grey, full_alpha = _bands(im)
                grey = _reduced(full_grey)
                alpha = None if full_alpha is None else _reduced(full_alpha)
                del full_grey, full_alpha
        except ImageRefused:
            raise
        except (OSError, SyntaxError, ValueError, EOFError, IndexError, KeyError, TypeError,
                Image.DecompressionBombError) as exc:
            raise ImageRefused(f"cannot decode it ({exc}); the file is damaged or truncated") from None
    return _grey_array(_upright(grey, orientation)), None if alpha is None else _alpha_array(_upright(alpha, orientation))


@contextmanager
def _strict_pillow() -> Iterator[None]:
    """Pillow's ``LOAD_TRUNCATED_IMAGES`` off while decoding (it is process-wide: another
    library may have turned it on), restored after."""
    before = ImageFile.LOAD_TRUNCATED_IMAGES
    ImageFile.LOAD_TRUNCATED_IMAGES = False
    try:
        yield
    finally:
        ImageFile.LOAD_TRUNCATED_IMAGES = before


def _bands(im: Image.Image) -> "tuple[Image.Image, Image.Image | None]":
    """The grey band ("L", or "I" from 16 bits) and the opacity band ("L") where the image has
    one: single bands, so that reducing them copies nothing (Pillow reduces "LA" and "RGBA"
    through a premultiplied copy of the whole image)."""
    if im.mode.startswith("I"):
        return (im if im.mode == "I" else im.convert("I")), None
    if "transparency" in im.info and im.mode not in ("LA", "RGBA"):
        im = im.convert("RGBA")
    if im.mode in ("RGBA", "LA"):
        return (im.getchannel("L") if im.mode == "LA" else im.convert("L")), im.getchannel("A")
    return (im if im.mode == "L" else im.convert("L")), None


def _reduced(im: Image.Image) -> Image.Image:
    """At most :data:`WORK_SIDE` pixels a side, each a box average of the pixels it covers."""
    factor = -(-max(im.size) // WORK_SIDE)
    return im.reduce(factor) if factor > 1 else im


#: EXIF orientation -> the turn that makes the image upright (as ``ImageOps.exif_transpose``)
UPRIGHT: dict[object, Image.Transpose] = {
    2: Image.Transpose.FLIP_LEFT_RIGHT, 3: Image.Transpose.ROTATE_180, 4: Image.Transpose.FLIP_TOP_BOTTOM,
    5: Image.Transpose.TRANSPOSE, 6: Image.Transpose.ROTATE_270, 7: Image.Transpose.TRANSVERSE,
    8: Image.Transpose.ROTATE_90}


def _upright(im: Image.Image, orientation: object) -> Image.Image:
    """Turned as its EXIF orientation says."""
    method = UPRIGHT.get(orientation)
    return im if method is None else im.transpose(method)


def _grey_array(im: Image.Image) -> np.ndarray:
    """Grey levels in [0, 1]; 16-bit grey keeps its full range."""
    grey = np.asarray(im, dtype=np.float64)
    if im.mode == "I":
        return grey / max(float(np.iinfo(np.uint16).max), float(grey.max(initial=0.0)))
    return grey / 255.0


def _alpha_array(im: Image.Image) -> np.ndarray:
    return np.asarray(im, dtype=np.float64) / 255.0
