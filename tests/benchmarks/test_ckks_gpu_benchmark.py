"""benchmarks/ckks_gpu.py: how an HE-CNN image is timed on an asynchronous device (clocks read
after ``synchronize``, a warm-up image first, launches counted as a delta, the capture API
feature-detected), how targets are judged, and that a backend missing here (SEAL without
tenseal) is a note in the JSON, not an exit without one. A fake backend stands for the GPU."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from .bench_helpers import ROOT, benchmark_module


@pytest.fixture(scope="module")
def cg():
    return benchmark_module("ckks_gpu")


class FakeDevice:
    """Work is queued by ``run`` and done only by ``synchronize``; launches are counted."""

    def __init__(self, per_image: int = 7, capture: bool = True) -> None:
        self.kernel_launches = 0
        self.queued = 0
        self.done = 0
        self.per_image = per_image
        if capture:
            self.capture = self._capture

    def synchronize(self) -> None:
        self.done += self.queued
        self.queued = 0

    def decrypt(self, ct: int) -> np.ndarray:
        assert self.queued == 0, "decrypting before the device finished"
        return np.eye(10)[ct]

    def _capture(self, fn, example):
        fn(example)
        return fn


class FakePlan:
    def run(self, be: FakeDevice, ct: int, pw: object) -> int:
        if hasattr(be, "kernel_launches"):
            be.kernel_launches += be.per_image
        be.queued += 1
        return ct

    def unpack_logits(self, slots: np.ndarray) -> np.ndarray:
        return slots


def _setup(be: FakeDevice) -> dict:
    labels = [3, 1, 4]
    return {"be": be, "plan": FakePlan(), "pw": None, "cts": labels, "plain": np.eye(10)[labels],
            "keygen_s": 0.1, "prepare_s": 0.2}


def test_images_are_timed_after_a_warm_up_and_launches_counted_per_image(cg) -> None:
    be = FakeDevice(per_image=7)
    res = cg.time_images(_setup(be))
    assert be.done == 4                              # one warm-up image, three timed, all waited for
    assert res["launches_per_image"] == 7 and res["predictions"] == [3, 1, 4] and res["agreement"] == 1.0
    assert res["host_s_per_launch"] == pytest.approx(res["issue_s_median"] / 7)
    assert res["latency_s"]["median"] >= res["issue_s_median"]


def test_a_backend_without_a_launch_count_or_capture_says_so(cg) -> None:
    be = FakeDevice(capture=False)
    del be.kernel_launches
    s = _setup(be)
    res = cg.time_images(s)
    assert res["launches_per_image"].startswith("n/a") and res["host_s_per_launch"].startswith("n/a")
    assert cg.capture_images(s, res["predictions"]) == "n/a: the backend has no capture()"


def test_a_capture_is_replayed_and_checked_against_run(cg) -> None:
    s = _setup(FakeDevice())
    got = cg.capture_images(s, [3, 1, 4])
    assert got["predictions_equal_run"] is True and got["latency_s_median"] >= 0
    assert cg.capture_images(s, [0, 0, 0])["predictions_equal_run"] is False


def test_a_failing_capture_is_reported_not_raised(cg) -> None:
    be = FakeDevice()
    be.capture = lambda fn, ex: (_ for _ in ()).throw(RuntimeError("graph capture refused"))
    assert cg.capture_images(_setup(be), [3, 1, 4]).startswith("failed: RuntimeError: graph capture refused")


def test_targets_and_agreement(cg) -> None:
    he = {"gpu": {"predictions": [1, 2, 3], "latency_s": {"median": 0.004}, "launches_per_image": 600},
          "seal": {"predictions": [1, 2]}, "gpu-twin": {"predictions": [1, 5, 3]}}
    agree = cg.cross_agreement(he)
    assert agree == {"gpu vs seal": True, "gpu vs gpu-twin": False}
    t = cg.targets({"he_cnn": he, "agreement_across_backends": agree, "batch": {"images_per_s": 1500.0}})
    assert t["gpu_met"] is True and t["launches_met"] is False and t["batched_met"] is True
    assert t["predictions_equal_across_backends"] is False


def test_a_missing_backend_is_noted_and_the_json_still_written(cg, tmp_path: Path, monkeypatch) -> None:
    from cryptoffload.errors import BackendUnavailable

    def setup(name):
        raise BackendUnavailable(f"the {name} CKKS backend is unavailable: no tenseal")

    monkeypatch.setattr(cg, "_setup", setup)
    monkeypatch.setattr(cg.pin, "pin_to_one_core", lambda: None)
    out = tmp_path / "c.json"
    assert cg.main(["--backends", "seal", "--repeats", "1", "--images", "0", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["unavailable"] == {"seal": "the seal CKKS backend is unavailable: no tenseal"}
    assert data["ops_s"] == {} and data["he_cnn"] == {}
