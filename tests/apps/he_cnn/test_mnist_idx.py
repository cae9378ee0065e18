"""MNIST IDX files: refusals read from the header and the length."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cryptoffload.apps.he_cnn.mnist_idx import load_idx_images, load_idx_labels, load_idx_pair
from cryptoffload.errors import ConfigError

from .he_cnn_helpers import fake_images as fake
from .he_cnn_helpers import write_idx


def test_pair_read_back(tmp_path: Path) -> None:
    x, y = fake(12)
    write_idx(tmp_path, "train", x, y, gz=True)
    images, labels = load_idx_pair(tmp_path, "train")
    assert np.allclose(images, x / 255.0) and labels.tolist() == y.tolist()


def test_idx_refusals(tmp_path: Path) -> None:
    x, y = fake(12)
    write_idx(tmp_path, "train", x, y)
    path = tmp_path / "train-images-idx3-ubyte"
    path.write_bytes(path.read_bytes()[:-7])
    with pytest.raises(ConfigError, match="truncated"):
        load_idx_images(path)
    path.write_bytes(b"\x00\x00\x09\x99" + b"\x00" * 40)
    with pytest.raises(ConfigError, match="not an IDX image file"):
        load_idx_images(path)
    labels = tmp_path / "train-labels-idx1-ubyte"
    labels.write_bytes(labels.read_bytes()[:-1])
    with pytest.raises(ConfigError, match="truncated"):
        load_idx_labels(labels)
