"""Distances of a trace to the paper's inputs, and the grid fit of the client population."""

from __future__ import annotations

import numpy as np
import pytest

from cryptoffload.errors import ConfigError
from cryptoffload.workloads.client_population import (
    FITTED_CLIENTS,
    FITTED_CLIENTS_RANGE,
    FITTED_SHAPE,
    draw_population,
)
from cryptoffload.workloads.population_fit import (
    GridPoint,
    accepted,
    fc_distance,
    fit_population,
    mix_distance,
    same_client_returns,
)
from cryptoffload.workloads.request_trace import Trace
from cryptoffload.workloads.web_trace import RETURN_TIME, generate_trace, sample_inverse_cdf

TABLE7 = [0.0911, 0.0697, 0.0886, 0.0765, 0.0907, 0.0786, 0.2463, 0.0706, 0.0967, 0.0848]


def _trace(time, client, n_ciphers=10):
    client = np.asarray(client, dtype=np.int64)
    return Trace(np.asarray(time, dtype=float), client, (client % n_ciphers).astype(np.int8),
                 np.full(client.size, 10, dtype=np.int64), "test", n_ciphers)


def test_same_client_returns_by_hand():
    tr = _trace([0.0, 1.0, 3.0, 6.0, 10.0], [1, 2, 1, 1, 2])
    assert sorted(same_client_returns(tr).tolist()) == [3.0, 3.0, 9.0]


def test_fc_distance_is_small_when_returns_are_fc_draws():
    gaps = sample_inverse_cdf(np.random.default_rng(3), RETURN_TIME, 50_000, 3600.0)
    tr = _trace(np.concatenate([[0.0], np.cumsum(gaps)]), np.zeros(50_001))  # one client: returns = gaps
    assert fc_distance(tr) < 0.01


def test_mix_distance_is_zero_for_the_target_mix_in_any_order():
    counts = np.round(np.array(TABLE7) * 10_000).astype(int)
    ciphers = np.repeat(np.arange(10)[::-1], counts)  # target shares on permuted ciphers
    tr = _trace(np.arange(ciphers.size, dtype=float), ciphers)
    assert mix_distance(tr, TABLE7) < 1e-3
    with pytest.raises(ConfigError):
        mix_distance(tr, TABLE7[:5])


def test_fit_picks_a_grid_point_by_the_stated_rule():
    fit = fit_population(TABLE7, n_clients=(300, 30_000), shapes=(2.5,), seeds=2, n_requests=20_000)
    assert (fit.n_clients, fit.activity_shape) in {(g.n_clients, g.activity_shape) for g in fit.grid}
    best_fc = min(g.fc_mean for g in fit.grid)
    chosen = next(g for g in fit.grid if g.n_clients == fit.n_clients)
    assert chosen.fc_mean <= best_fc + 0.005 or len(fit.grid) == 1
    with pytest.raises(ConfigError):
        fit_population(TABLE7, seeds=1)


def test_accepted_keeps_the_points_within_the_stated_slack_of_both_bests():
    grid = [GridPoint(1, 1.0, 0.100, 0.0, 0.20, 0.02), GridPoint(2, 1.0, 0.104, 0.0, 0.21, 0.01),
            GridPoint(3, 1.0, 0.106, 0.0, 0.20, 0.01), GridPoint(4, 1.0, 0.101, 0.0, 0.23, 0.01)]
    assert [g.n_clients for g in accepted(grid)] == [1, 2]  # 3 misses Fc by 0.006, 4 the mix by 0.03 > 0.02
    apart = [GridPoint(1, 1.0, 0.2, 0.0, 0.1, 0.0), GridPoint(2, 1.0, 0.1, 0.0, 0.5, 0.0)]
    assert [g.n_clients for g in accepted(apart, fc_slack=0.01)] == [2]  # none both: the best Fc point


def test_the_fitted_clients_range_is_what_the_fit_admits_on_its_results():
    """The range the fpga-reconfig bands move the population over, computed from the stored fit."""
    import json
    from pathlib import Path

    stored = json.loads((Path(__file__).parents[2] / "benchmarks/results/client_population_fit.json").read_text())
    ok = accepted([GridPoint(**g) for g in stored["grid"]])
    assert (min(g.n_clients for g in ok), max(g.n_clients for g in ok)) == FITTED_CLIENTS_RANGE
    assert stored["n_clients"] == FITTED_CLIENTS == FITTED_CLIENTS_RANGE[0]


def test_fit_check_fitted_population_matches_fc_better_than_a_small_one():
    """Fit check: the constants are a fit to Fc; a population ten times smaller fits worse."""
    def mean_ks(n_clients):
        out = []
        for s in range(3):
            pop = draw_population(np.random.SeedSequence([s, 17]), n_clients, FITTED_SHAPE)
            out.append(fc_distance(generate_trace(60_000, seed=s, population=pop)))
        return np.mean(out)

    assert mean_ks(FITTED_CLIENTS) < mean_ks(FITTED_CLIENTS // 10)
