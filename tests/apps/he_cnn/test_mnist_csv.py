"""MNIST CSV files: where the label column is, and refusals naming what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from cryptoffload.apps.he_cnn.mnist_csv import load_csv
from cryptoffload.errors import ConfigError

from .he_cnn_helpers import fake_images as fake


def test_label_in_the_last_column(tmp_path: Path) -> None:
    x, y = fake(60)
    (tmp_path / "digits.csv").write_text("\n".join(",".join(map(str, [*img.ravel(), lab])) for lab, img in zip(y, x)))
    imgs, labels = load_csv(tmp_path / "digits.csv", label_column="last")
    assert labels.tolist() == y.tolist()


def test_csv_refusals(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("1," + ",".join(["0"] * 783) + ",x\n")
    with pytest.raises(ConfigError, match="garbled CSV"):
        load_csv(bad)
    bad.write_text("1," + ",".join(["0"] * 1024) + "\n")
    with pytest.raises(ConfigError, match="1025 columns .*32x32"):
        load_csv(bad)
    bad.write_text("1," + ",".join(["300"] * 784) + "\n")
    with pytest.raises(ConfigError, match="0..255"):
        load_csv(bad)
    bad.write_bytes(b"\x1f\x8b garbage")
    with pytest.raises(ConfigError, match="cannot read"):
        load_csv(bad)
    with pytest.raises(ConfigError, match="not found"):
        load_csv(tmp_path / "missing.csv")
