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


def count_image_checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every call of the image check, in every module that holds it (by name), as the ``what``
    it names."""
    import sys

    import cryptoffload.api.he_cnn  # noqa: F401 -- its modules, loaded
    import cryptoffload.apps.he_cnn.digit_image  # noqa: F401
    import cryptoffload.apps.he_cnn.infer  # noqa: F401
    from cryptoffload.apps.he_cnn import mnist_checks

    calls: list[str] = []
    real = mnist_checks.check_image

    def counted(image: object, what: str = "image") -> np.ndarray:
        calls.append(what)
        return real(image, what)
    holders = [m for name, m in list(sys.modules.items())
               if name.startswith("cryptoffload.") and getattr(m, "check_image", None) is real]
    for module in holders:
        monkeypatch.setattr(module, "check_image", counted)
    return calls


def test_an_image_is_checked_once_where_it_enters(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """issue 36: one classification checked its image twice (the session, then packing; the
    client three times; a file: its decoder, then the session). Counted in every module that
    holds the check: once per image -- pixels where the API takes them, a file in its decoder,
    a held-out image not at all (the data set's reader checked it)."""
    from PIL import Image

    calls = count_image_checks(monkeypatch)
    clf = he_cnn.Classifier(backend="emulator", key_dir=None)
    pixels, label = he_cnn.held_out_image(3)
    clf.classify(pixels)
    assert calls == ["image"]
    calls.clear()
    assert clf.classify(3).label == label and calls == []
    digit = np.full((60, 40), 255, np.uint8)
    digit[10:50, 15:25] = 0                      # a dark "1" on white paper
    Image.fromarray(digit).save(tmp_path / "one.png")
    clf.classify(tmp_path / "one.png")
    assert calls == [f"image {tmp_path / 'one.png'}"]


def test_the_one_check_still_refuses_at_the_boundary(tmp_path: Path) -> None:
    """The session takes its image as checked: what the API is given is refused where it
    enters (pixels out of range or of another shape, a file that is not one digit)."""
    from PIL import Image

    clf = he_cnn.Classifier(backend="emulator", key_dir=None)
    for bad, message in ((np.full((28, 28), 2.0), r"outside \[0, 1\]"), (np.zeros(783), "shape"),
                         ([["a"] * 28] * 28, "not numeric"), (np.full((28, 28), np.nan), "NaN")):
        with pytest.raises(ConfigError, match=message):
            clf.classify(bad)
    Image.fromarray(np.full((30, 30), 128, np.uint8)).save(tmp_path / "flat.png")
    with pytest.raises(ConfigError, match="no digit to find"):
        clf.classify(tmp_path / "flat.png")
