"""benchmarks/bootstrap.py: the ratio is taken within each round and its median reported, a
failed worker is a row with its error (not a crash), and our worker measures what the JSON
promises (phases, launches, precision, keys) on the small ring."""

from __future__ import annotations

import pytest

from .bench_helpers import benchmark_module


@pytest.fixture(scope="module")
def bs():
    return benchmark_module("bootstrap")


def run(seconds: float, bits: float = 20.0) -> dict:
    return {"seconds": seconds, "precision": {"mean_bits": bits, "worst_bits": bits - 2},
            "phases": {"CoeffToSlot": seconds / 2, "EvalMod": seconds / 2}, "launches": 10}


def test_the_ratio_is_per_round_and_failures_are_rows(bs):
    rounds = [{"ours": {"runs": [run(4.0), run(6.0)]}, "openfhe": {"runs": [run(2.0), run(3.0)]}},
              {"ours": {"runs": [run(9.0)]}, "openfhe": {"runs": [run(3.0)]}},
              {"ours": {"error": "MemoryError"}, "openfhe": {"runs": [run(1.0)]}}]
    s = bs._summary(rounds)
    assert s["ratio_ours_over_openfhe"]["per_round"] == [2.0, 3.0]       # the failed round is left out
    assert s["ratio_ours_over_openfhe"]["median"] == 2.5
    assert s["ours"]["runs"] == 3 and s["openfhe"]["runs"] == 4
    assert s["ours"]["phases_median"]["EvalMod"] == 3.0 and s["ours"]["launches"] == 10
    assert "ours / OpenFHE time 2.5" in bs._table("x", s)


def test_our_worker_reports_phases_precision_and_keys(bs):
    out = bs.worker_ours("small", "2,2,0,0", 256, 1)
    (r,) = out["runs"]
    assert set(r["phases"]) == {"scale_down", "mod_raise", "CoeffToSlot", "EvalMod", "SlotToCoeff"}
    assert r["launches"] > 0 and r["precision"]["mean_bits"] > 20 and r["level_out"] == out["schedule"]["levels_after"]
    assert out["key_bytes"] > 0 and out["constant_input_precision"]["mean_bits"] > 20
