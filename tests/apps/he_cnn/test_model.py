"""The numpy CNN: forward pass, square form, save/load and model-file refusals."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cryptoffload.apps.he_cnn.model import ModelConfig, load_model, patches
from cryptoffload.errors import ConfigError

from .he_cnn_helpers import random_model


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


def test_a_model_archive_that_inflates_past_its_ceiling_is_refused_before_inflating(tmp_path: Path) -> None:
    """issue 32: a 200 KB archive holding a 200 MB array of zeros (np.savez_compressed): np.load
    would inflate it whole. The archive's directory declares the sizes; refused from it."""
    good = random_model(ModelConfig()).save(tmp_path / "good.npz")
    with np.load(good) as npz:
        data = {k: npz[k] for k in npz.files}
    np.savez_compressed(tmp_path / "bomb.npz", **data, pad=np.zeros(25_000_000))
    assert (tmp_path / "bomb.npz").stat().st_size < 1_000_000
    with pytest.raises(ConfigError, match=r"members inflate to 2\d\d,\d{3},\d{3} bytes; a model file holds at most"):
        load_model(tmp_path / "bomb.npz")


@pytest.mark.parametrize("config, reason", [('{"format": NaN}', "NaN is not JSON"),
                                            ('{"format": 1, "format": 2}', "appears twice")])
def test_a_model_config_is_strict_json(tmp_path: Path, config: str, reason: str) -> None:
    good = random_model(ModelConfig()).save(tmp_path / "good.npz")
    with pytest.raises(ConfigError, match=rf"garbled 'config' entry \(.*{reason}"):
        load_model(_resave(good, tmp_path / "c.npz", config=np.array(config)))
