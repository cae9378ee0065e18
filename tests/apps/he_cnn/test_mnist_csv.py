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
    with pytest.raises(ConfigError, match="line 1, column 785: 'x' is not an integer"):
        load_csv(bad)
    bad.write_text("1," + ",".join(["0"] * 784) + "\n" + "2," + ",".join(["0"] * 783) + "\n")
    with pytest.raises(ConfigError, match="garbled CSV \\(rows of 784, 785 columns\\)"):
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


@pytest.mark.parametrize("cell", ["nan", "inf", "1e2", "3.5", "1_0", "\u0661\u0662", "9" * 12])
def test_every_cell_is_an_integer_of_the_one_grammar(tmp_path: Path, cell: str) -> None:
    """numpy's loadtxt read nan, inf, 1e2 and 3.5, and a NaN pixel passed the 0..255 check (NaN
    compares false): a file of NaN images trained and classified."""
    bad = tmp_path / "bad.csv"
    bad.write_text("label," + ",".join(f"p{i}" for i in range(784)) + "\n"
                   + "1," + ",".join(["0"] * 300 + [cell] + ["0"] * 483) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"line 2, column 302: .* is not an integer \(ASCII digits\)"):
        load_csv(bad)
