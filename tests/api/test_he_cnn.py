"""The Python API's encrypted MNIST inference (cryptoffload.api.he_cnn): a prediction that agrees
with the plaintext model, keys from the key folder, the Classifier for many images, and the
images it accepts. On the emulator (exact arithmetic) to stay fast; SEAL runs in
docs/examples/3_he_cnn.py (tests/docs/test_examples.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cryptoffload import he_cnn
from cryptoffload.errors import ConfigError


def test_classify_agrees_with_the_plaintext_model_and_keeps_its_keys(tmp_path: Path) -> None:
    p = he_cnn.classify(3, backend="emulator", key_dir=tmp_path / "keys")
    pixels, label = he_cnn.held_out_image(3)
    assert p.label == label and p.agrees and p.digit == p.plain_digit and 0.0 < p.probability <= 1.0
    assert len(p.logits) == 10 and set(p.seconds) == {"encrypt", "evaluate", "decrypt"}
    assert str(p).startswith(f"digit {p.digit} (p={p.probability:.2f}, label {label}) in ")
    clf = he_cnn.Classifier(backend="emulator", key_dir=tmp_path / "keys")
    assert clf.keys_reused and clf.key_file is not None and clf.key_file.parent == tmp_path / "keys"
    again = clf.classify(pixels)  # the same image as pixels: no label
    assert again.label is None and again.digit == p.digit


def test_no_key_folder_keeps_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRYPTOFFLOAD_HE_CNN_KEYS", str(tmp_path / "keys"))
    clf = he_cnn.Classifier(backend="emulator", key_dir=None)
    assert not clf.keys_reused and clf.key_file is None and not (tmp_path / "keys").exists()


def test_images_it_refuses(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="image index must be a held-out test image index 0..999"):
        he_cnn.held_out_image(1000)
    clf = he_cnn.Classifier(backend="emulator", key_dir=None)
    with pytest.raises(ConfigError):
        clf.classify(np.zeros((28, 28, 3)))
    (tmp_path / "notes.png").write_text("not an image\n")
    with pytest.raises(ConfigError, match="not a PNG or JPEG"):
        clf.classify(tmp_path / "notes.png")
