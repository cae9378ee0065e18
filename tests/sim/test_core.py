"""Tests of the simulation core: latency statistics, metrics and the seeded environment.

Every expected value here is computed by hand in the test (no call back into the code under
test), so a regression in numpy's percentile method or in our bookkeeping shows up directly.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from cryptoffload.errors import ConfigError, CryptoffloadError
from cryptoffload.sim.core import (
    JobTiming,
    LatencyStats,
    Metrics,
    Simulation,
)
from cryptoffload.sim.devices import FifoDevice
from cryptoffload.sim.links import SharedLink


# -- LatencyStats -----------------------------------------------------------------------------
def test_latency_stats_hand_computed() -> None:
    # "linear" percentile of [1, 2, 3, 4]: position q * (n - 1) = 3q, interpolated.
    s = LatencyStats.from_latencies([4.0, 1.0, 3.0, 2.0])
    assert s.count == 4
    assert s.mean == pytest.approx(2.5)
    assert s.p50 == pytest.approx(2.5)  # 1 + 1.5
    assert s.p90 == pytest.approx(3.7)  # 1 + 2.7
    assert s.p99 == pytest.approx(3.97)  # 1 + 2.97
    assert s.max == 4.0


def test_latency_stats_single_value_and_plain_types() -> None:
    s = LatencyStats.from_latencies(np.array([0.25]))
    assert (s.count, s.mean, s.p50, s.p90, s.p99, s.max) == (1, 0.25, 0.25, 0.25, 0.25, 0.25)
    d = s.as_dict()
    assert set(d) == {"count", "mean", "p50", "p90", "p99", "max"}
    assert all(type(v) in (int, float) for v in d.values())  # JSON-ready, no numpy scalars
    json.dumps(d)


@pytest.mark.parametrize("bad", [[], np.empty(0), [1.0, math.nan], [math.inf]])
def test_latency_stats_rejects_empty_or_non_finite(bad: list[float]) -> None:
    with pytest.raises(ConfigError):
        LatencyStats.from_latencies(bad)


def test_config_error_is_a_user_error() -> None:
    assert issubclass(ConfigError, CryptoffloadError)


# -- Metrics ----------------------------------------------------------------------------------
def _three_jobs() -> Metrics:
    m = Metrics()
    m.record("a", 0.0, 1.0)  # latency 1
    m.record("a", 1.0, 3.0)  # latency 2
    m.record("b", 2.0, 6.0)  # latency 4
    return m


def test_metrics_latency_per_kind_and_overall() -> None:
    m = _three_jobs()
    assert m.kinds == ["a", "b"]
    assert m.count() == 3 and m.count("a") == 2 and m.count("zzz") == 0
    a = m.latency("a")
    assert (a.count, a.mean, a.max) == (2, 1.5, 2.0)
    assert a.p50 == pytest.approx(1.5)
    assert a.p90 == pytest.approx(1.9)
    overall = m.latency()
    assert overall.count == 3
    assert overall.mean == pytest.approx(7.0 / 3.0)
    assert overall.p50 == pytest.approx(2.0)
    assert overall.p90 == pytest.approx(3.6)  # position 1.8 in [1, 2, 4]: 2 + 0.8 * 2
    np.testing.assert_allclose(np.sort(m.latencies()), [1.0, 2.0, 4.0])


def test_metrics_throughput_uses_first_arrival_to_last_finish() -> None:
    m = _three_jobs()
    assert m.throughput("a") == pytest.approx(2.0 / 3.0)  # 2 jobs in [0, 3]
    assert m.throughput("b") == pytest.approx(1.0 / 4.0)  # 1 job in [2, 6]
    assert m.throughput() == pytest.approx(3.0 / 6.0)  # 3 jobs in [0, 6]


def test_metrics_refuses_what_it_cannot_answer() -> None:
    m = Metrics()
    with pytest.raises(ConfigError):
        m.latency()
    with pytest.raises(ConfigError):
        m.throughput()
    m.record("x", 1.0, 1.0)
    with pytest.raises(ConfigError):
        m.throughput("x")  # zero-length window
    with pytest.raises(ConfigError):
        m.latency("unknown")
    with pytest.raises(ConfigError):
        m.record("x", 2.0, 1.0)  # finish before arrival
    with pytest.raises(ConfigError):
        m.record("x", 0.0, math.nan)


def test_metrics_summary_is_plain_json() -> None:
    m = _three_jobs()
    s = m.summary(None)
    assert s["resources"] == {}
    assert s["jobs"]["a"]["count"] == 2
    assert s["jobs"]["b"]["throughput"] == pytest.approx(0.25)
    json.dumps(s)


# -- Simulation -------------------------------------------------------------------------------
def test_simulation_rng_is_reproducible_from_seed() -> None:
    a, b, c = Simulation(7), Simulation(7), Simulation(8)
    x, y, z = (s.rng.random(5) for s in (a, b, c))
    np.testing.assert_array_equal(x, y)
    assert not np.array_equal(x, z)
    assert a.seed == 7 and a.now == 0.0 and isinstance(a.env.now, float)


@pytest.mark.parametrize("seed", [-1, 1.5, "1", None, True])
def test_simulation_rejects_bad_seed(seed: object) -> None:
    with pytest.raises(ConfigError):
        Simulation(seed)  # type: ignore[arg-type]


def test_simulation_summary_utilisation_and_busy_time() -> None:
    # Two servers; jobs of 1 s and 3 s at t=0; a 10-byte transfer at 5 B/s (2 s busy).
    sim = Simulation(0)
    dev = FifoDevice(sim, "cpu", servers=2)
    link = SharedLink(sim, "pcie", bandwidth=5.0, latency=0.5)
    sim.process(dev.execute(1.0, kind="small"))
    sim.process(dev.execute(3.0, kind="big"))
    sim.process(link.transfer(10.0))
    sim.run()
    assert sim.now == 3.0
    assert sim.metrics.busy_time() == {"cpu": 4.0, "pcie": 2.0}
    util = sim.metrics.utilisation(sim.now)
    assert util["cpu"] == pytest.approx(4.0 / (2 * 3.0))
    assert util["pcie"] == pytest.approx(2.0 / 3.0)
    s = sim.summary()
    json.dumps(s)
    assert s["seed"] == 0 and s["now"] == 3.0
    assert s["resources"]["cpu"]["jobs"] == 2
    assert s["resources"]["pcie"]["bytes_moved"] == 10.0
    assert s["jobs"]["big"]["mean"] == 3.0
    assert s["jobs"]["small"]["throughput"] == 1.0


def test_simulation_summary_before_running() -> None:
    sim = Simulation(0)
    FifoDevice(sim, "d")
    s = sim.summary()
    assert s["jobs"] == {}
    assert s["resources"]["d"]["utilisation"] is None


def test_resource_names_are_unique() -> None:
    sim = Simulation(0)
    FifoDevice(sim, "x")
    with pytest.raises(ConfigError):
        SharedLink(sim, "x", bandwidth=1.0)


def test_job_timing_derived_values() -> None:
    t = JobTiming(arrival=1.0, start=1.5, finish=4.0)
    assert (t.wait, t.service, t.sojourn) == (0.5, 2.5, 3.0)
