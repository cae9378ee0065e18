"""The encrypted CNN's benchmark on the emulator: per-channel latency with its breakdown and
memory, one per-pixel batch's throughput, and the refusal of no images; on a fake device whose
work finishes only when waited for, every time is exactly the work of what it timed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cryptoffload.apps.he_cnn import benchmark, keys
from cryptoffload.apps.he_cnn.batching import BatchPlan
from cryptoffload.apps.he_cnn.benchmark import bench
from cryptoffload.apps.he_cnn.model import CnnModel, ModelConfig
from cryptoffload.apps.he_cnn.packing import PerChannelPlan
from cryptoffload.apps.he_cnn.train import DEFAULT_WEIGHTS
from cryptoffload.crypto.ckks import DEFAULT_PARAMS
from cryptoffload.errors import ConfigError

from .he_cnn_helpers import LATE_FIRST, LATE_WORK, late_backends, prepare_encodes, small_model


def test_bench_on_emulator(tmp_path: Path) -> None:
    b = bench(2, DEFAULT_WEIGHTS, batch=False, backend="emulator")
    assert b.mode == "per-channel" and b.rotations == 45 and b.agreement == 1.0
    assert b.key_bytes["galois"] == 28 * 6 * 2 * 7 * 16384 * 8 and b.weight_bytes["plaintexts"] > 90e6
    assert set(b.op_kinds) >= {"rotate", "mul_plain", "add", "rescale", "mul", "relinearize"}
    # batch mode with a small model (the full one is 100k scalar products: a benchmark, not a test)
    rng = np.random.default_rng(0)
    small = CnnModel.init(ModelConfig(channels=1, hidden=4), rng)
    path = small.save(tmp_path / "small.npz")
    bb = bench(12, path, batch=True, backend="emulator")
    assert bb.mode == "batch" and bb.n_images == 12 and bb.agreement == 1.0 and bb.max_abs_error < 1e-9
    assert bb.images_per_s > 0 and bb.capacity_images_per_s == pytest.approx(8192 / bb.batch_s)
    with pytest.raises(ConfigError, match="--images"):
        bench(0, DEFAULT_WEIGHTS, backend="emulator")


# -- the timers wait for the device ---------------------------------------------------------------
def test_per_channel_times_are_the_device_work_after_a_warm_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a device whose work finishes only when waited for, each phase's time is exactly its
    own work: no sync missing (a missing one records 0 or the previous phase's work), and the
    first calls' extra work stays in the untimed warm-up image."""
    model, path = small_model(tmp_path, hidden=16)
    n_prepare = prepare_encodes(PerChannelPlan(model, DEFAULT_PARAMS))
    _, made = late_backends(monkeypatch, keys)  # infer makes its key set through apps/he_cnn/keys.py
    b = bench(3, path, backend="late")
    assert len(made) == 1 and b.warmup_images == 1 and b.n_images == 3
    assert b.keygen_s == LATE_WORK["keygen"] + LATE_FIRST
    assert b.prepare_s == LATE_WORK["encode"] * n_prepare + LATE_FIRST
    assert b.encrypt_s == LATE_WORK["encrypt"] and b.decrypt_s == LATE_WORK["decrypt"]
    muls = 2                                            # the two squares
    assert b.latency_s == dict.fromkeys(("median", "mean", "min", "max"), muls * LATE_WORK["mul"])
    # the traced breakdown: the same work, per op (recording backend) and per layer
    assert b.op_kinds["mul"] == {"count": muls, "seconds": muls * LATE_WORK["mul"]}
    assert b.layers == {"conv": 0.0, "act1": LATE_WORK["mul"], "fc1": 0.0, "act2": LATE_WORK["mul"], "fc2": 0.0}
    # 1 warm-up + 3 timed + 3 traced inferences ran; only the timed ones are in the latency
    assert made[0].counts["mul"] == 7 * muls and made[0].counts["encrypt"] == 4


def test_batch_times_are_the_device_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The per-pixel batch (no warm-up: one batch, first calls included) on the late device."""
    model, path = small_model(tmp_path, hidden=4)
    n_prepare = prepare_encodes(BatchPlan(model, DEFAULT_PARAMS))
    _, made = late_backends(monkeypatch, benchmark)
    bb = bench(4, path, batch=True, backend="late")
    n = made[0].counts
    assert bb.warmup_images == 0 and bb.keygen_s == LATE_WORK["keygen"] + LATE_FIRST
    assert bb.prepare_s == LATE_WORK["encode"] * n_prepare + LATE_FIRST
    assert bb.encrypt_s == LATE_WORK["encrypt"] * n["encrypt"] + LATE_FIRST
    # the evaluation: its products and the scalar weights it encodes on the way
    assert bb.latency_s["batch"] == LATE_WORK["mul"] * n["mul"] + LATE_FIRST + LATE_WORK["encode"] * (n["encode"] - n_prepare)
    assert bb.decrypt_s == LATE_WORK["decrypt"] * n["decrypt"] + LATE_FIRST


def test_the_gpu_twin_counts_launches_and_replays_a_captured_inference():
    """The GPU path's twin at the HE-CNN's real size: one image's evaluation is at most 500
    kernel launches (issue 20's target; ~2,450 before the batched ops), the captured inference
    replays, and the prediction is the plaintext model's."""
    r = bench(images=1, backend="gpu-twin")
    assert r.launches_per_image is not None and 0 < r.launches_per_image <= 500
    assert set(r.replay_latency_s) == {"median", "min", "max"} and r.replay_latency_s["min"] > 0
    assert r.agreement == 1.0 and r.max_abs_error < 0.05
