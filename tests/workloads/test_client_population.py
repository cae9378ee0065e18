"""The client population behind the fpga-reconfig request stream: shares, ids, ciphers, runs."""

from __future__ import annotations

import numpy as np
import pytest

from cryptoffload.errors import ConfigError
from cryptoffload.workloads.client_population import ClientPopulation, assign_runs, draw_population


def test_drawn_population_is_normalised_distinct_and_id_mod_ciphers():
    pop = draw_population(1, n_clients=1000, activity_shape=1.5, n_ciphers=7)
    assert len(pop) == 1000 and pop.share.sum() == pytest.approx(1.0)
    assert np.unique(pop.ids).size == 1000
    assert np.array_equal(pop.cipher, pop.ids % 7)
    assert pop.cipher_share().sum() == pytest.approx(1.0)


def test_a_heavier_tail_concentrates_activity():
    heavy = draw_population(4, n_clients=5000, activity_shape=0.8)
    light = draw_population(4, n_clients=5000, activity_shape=3.0)
    assert heavy.share.max() > 10 * light.share.max()


def test_runs_go_to_clients_by_share_never_twice_in_a_row():
    pop = ClientPopulation(np.array([0.7, 0.2, 0.1]), np.array([10, 11, 12]), np.array([0, 1, 2]), 3, "test")
    draws = np.random.default_rng(0).random((20_000, 2))
    who = assign_runs(pop, draws)
    assert not np.any(who[1:] == who[:-1])
    # with only two clients the runs can only alternate
    two = ClientPopulation(np.array([0.9, 0.1]), np.array([1, 2]), np.array([0, 1]), 2, "two")
    alt = assign_runs(two, draws[:100])
    assert np.all(alt[1:] != alt[:-1])
    # a prefix of the draws gives a prefix of the assignment
    assert np.array_equal(assign_runs(pop, draws[:500]), who[:500])


def test_pick_follows_the_shares():
    pop = ClientPopulation(np.array([1.0, 3.0]), np.array([5, 6]), np.array([0, 1]), 2, "x")
    picks = pop.pick(np.random.default_rng(1).random(40_000))
    assert np.mean(picks == 1) == pytest.approx(0.75, abs=0.01)


@pytest.mark.parametrize("kwargs", [dict(n_clients=1), dict(n_clients=2.5), dict(activity_shape=0),
                                    dict(activity_shape=float("nan")), dict(n_clients=True)])
def test_bad_population_arguments(kwargs):
    with pytest.raises(ConfigError):
        draw_population(1, **kwargs)


def test_inconsistent_population_is_refused():
    with pytest.raises(ConfigError, match="distinct"):
        ClientPopulation(np.array([1.0, 1.0]), np.array([3, 3]), np.array([0, 1]), 2, "dup")
    with pytest.raises(ConfigError, match="ciphers"):
        ClientPopulation(np.array([1.0, 1.0]), np.array([3, 4]), np.array([0, 5]), 2, "bad cipher")
    with pytest.raises(ConfigError, match="positive"):
        ClientPopulation(np.array([1.0, -1.0]), np.array([3, 4]), np.array([0, 1]), 2, "negative")
