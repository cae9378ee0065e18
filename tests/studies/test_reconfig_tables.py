"""The fpga-reconfig tables' arithmetic on made-up outcomes: quantiles, where the paper's one
draw falls among our seeds, p90 relative to the Oracle per seed and rate."""

from __future__ import annotations

import numpy as np
import pytest

from cryptoffload.studies._reconfig_sweep import PolicyRun, SeedOutcome
from cryptoffload.studies._reconfig_tables import by_key, mean_rel, paper_percentile, quantiles, rel_oracle


def _run(rate: float, policy: str, p90: float) -> PolicyRun:
    return PolicyRun(rate, policy, p90 / 2, p90, 2 * p90, p90 / 2, 0.5, 0.5, 0, 1.0, np.zeros(10))


def _outcome(seed: int, scale: float) -> SeedOutcome:
    runs = [_run(10.0, "oracle", 0.01), _run(10.0, "predict", 0.012 * scale), _run(100.0, "oracle", 0.02),
            _run(100.0, "predict", 0.03 * scale), _run(100.0, "software", 0.2)]
    return SeedOutcome(seed, runs, {10.0: 1e6, 100.0: 2e6}, np.full(10, 0.1), 0.0, 0.0)


def test_quantiles_and_the_papers_percentile() -> None:
    assert quantiles(range(11)) == (1.0, 5.0, 9.0)
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
