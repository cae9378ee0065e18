"""What the HE-CNN tests share: a model with random weights and non-zero biases, and MNIST-shaped
images written as IDX files."""

from __future__ import annotations

import gzip
import struct
from pathlib import Path

import numpy as np

from cryptoffload.apps.he_cnn.model import CnnModel, ModelConfig

POLY_ACT = ((0.3, 0.8), (-0.2, 1.1))


def random_model(config: ModelConfig, seed: int = 0, act: tuple = POLY_ACT) -> CnnModel:
    """Fresh weights from ``seed``, biases drawn too (``init`` leaves them zero, which would hide
    a bias in the wrong slot); ``act``: the polynomial activations' (a, b) per layer."""
    rng = np.random.default_rng(seed)
    m = CnnModel.init(config, rng)
    m.conv_b, m.fc1_b, m.fc2_b = (rng.normal(0, 0.1, a.shape) for a in (m.conv_b, m.fc1_b, m.fc2_b))
    if config.activation == "poly":
        m.act = np.array(act)
    return m


def write_idx(directory: Path, stem: str, images: np.ndarray, labels: np.ndarray, *, gz: bool = False) -> None:
    """``images`` and ``labels`` as ``{stem}-images-idx3-ubyte`` and ``{stem}-labels-idx1-ubyte``."""
    n, rows, cols = images.shape
    img = struct.pack(">IIII", 0x803, n, rows, cols) + images.astype(np.uint8).tobytes()
    lab = struct.pack(">II", 0x801, n) + labels.astype(np.uint8).tobytes()
    op = gzip.compress if gz else (lambda b: b)
    suffix = ".gz" if gz else ""
    (directory / f"{stem}-images-idx3-ubyte{suffix}").write_bytes(op(img))
    (directory / f"{stem}-labels-idx1-ubyte{suffix}").write_bytes(op(lab))


def fake_images(n: int, seed: int = 0, side: int = 28) -> tuple[np.ndarray, np.ndarray]:
    """``n`` random 0..255 images of ``side`` x ``side`` pixels, labelled 0..9 in turn."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (n, side, side)), np.arange(n) % 10
