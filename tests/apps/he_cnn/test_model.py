"""The numpy CNN: forward pass, gradients, square form, save/load and model-file refusals."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cryptoffload.apps.he_cnn.data import load_mnist
from cryptoffload.apps.he_cnn.model import CnnModel, ModelConfig, load_model, patches
from cryptoffload.apps.he_cnn.train import DEFAULT_WEIGHTS, _grads, train_model
from cryptoffload.errors import ConfigError


def random_model(config: ModelConfig, seed: int = 0) -> CnnModel:
    rng = np.random.default_rng(seed)
    m = CnnModel.init(config, rng)
    m.conv_b = rng.normal(0, 0.1, m.conv_b.shape)
    m.fc1_b = rng.normal(0, 0.1, m.fc1_b.shape)
    m.fc2_b = rng.normal(0, 0.1, m.fc2_b.shape)
    if config.activation == "poly":
        m.act = np.array([[0.3, 0.8], [-0.2, 1.1]])
    return m


def test_architecture_is_cryptonets() -> None:
    c = ModelConfig()
    assert (c.conv_out, c.features) == (13, 845)
    assert c.shapes()["fc1_w"] == (100, 845)
    x = np.random.default_rng(1).random((2, 28, 28))
    p = patches(x, c)
    assert p.shape == (2, 169, 25)
    # window (i=12, j=12) reaches the zero padding at row/column 28
    assert np.allclose(p[0, 168].reshape(5, 5)[:4, :4], x[0, 24:28, 24:28]) and not p[0, 168].reshape(5, 5)[4].any()
    m = random_model(c)
    direct = np.zeros((5, 13, 13))
    xp = np.pad(x[0], ((0, 1), (0, 1)))
    for ch in range(5):
        for i in range(13):
            for j in range(13):
                direct[ch, i, j] = np.sum(xp[2 * i:2 * i + 5, 2 * j:2 * j + 5] * m.conv_w[ch]) + m.conv_b[ch]
    h = direct.ravel() ** 2
    expect = ((h @ m.fc1_w.T + m.fc1_b) ** 2) @ m.fc2_w.T + m.fc2_b
    assert np.allclose(m.forward(x[0])[0], expect)


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


def test_square_form_of_poly_activations() -> None:
    m = random_model(ModelConfig(activation="poly"), 5)
    x = np.random.default_rng(6).random((4, 28, 28))
    assert np.allclose(m.square_form().forward(x), m.forward(x), rtol=1e-10, atol=1e-9)


def test_save_load_roundtrip(tmp_path: Path) -> None:
    m = random_model(ModelConfig(activation="poly"))
    path = m.save(tmp_path / "m.npz", {"note": "test"})
    back = load_model(path, expect=ModelConfig(activation="poly"))
    x = np.random.default_rng(0).random((3, 28, 28))
    assert np.array_equal(back.forward(x), m.forward(x)) and back.meta == {"note": "test"}


def _resave(src: Path, dst: Path, **changes: object) -> Path:
    with np.load(src) as z:
        data = {k: z[k] for k in z.files}
    data.update(changes)
    np.savez(dst, **data)
    return dst


def test_model_file_refusals(tmp_path: Path) -> None:
    good = random_model(ModelConfig()).save(tmp_path / "good.npz")
    with pytest.raises(ConfigError, match=r"fc1_w has shape \(100, 800\), the architecture needs \(100, 845\)"):
        load_model(_resave(good, tmp_path / "a.npz", fc1_w=np.zeros((100, 800))))
    with pytest.raises(ConfigError, match="architecture mismatch: hidden = 100 \\(expected 50\\)"):
        load_model(good, expect=ModelConfig(hidden=50))
    cfg = json.dumps({"format": "cryptoffload-he-cnn/1", **ModelConfig(hidden=64).as_dict()})
    with pytest.raises(ConfigError, match=r"fc1_b has shape \(100,\), the architecture needs \(64,\)|fc1_w"):
        load_model(_resave(good, tmp_path / "b.npz", config=np.array(cfg)))
    with pytest.raises(ConfigError, match="format"):
        load_model(_resave(good, tmp_path / "c.npz", config=np.array(json.dumps({"format": "other"}))))
    with pytest.raises(ConfigError, match="unknown config field"):
        bad = json.dumps({"format": "cryptoffload-he-cnn/1", "dropout": 0.5})
        load_model(_resave(good, tmp_path / "d.npz", config=np.array(bad)))
    with pytest.raises(ConfigError, match="activation 'square' but act coefficients"):
        load_model(_resave(good, tmp_path / "e.npz", act=np.array([[0.5, 1.0], [1.0, 0.0]])))
    with pytest.raises(ConfigError, match="not finite"):
        load_model(_resave(good, tmp_path / "f.npz", fc2_b=np.full(10, np.nan)))
    (tmp_path / "g.npz").write_bytes(b"not a zip file")
    with pytest.raises(ConfigError, match="not a model file"):
        load_model(tmp_path / "g.npz")
    with pytest.raises(ConfigError, match="not found"):
        load_model(tmp_path / "missing.npz")
    with pytest.raises(ConfigError, match="stride"):
        ModelConfig(stride=5)


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
