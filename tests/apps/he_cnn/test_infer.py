"""Encrypted inference end to end: one image on real SEAL at the full parameters (N = 16384,
5 levels, 28 Galois keys; ~5 s), its trace, on the emulator and on the GPU backend's CPU twin;
its timers on a fake device whose work finishes only when waited for."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cryptoffload.apps.he_cnn import infer, keys
from cryptoffload.apps.he_cnn.infer import infer_image
from cryptoffload.apps.he_cnn.model import CnnModel, ModelConfig
from cryptoffload.apps.he_cnn.packing import PerChannelPlan
from cryptoffload.apps.he_cnn.train import DEFAULT_WEIGHTS
from cryptoffload.crypto.ckks import DEFAULT_PARAMS, TRACE_SCHEMA
from cryptoffload.errors import ConfigError
from cryptoffload.workloads.he_trace import load_trace

from .he_cnn_helpers import LATE_FIRST, LATE_WORK, late_backends, prepare_encodes, small_model

pytest.importorskip("tenseal")


def test_seal_one_image_matches_plaintext_and_writes_trace(tmp_path: Path) -> None:
    r = infer_image(7, DEFAULT_WEIGHTS, backend="seal", trace_out=tmp_path / "trace.json")
    assert r.backend == "seal" and r.prediction == r.plain_prediction
    # CKKS at 30-bit scales: logits (|l| up to ~60) within a few 1e-3
    assert r.max_abs_error < 0.05, r.max_abs_error
    margin = sorted(r.plain_logits)[-1] - sorted(r.plain_logits)[-2]
    assert margin > 10 * r.max_abs_error
    assert r.rotations == 45 and r.galois_keys == 28
    assert set(r.layers) == {"conv", "act1", "fc1", "act2", "fc2"} and all(v > 0 for v in r.layers.values())
    assert r.op_kinds["rotate"]["count"] == 45 and r.op_kinds["relinearize"]["count"] == 2
    trace = json.loads(Path(r.trace_path).read_text())
    assert trace["schema"] == TRACE_SCHEMA and trace["params"]["slots"] == 8192
    steps = trace["plan"]["rotation_steps"]
    assert steps == PerChannelPlan(CnnModel.init(ModelConfig(), np.random.default_rng(0))).rotation_steps()
    assert set(trace["key_bytes"]) == {"relin", *(f"galois:{s}" for s in steps)}
    enc = [op for op in trace["ops"] if op["op"] == "encrypt"]
    assert len(enc) == 1 and enc[0]["name"] == "image" and enc[0]["bytes_out"] == 2 * 16384 * 6 * 8
    first_conv = next(op for op in trace["ops"] if op["phase"] == "conv" and op["op"] != "encode")
    assert first_conv["inputs"] == [enc[0]["output"]] and first_conv["level"] == 5
    prog = load_trace(r.trace_path)                     # the in-storage study accepts it
    counts = prog.op_counts()
    assert counts["rotate"] == 45 and counts["mul_plain"] == 169 and counts["encrypt"] == 1
    assert prog.measured_wall_s() and prog.measured_wall_s() > 0


def test_wrong_image_and_index_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"shape \(28, 28, 3\)"):
        infer_image(image=np.zeros((28, 28, 3)), backend="emulator")
    with pytest.raises(ConfigError, match="held-out test image index 0..999"):
        infer_image(1000, backend="emulator")
    (tmp_path / "notes.png").write_text("not an image\n")
    with pytest.raises(ConfigError, match="not a PNG or JPEG"):
        infer_image(image_file=tmp_path / "notes.png", backend="emulator")
    with pytest.raises(ConfigError, match="pixels or as a file, not both"):
        infer_image(image=np.zeros((28, 28)), image_file=tmp_path / "notes.png", backend="emulator")


def test_a_file_image_is_checked_once_by_its_decoder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """issue 36: a file image was checked by its decoder, then again by infer_image (and by
    the session): now its decoder is the one check, and pixels are checked once here."""
    from PIL import Image

    from cryptoffload.apps.he_cnn import digit_image

    calls: list[str] = []
    real = infer.check_image

    def counted(image: object, what: str = "image") -> np.ndarray:
        calls.append(what)
        return real(image, what)
    monkeypatch.setattr(infer, "check_image", counted)
    monkeypatch.setattr(digit_image, "check_image", counted)
    digit = np.full((60, 40), 255, np.uint8)
    digit[10:50, 15:25] = 0
    Image.fromarray(digit).save(tmp_path / "one.png")
    r = infer_image(image_file=tmp_path / "one.png", backend="emulator")
    assert calls == [f"image {tmp_path / 'one.png'}"] and r.index is None and r.label is None
    assert r.prediction == r.plain_prediction
    calls.clear()
    pixels = digit_image.load_digit_image(tmp_path / "one.png")
    calls.clear()
    assert infer_image(image=pixels, backend="emulator").prediction == r.prediction and calls == ["image"]


def test_emulator_inference_is_exact() -> None:
    r = infer_image(0, backend="emulator")
    assert r.max_abs_error < 1e-9 and r.prediction == r.plain_prediction


def test_rns_twin_one_image_at_full_size_predicts_like_the_plaintext_model() -> None:
    """The gpu backend's code on the CPU (gpu-twin) at the HE-CNN's real parameters: the same
    program, the same 45 rotations (hoisted where the plan asks), the plaintext prediction."""
    r = infer_image(7, DEFAULT_WEIGHTS, backend="gpu-twin")
    assert r.backend == "gpu-twin" and r.prediction == r.plain_prediction
    assert r.max_abs_error < 0.05, r.max_abs_error
    assert r.rotations == 45 and r.galois_keys == 28 and r.op_kinds["relinearize"]["count"] == 2


def test_phase_times_are_the_device_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a late device (tests/late_device.py) each phase's time is exactly its own queued work:
    none missing (a timer stopped before the device finished), none from the phase before. One
    image, no warm-up: the first calls' extra work (LATE_FIRST) is in the phases that make them."""
    model, path = small_model(tmp_path, hidden=16)
    n_prepare = prepare_encodes(PerChannelPlan(model, DEFAULT_PARAMS))
    _, made = late_backends(monkeypatch, keys)  # infer makes its key set through apps/he_cnn/keys.py
    r = infer_image(0, path, backend="late")
    n = made[0].counts
    w = LATE_WORK
    # the evaluation: the two squares, and the biases the plan encodes on first use
    assert n["mul"] == 2 and n["encode"] > n_prepare
    assert r.seconds == {"keygen": w["keygen"] + LATE_FIRST, "prepare_weights": w["encode"] * n_prepare + LATE_FIRST,
                         "encrypt": w["encrypt"] + LATE_FIRST,
                         "evaluate": 2 * w["mul"] + LATE_FIRST + w["encode"] * (n["encode"] - n_prepare),
                         "decrypt": w["decrypt"] + LATE_FIRST}
    assert r.op_kinds["mul"] == {"count": 2, "seconds": 2 * w["mul"] + LATE_FIRST}
