"""The checks every MNIST source shares: one image's shape and range, labels 0..9."""

from __future__ import annotations

import numpy as np
import pytest

from cryptoffload.apps.he_cnn.mnist_checks import check_image, check_labels
from cryptoffload.errors import ConfigError


def test_check_image() -> None:
    img = np.full((28, 28), 0.5)
    assert check_image(img.ravel()).shape == (28, 28)
    with pytest.raises(ConfigError, match=r"shape \(27, 28\)"):
        check_image(np.zeros((27, 28)))
    with pytest.raises(ConfigError, match="outside"):
        check_image(img * 255)
    with pytest.raises(ConfigError, match="NaN"):
        check_image(np.full((28, 28), np.nan))
    with pytest.raises(ConfigError, match="not numeric"):
        check_image([["a"] * 28] * 28)


@pytest.mark.parametrize("labels", [[0, 10], [1.5], [-1]])
def test_check_labels_refuses_what_is_not_a_digit(labels: list) -> None:
    with pytest.raises(ConfigError, match="f.csv: labels must be integers 0..9"):
        check_labels(np.array(labels, dtype=np.float64), "f.csv")
    assert check_labels(np.array([0.0, 9.0]), "f.csv").tolist() == [0, 9]


def test_read_bytes_bounds_the_file_and_what_it_unpacks_to(tmp_path, monkeypatch) -> None:
    """issue 22: a FIFO or a device is refused before it is read, and a small .gz that
    unpacks past the ceiling (a gzip bomb) is refused instead of filling the memory."""
    import gzip
    import os

    from cryptoffload.apps.he_cnn import mnist_checks

    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(ConfigError, match="not a regular file"):
        mnist_checks.read_bytes(tmp_path / "fifo")
    with pytest.raises(ConfigError, match="MNIST file not found"):
        mnist_checks.read_bytes(tmp_path / "missing")
    (tmp_path / "x.gz").write_bytes(gzip.compress(b"\0" * 5000))
    assert mnist_checks.read_bytes(tmp_path / "x.gz") == b"\0" * 5000
    monkeypatch.setattr(mnist_checks, "MAX_MNIST_BYTES", 4096)
    with pytest.raises(ConfigError, match="unpacks to more than 4,096 bytes"):
        mnist_checks.read_bytes(tmp_path / "x.gz")
    (tmp_path / "bad.gz").write_bytes(b"\x1f\x8b" + b"junk")
    with pytest.raises(ConfigError, match="cannot read"):
        mnist_checks.read_bytes(tmp_path / "bad.gz")
    (tmp_path / "cut.gz").write_bytes(gzip.compress(bytes(range(256)) * 10)[:-12])
    with pytest.raises(ConfigError, match="truncated"):
        mnist_checks.read_bytes(tmp_path / "cut.gz")
