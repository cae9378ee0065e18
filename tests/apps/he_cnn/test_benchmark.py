"""The encrypted CNN's benchmark on the emulator: per-channel latency with its breakdown and
memory, one per-pixel batch's throughput, and the refusal of no images."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cryptoffload.apps.he_cnn.benchmark import bench
from cryptoffload.apps.he_cnn.model import CnnModel, ModelConfig
from cryptoffload.apps.he_cnn.train import DEFAULT_WEIGHTS
from cryptoffload.errors import ConfigError


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


def test_clocks_stop_after_the_device_is_done(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The gpu backend runs asynchronously: each timed region (encryption, evaluation; a batch's
    encryption and evaluation) ends with the backend's synchronize, so its clock counts the
    device's work and not only the launches."""
    from cryptoffload.apps.he_cnn import benchmark, infer
    from cryptoffload.crypto.ckks.emulator import EmulatorBackend

    waits = []
    monkeypatch.setattr(EmulatorBackend, "synchronize", lambda self: waits.append(1), raising=False)
    bench(2, DEFAULT_WEIGHTS, batch=False, backend="emulator")
    assert len(waits) == 2 * 3                 # per image: before encrypting, after it, after evaluating
    waits.clear()
    small = CnnModel.init(ModelConfig(channels=1, hidden=4), np.random.default_rng(0)).save(tmp_path / "s.npz")
    bench(4, small, batch=True, backend="emulator")
    assert len(waits) == 3
    infer.sync(object())                       # a backend without synchronize: nothing to wait for
    assert benchmark.sync is infer.sync
