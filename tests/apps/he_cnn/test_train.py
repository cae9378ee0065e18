"""Plaintext training: hand-written gradients against finite differences, a one-epoch run, and
the shipped weights (their accuracy and the command that made them)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cryptoffload.apps.he_cnn.data import load_mnist
from cryptoffload.apps.he_cnn.model import ModelConfig, load_model, patches
from cryptoffload.apps.he_cnn.train import DEFAULT_WEIGHTS, _grads, train_model
from cryptoffload.errors import ConfigError

from .he_cnn_helpers import random_model


@pytest.mark.parametrize("activation", ["square", "poly"])
def test_gradients_match_finite_differences(activation: str) -> None:
    c = ModelConfig(channels=2, hidden=6, activation=activation)
    m = random_model(c, 3)
    rng = np.random.default_rng(4)
    P = patches(rng.random((5, 28, 28)), c)
    y = rng.integers(0, 10, 5)
    _, g = _grads(m, P, y, act_penalty=1e-3)
    for name in ("conv_w", "conv_b", "fc1_w", "fc2_b", "act"):
        if name == "act" and activation == "square":
            continue
        arr = getattr(m, name)
        idx = tuple(rng.integers(0, s) for s in arr.shape)
        old = arr[idx]
        arr[idx] = old + 1e-6
        lp, _ = _grads(m, P, y, 1e-3)
        arr[idx] = old - 1e-6
        lm, _ = _grads(m, P, y, 1e-3)
        arr[idx] = old
        assert g[name][idx] == pytest.approx((lp - lm) / 2e-6, rel=1e-4, abs=1e-8), name


def test_shipped_weights_accuracy() -> None:
    m = load_model(DEFAULT_WEIGHTS, expect=ModelConfig())
    d = load_mnist()
    acc = m.accuracy(d.x_test, d.y_test)
    assert acc >= 0.97, acc
    assert m.meta["test_accuracy"] == pytest.approx(acc)
    assert "cryptoffload he-cnn train" in m.meta["command"]


def test_train_model_short_run(tmp_path: Path) -> None:
    r = train_model(tmp_path / "w.npz", epochs=1, seed=1)
    m = load_model(r.path)
    assert r.n_train == 4000 and r.n_test == 1000 and len(r.losses) == 1
    assert r.test_accuracy > 0.7 and m.meta["epochs"] == 1 and m.meta["seed"] == 1
    with pytest.raises(ConfigError, match="epochs"):
        train_model(tmp_path / "x.npz", epochs=0)
