"""The encrypted CNN's accuracy on the emulator: encrypted and plaintext predictions agree, one
image at a time and in one per-pixel batch; a range beyond the held-out set is refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cryptoffload.apps.he_cnn.accuracy import evaluate
from cryptoffload.apps.he_cnn.model import CnnModel, ModelConfig
from cryptoffload.errors import ConfigError


def test_evaluate_on_emulator() -> None:
    ev = evaluate(40, backend="emulator")
    assert ev.agreement == 1.0 and ev.n_images == 40 and ev.disagreements == []
    assert ev.plain_accuracy == ev.encrypted_accuracy and ev.plain_accuracy_all_held_out >= 0.97


def test_evaluate_batch_and_range(tmp_path: Path) -> None:
    small = CnnModel.init(ModelConfig(channels=1, hidden=4), np.random.default_rng(0))
    path = small.save(tmp_path / "small.npz")
    ev = evaluate(12, path, backend="emulator", batch=True, start=980)
    assert ev.mode == "batch" and ev.start == 980 and ev.agreement == 1.0 and ev.max_abs_error < 1e-9
    with pytest.raises(ConfigError, match="not within the 1000 held-out images"):
        evaluate(12, path, backend="emulator", start=995)


def test_evaluate_reports_progress_per_image_and_not_before_the_inputs_are_checked(tmp_path: Path) -> None:
    small = CnnModel.init(ModelConfig(channels=1, hidden=16), np.random.default_rng(0))
    path = small.save(tmp_path / "small.npz")
    calls: list[object] = []

    def progress(total: int):
        calls.append(total)
        return calls.append

    evaluate(3, path, backend="emulator", start=10, progress=progress)
    assert calls == [3, "image 10", "image 11", "image 12"]
    calls.clear()
    evaluate(5, path, backend="emulator", batch=True, progress=progress)
    assert calls == [1, "5 images in one batch"]
    calls.clear()
    with pytest.raises(ConfigError):
        evaluate(12, path, backend="emulator", start=995, progress=progress)
    assert calls == []
