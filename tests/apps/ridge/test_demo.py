"""``ridge demo``: CSP and platform as subprocesses, providers and buyer in process, every
message over a real socket; the model equals the in-process protocol's exactly."""

from __future__ import annotations

import json
from pathlib import Path

from ridge_helpers import cli, in_process, no_process_mentions

from cryptoffload.apps.ridge import RidgeParams
from cryptoffload.workloads.ridge_data import generate


def test_demo_equals_in_process(tmp_path: Path, keys: tuple) -> None:
    work = tmp_path / "work"
    proc = cli(tmp_path, "ridge", "demo", "--records", "200", "--d", "4", "--out", "demo.json", "--workdir",
               str(work), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    out = json.loads((tmp_path / "demo.json").read_text())
    data = generate(200, 4, 1)
    params = RidgeParams(d=4, max_records=200, x_bound=data.x_bound, y_bound=data.y_bound)
    assert out["fractions"] == in_process(data.X, data.y, params, keys)
    assert out["l2_diff"] <= out["error_bound"]
    assert "scikit-learn" in proc.stdout and "error bound" in proc.stdout
    assert (work / "platform.db").exists()
    assert no_process_mentions(str(work)), "a demo server outlived the demo"


def test_demo_per_provider_three_providers(tmp_path: Path, keys: tuple) -> None:
    proc = cli(tmp_path, "ridge", "demo", "--records", "200", "--d", "4", "--providers", "3", "--mode",
               "per-provider", "--seed", "7", "--out", "demo.json", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    out = json.loads((tmp_path / "demo.json").read_text())
    assert out["uploads"] == 3 and out["records"] == 200
    data = generate(200, 4, 7)
    params = RidgeParams(d=4, max_records=200, x_bound=data.x_bound, y_bound=data.y_bound)
    assert out["fractions"] == in_process(data.X, data.y, params, keys, mode="per-provider", providers=3)
