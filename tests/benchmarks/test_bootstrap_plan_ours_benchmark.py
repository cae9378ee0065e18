"""benchmarks/bootstrap_plan.py --library ours (bootstrap_plan_ours.py) and bootstrap_split.py: the
plans are the planner's, OpenFHE's default and ours for the depth the OpenFHE runs had; ratios
are taken within each round over the planner's plan; the split benchmark's table prints every
configuration with the model beside it."""

from __future__ import annotations

import pytest

from .bench_helpers import benchmark_module


@pytest.fixture(scope="module")
def ours():
    return benchmark_module("bootstrap_plan_ours")


def run(s: float) -> dict:
    return {"s": s, "cpu_s": s / 2, "mean_bits": 28.0, "worst_bits": 26.0, "level_after": 5, "phases": {}}


def test_the_three_plans_fit_the_depth(ours):
    from cryptoffload.crypto.ckks.bootstrap.plan import BootstrapPlan

    plans, info = ours.plans(4096)
    assert set(plans) == {"planner", "openfhe_default", "ours_default"}
    assert plans["ours_default"] == BootstrapPlan() and plans["openfhe_default"].level_budget == (5, 4)
    assert sum(plans["planner"].level_budget) + 14 + ours.LEVELS_AFTER <= ours.DEPTH     # OpenFHE's depth rule
    assert info["predicted_speedup_over_openfhe_default"] >= 1.0


def test_ratios_are_per_round_over_the_planner(ours):
    s = ours.summarise({"planner": [run(1.0), run(2.0)], "ours_default": [run(1.5), run(2.0)]})
    assert s["ours_default"]["ratio_over_planner"]["per_round"] == [1.5, 1.0]
    assert s["ours_default"]["ratio_over_planner"]["median"] == 1.25
    assert "ratio_over_planner" not in s["planner"] and s["planner"]["bootstrap_s_median"] == 1.5
    ring = {"ring_dim": 4096, "summary": s, "setup": {k: {"plan": {"level_budget": [6, 3], "dim1": [4, 16]}}
                                                     for k in s}}
    assert "1.250" in ours.table([ring])


def test_the_split_benchmark_prints_every_configuration_beside_the_model():
    split = benchmark_module("bootstrap_split")
    from tests.studies.test_bsgs_bootstrap_split import record

    text = split.table(record(1.08))
    assert sum(line.startswith("CoeffToSlot 0 ") for line in text.splitlines()) == 4
    assert "model" in text and "4 workers: not run" in text
