"""``ridge demo``: CSP and platform as subprocesses, providers and buyer in process, every
message over a real socket -- TLS with a certificate made for the run unless ``--insecure-http``
-- and the model equals the in-process protocol's exactly. No secret outlives the demo."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from ridge_helpers import cli, in_process, no_process_mentions

from cryptoffload.apps.ridge import RidgeParams
from cryptoffload.workloads.ridge_data import generate


def _demo_dirs() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("ridge-demo-*"))


def test_demo_over_tls_equals_in_process(tmp_path: Path, keys: tuple) -> None:
    work = tmp_path / "work"
    before = _demo_dirs()
    proc = cli(tmp_path, "ridge", "demo", "--records", "200", "--d", "4", "--out", "demo.json", "--workdir",
               str(work), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "CSP at https://" in proc.stderr and "platform at https://" in proc.stderr
    out = json.loads((tmp_path / "demo.json").read_text())
    data = generate(200, 4, 1)
    params = RidgeParams(d=4, max_records=200, x_bound=data.x_bound, y_bound=data.y_bound)
    assert out["fractions"] == in_process(data.X, data.y, params, keys)
    assert out["max_abs_diff"] <= out["expected_error"] < out["error_bound"]
    assert "scikit-learn" in proc.stdout and "within the fixed-point error expected" in proc.stdout
    assert sorted(p.name for p in work.iterdir()) == ["platform.db"]       # no key, token or certificate here
    assert not _demo_dirs() - before, "the demo's private folder (keys, tokens) outlived it"
    assert no_process_mentions(str(work)), "a demo server outlived the demo"


def test_demo_per_provider_three_providers_plain_http(tmp_path: Path, keys: tuple) -> None:
    proc = cli(tmp_path, "ridge", "demo", "--records", "200", "--d", "4", "--providers", "3", "--mode",
               "per-provider", "--seed", "7", "--out", "demo.json", "--no-progress", "--insecure-http")
    assert proc.returncode == 0, proc.stderr
    assert "CSP at http://" in proc.stderr
    out = json.loads((tmp_path / "demo.json").read_text())
    assert out["uploads"] == 3 and out["records"] == 200
    data = generate(200, 4, 7)
    params = RidgeParams(d=4, max_records=200, x_bound=data.x_bound, y_bound=data.y_bound)
    assert out["fractions"] == in_process(data.X, data.y, params, keys, mode="per-provider", providers=3)


def test_demo_verdict_is_judged_against_the_expected_error() -> None:
    """The demo's result judges itself (the CLI only prints): within the expected fixed-point
    error or beyond it, with the largest and the L2 difference from scikit-learn."""
    import numpy as np

    from cryptoffload.apps.ridge.demo import DemoResult

    def result(coef: list[float], expected: float) -> DemoResult:
        return DemoResult(np.array(coef), np.array([1.0, -2.0]), 1.0, expected, 10, RidgeParams(d=2, max_records=10),
                          {}, [], None, 2048)  # type: ignore[arg-type]

    r = result([1.25, -2.0], 0.25)
    assert r.abs_diff.tolist() == [0.25, 0.0]
    assert (r.max_abs_diff, r.l2_diff, r.within_expected) == (0.25, 0.25, True)
    beyond = result([1.0, -1.5], 0.25)
    assert (beyond.max_abs_diff, beyond.within_expected) == (0.5, False)
