"""Choosing the prediction interval on the history."""

from __future__ import annotations

import pytest

from cryptoffload.errors import ConfigError
from cryptoffload.policies.interval_tuner import CANDIDATE_WINDOWS, MB, tune_intervals
from cryptoffload.sim.reconfig.platform import load_reconfig_platform
from cryptoffload.workloads.web_trace import generate_trace


@pytest.fixture(scope="module")
def history():
    return generate_trace(12_000, seed=21)


def test_each_rate_gets_the_candidate_with_the_lowest_held_out_p90(history):
    plat = load_reconfig_platform()
    choice = tune_intervals(history, plat, [10.0, 1000.0], seed=1)
    assert set(choice) == {10.0, 1000.0}
    for c in choice.values():
        assert set(c.p90_by_window) == set(CANDIDATE_WINDOWS)
        assert c.window in CANDIDATE_WINDOWS
        assert c.p90_by_window[c.window] == min(c.p90_by_window.values())


def test_runs_of_one_cipher_favour_short_intervals_at_low_load():
    # Long same-client runs and no reconfiguration cost to speak of: the interval that follows
    # runs soonest (one request) must beat the paper's 5 MB at 10 req/s.
    hist = generate_trace(12_000, seed=4)
    plat = load_reconfig_platform()
    c = tune_intervals(hist, plat, [10.0], seed=1, candidates=(1 / 64 * MB, 5 * MB))[10.0]
    assert c.p90_by_window[1 / 64 * MB] <= c.p90_by_window[5 * MB]


def test_bad_arguments(history):
    plat = load_reconfig_platform()
    with pytest.raises(ConfigError):
        tune_intervals(history.head(3), plat, [10.0], seed=1)
    with pytest.raises(ConfigError):
        tune_intervals(history, plat, [10.0], seed=1, candidates=(0.0,))
    with pytest.raises(ConfigError):
        tune_intervals(history, plat, [10.0], seed=1, candidates=())
