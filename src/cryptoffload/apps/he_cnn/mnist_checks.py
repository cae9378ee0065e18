"""What every MNIST source is checked against, whichever file it came from: a 28 x 28 image
with pixels in [0, 1], a label 0..9, and a file that exists (gzipped or not).

Why one module: the CSV and IDX readers, the data set and the client's single image must refuse
the same things with the same words, so the rules live once, below all of them.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np

from cryptoffload.errors import ConfigError
from cryptoffload.io import read_input

IMAGE_SIDE = 28
IMAGE_SHAPE = (IMAGE_SIDE, IMAGE_SIDE)
PIXELS = IMAGE_SIDE * IMAGE_SIDE
CLASSES = 10


def check_image(image: object, what: str = "image") -> np.ndarray:
    """One image as a (28, 28) float64 array in [0, 1]; a flat 784 vector is accepted.

    Anything else (wrong shape, non-numeric, NaN, values outside [0, 1]) is a ConfigError."""
    try:
        arr = np.asarray(image, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{what} is not numeric: {exc}") from None
    if arr.shape == (PIXELS,):
        arr = arr.reshape(IMAGE_SHAPE)
    if arr.shape != IMAGE_SHAPE:
        raise ConfigError(f"{what} has shape {arr.shape}, expected {IMAGE_SHAPE} (or {PIXELS} pixels)")
    if not np.all(np.isfinite(arr)):
        raise ConfigError(f"{what} contains NaN or infinite pixels")
    if arr.min() < 0.0 or arr.max() > 1.0:
        raise ConfigError(f"{what} has pixels outside [0, 1] (min {arr.min():g}, max {arr.max():g});"
                          " scale 0..255 pixels by 1/255")
    return arr


def scale_pixels(raw: np.ndarray, src: str) -> np.ndarray:
    """0..255 pixel values read from ``src`` as floats in [0, 1]; anything outside is refused."""
    if raw.size and (raw.min() < 0 or raw.max() > 255):
        raise ConfigError(f"{src}: pixel values must be in 0..255, found {raw.min():g}..{raw.max():g}")
    return raw.astype(np.float64) / 255.0


def check_labels(labels: np.ndarray, src: str) -> np.ndarray:
    """Labels read from ``src`` as int64, refused unless every one is an integer 0..9."""
    if labels.size and (np.any(labels != np.round(labels)) or labels.min() < 0 or labels.max() >= CLASSES):
        raise ConfigError(f"{src}: labels must be integers 0..9")
    return labels.astype(np.int64)


MAX_MNIST_BYTES = 256 * 1024 * 1024  # MNIST's largest file, 60,000 images, is 47 MB unpacked


def read_bytes(path: Path) -> bytes:
    """The whole file (a regular file of at most :data:`MAX_MNIST_BYTES`), gunzipped when it
    starts with gzip's magic, to at most as many bytes (a small .gz can unpack to gigabytes);
    missing or unreadable is a ConfigError naming the file."""
    if not path.exists() and not path.is_symlink():
        raise ConfigError(f"MNIST file not found: {path}")
    data = read_input(path, "MNIST file", max_bytes=MAX_MNIST_BYTES, error=ConfigError)
    if data[:2] != b"\x1f\x8b":
        return data
    gz = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        unpacked = gz.decompress(data, MAX_MNIST_BYTES + 1)
    except zlib.error as exc:
        raise ConfigError(f"{path}: cannot read ({exc})") from None
    if len(unpacked) > MAX_MNIST_BYTES:
        raise ConfigError(f"{path} unpacks to more than {MAX_MNIST_BYTES:,} bytes; an MNIST file is at most that")
    if not gz.eof:
        raise ConfigError(f"{path}: cannot read (the gzip stream is truncated)")
    return unpacked
