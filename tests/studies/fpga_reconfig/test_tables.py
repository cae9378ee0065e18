"""The fpga-reconfig tables' arithmetic on made-up outcomes: quantiles, where the paper's one
draw falls among our seeds, p90 relative to the Oracle per seed and rate."""

from __future__ import annotations

import numpy as np
import pytest

from cryptoffload.studies.fpga_reconfig.sweep import PolicyRun, SeedOutcome
from cryptoffload.studies.fpga_reconfig.tables import (
    ReadingRow,
    by_key,
    mean_rel,
    ordering_table,
    paper_mean_rel,
    paper_percentile,
    paper_rate,
    paper_table6,
    quantiles,
    rel_oracle,
)


def _run(rate: float, policy: str, p90: float) -> PolicyRun:
    return PolicyRun(rate, policy, p90 / 2, p90, 2 * p90, p90 / 2, 0.5, 0.5, 0, 1.0, np.zeros(10))


def _outcome(seed: int, scale: float) -> SeedOutcome:
    runs = [_run(10.0, "oracle", 0.01), _run(10.0, "predict", 0.012 * scale), _run(100.0, "oracle", 0.02),
            _run(100.0, "predict", 0.03 * scale), _run(100.0, "software", 0.2)]
    return SeedOutcome(seed, runs, {10.0: 1e6, 100.0: 2e6}, np.full(10, 0.1), 0.0, 0.0)


def test_quantiles_and_the_papers_percentile() -> None:
    assert quantiles(range(11)) == (1.0, 5.0, 9.0)
    q = quantiles([4.0, 0.0, 2.0])
    assert (q.p10, q.median, q.p90) == (pytest.approx(0.4), 2.0, pytest.approx(3.6))
    xs = [1.0, 2.0, 2.0, 3.0]
    assert paper_percentile(2.0, xs) == 50.0                 # one below, two ties counted half
    assert paper_percentile(0.5, xs) == 0.0 and paper_percentile(9.0, xs) == 100.0


def test_relative_to_the_oracle_per_seed() -> None:
    outcomes = [_outcome(1, 1.0), _outcome(2, 2.0)]
    rel = rel_oracle(outcomes, ["oracle", "predict"])
    assert set(rel) == {(10.0, "oracle"), (10.0, "predict"), (100.0, "oracle"), (100.0, "predict")}
    assert rel[(10.0, "oracle")] == [0.01, 0.01]             # the Oracle's own p90, in seconds
    assert rel[(10.0, "predict")] == pytest.approx([1.2, 2.4]) and rel[(100.0, "predict")] == pytest.approx([1.5, 3.0])
    assert mean_rel(outcomes[0], "predict") == pytest.approx((1.2 + 1.5) / 2)
    assert by_key(outcomes[0].runs)[(100.0, "software")].p90 == 0.2


def test_the_papers_table6_for_our_policies() -> None:
    assert paper_rate(700.0) and not paper_rate(700.5) and not paper_rate(50.0)
    assert paper_table6(1000.0, "oracle") == 1.89                       # Oracle: its p90 in seconds
    assert paper_table6(1000.0, "predict-5mb") == paper_table6(1000.0, "predict") == 1.24
    assert paper_table6(1000.0, "parallel") is None                       # beyond the paper
    assert paper_mean_rel("predict") == 1.18 and paper_mean_rel("nopredict") == 2.01   # as its text states
    assert paper_mean_rel("fix-all") == pytest.approx(0.414)              # its column averaged
    assert paper_mean_rel("parallel") is None


def test_ordering_per_rate_read_back_by_field() -> None:
    rels = {(10.0, "predict"): [1.1, 1.3, 0.9], (10.0, "nopredict"): [1.5, 1.2, 1.4], (10.0, "predict-5mb"): [1.6] * 3,
            (20.0, "predict"): [1.4] * 3, (20.0, "nopredict"): [1.2] * 3}
    ordering, ordering_5mb, [t] = ordering_table(rels, [10.0, 20.0])
    assert ordering == {10.0: True, 20.0: False} and ordering_5mb == {10.0: False}
    assert t.id == "ordering_by_rate"
    assert t.columns == ["rate", "predict", "nopredict", "holds", "share_of_seeds_holding", "predict_5mb",
                         "predict_5mb_le_nopredict"]
    assert t.rows[0] == [10.0, 1.1, 1.4, True, pytest.approx(1 / 3), 1.6, False]  # seed 3: predict below 1
    assert t.rows[1] == [20.0, 1.4, 1.2, False, 0.0, None, None]


def test_a_reading_keeps_its_numbers_by_column() -> None:
    row = ReadingRow("literal", 900.0, 1.2, 2.0, 1.5, 3.0, 0.4)
    assert row.values() == {"fixall_capacity_rps": 900.0, "mean_predict_rel_oracle": 1.2,
                            "mean_nopredict_rel_oracle": 2.0, "oracle_p90_1000_s": 1.5, "oracle_p90_20000_s": 3.0,
                            "oracle_p90_mean_abs_log10_err": 0.4}
