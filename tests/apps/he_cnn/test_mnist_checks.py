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
