"""MNIST's own IDX files: ``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``,
``t10k-images-idx3-ubyte``, ``t10k-labels-idx1-ubyte`` (``-`` or ``.`` before ``idx``,
optionally gzipped).

Why a reader of its own: the format is binary (a big-endian header with a magic number, then
bytes), so a wrong file, a truncated download or images of another size must be caught from
the header and the length, and refused naming the file, before anything reads the pixels.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from cryptoffload.apps.he_cnn.mnist_checks import IMAGE_SHAPE, IMAGE_SIDE, check_labels, read_bytes
from cryptoffload.errors import ConfigError


def load_idx_images(path: str | Path) -> np.ndarray:
    """An IDX3 image file (magic 0x00000803), checked to hold 28 x 28 images."""
    path = Path(path)
    data = read_bytes(path)
    if len(data) < 16:
        raise ConfigError(f"{path}: too short for an IDX image file")
    magic, n, rows, cols = struct.unpack(">IIII", data[:16])
    if magic != 0x00000803:
        raise ConfigError(f"{path}: not an IDX image file (magic {magic:#010x}, expected 0x00000803)")
    if (rows, cols) != IMAGE_SHAPE:
        raise ConfigError(f"{path}: images are {rows}x{cols}, expected {IMAGE_SIDE}x{IMAGE_SIDE}")
    need = 16 + n * rows * cols
    if len(data) != need:
        raise ConfigError(f"{path}: {len(data)} bytes, expected {need} for {n} images (truncated or garbled)")
    pixels = np.frombuffer(data, dtype=np.uint8, offset=16).reshape(n, rows, cols)
    return pixels.astype(np.float64) / 255.0


def load_idx_labels(path: str | Path) -> np.ndarray:
    """An IDX1 label file (magic 0x00000801)."""
    path = Path(path)
    data = read_bytes(path)
    if len(data) < 8:
        raise ConfigError(f"{path}: too short for an IDX label file")
    magic, n = struct.unpack(">II", data[:8])
    if magic != 0x00000801:
        raise ConfigError(f"{path}: not an IDX label file (magic {magic:#010x}, expected 0x00000801)")
    if len(data) != 8 + n:
        raise ConfigError(f"{path}: {len(data)} bytes, expected {8 + n} for {n} labels (truncated or garbled)")
    return check_labels(np.frombuffer(data, dtype=np.uint8, offset=8).astype(np.int64), str(path))


def find_idx(directory: Path, stem: str, kind: str) -> Path | None:
    """``directory/{stem}-{kind}-ubyte`` (or ``.{kind}``, or either gzipped), if it is there."""
    for sep in ("-", "."):
        for gz in ("", ".gz"):
            p = directory / f"{stem}{sep}{kind}-ubyte{gz}"
            if p.is_file():
                return p
    return None


def load_idx_pair(directory: Path, stem: str) -> tuple[np.ndarray, np.ndarray]:
    """The images and labels of ``stem`` (``train`` or ``t10k``) in ``directory``, as many of each."""
    img_path = find_idx(directory, f"{stem}-images", "idx3")
    lab_path = find_idx(directory, f"{stem}-labels", "idx1")
    if img_path is None or lab_path is None:
        missing = f"{stem}-images-idx3-ubyte" if img_path is None else f"{stem}-labels-idx1-ubyte"
        raise ConfigError(f"{directory}: {missing} (or .gz) not found")
    x, y = load_idx_images(img_path), load_idx_labels(lab_path)
    if len(x) != len(y):
        raise ConfigError(f"{img_path.name} has {len(x)} images but {lab_path.name} {len(y)} labels")
    return x, y
