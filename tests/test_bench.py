"""Benchmark plumbing, without timing anything: a case's median and spread, at least one call
per slice, the rotating order of interleaved rounds, pinning to one core and back, and the
results file."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from cryptoffload.bench import Case, interleaved, pin_to_one_core, save_results, time_case, unpin


def test_median_and_spread() -> None:
    c = Case("x", lambda: None, items=1)
    assert math.isnan(c.median_rate) and c.spread == 0.0
    c.rates = [90.0, 100.0, 130.0]
    assert c.median_rate == 100.0 and c.spread == pytest.approx(0.2)
    c.rates = [100.0]
    assert c.spread == 0.0


def test_time_case_calls_at_least_once_and_counts_items() -> None:
    calls: list[int] = []
    rate = time_case(Case("x", lambda: calls.append(1), items=8), seconds=0.0)
    assert calls == [1] and rate > 0                   # one call of 8 items over a positive time


def test_interleaved_rounds_rotate_the_order() -> None:
    seen: list[str] = []
    cases = [Case(n, lambda n=n: seen.append(n), items=1) for n in "abc"]
    said: list[str] = []
    interleaved(cases, seconds=0.0, rounds=3, progress=said.append)
    assert seen == list("abc") + list("abc") + list("bca") + list("cab")   # a warm-up call each first
    assert said[0] == "round 1/3: a" and said[-1] == "round 3/3: b"
    assert all(len(c.rates) == 3 for c in cases)


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="no CPU affinity on this platform")
def test_pin_to_one_core_and_back() -> None:
    before = os.sched_getaffinity(0)
    try:
        cpu = pin_to_one_core()
        assert cpu == min(before) and os.sched_getaffinity(0) == {cpu}
    finally:
        os.sched_setaffinity(0, before)
    unpin()
    assert os.sched_getaffinity(0) >= before
    os.sched_setaffinity(0, before)


def test_save_results_writes_plain_json_atomically(tmp_path: Path) -> None:
    said: list[str] = []
    path = tmp_path / "new" / "r.json"
    data = {"rate": np.float64(2.5), "rates": np.arange(3), "missing": float("nan"), "path": tmp_path}
    assert save_results(data, path, said.append, " (1.0 s)") == path
    assert json.loads(path.read_text()) == {"rate": 2.5, "rates": [0, 1, 2], "missing": None, "path": str(tmp_path)}
    assert said == [f"wrote {path} (1.0 s)"] and [p.name for p in path.parent.iterdir()] == ["r.json"]
