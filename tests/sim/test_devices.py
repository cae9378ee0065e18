"""Tests of devices against queueing closed forms, exact recursions and hand-worked examples.

The queueing checks are statistical; each computes a batch-means standard error from its own
run and requires the error to be under 4 standard errors, *and* the standard error to be small
enough (a few per cent) that the check has teeth. For reference, over 40 seeds the relative
standard deviation of the mean-wait estimate is about 1.4 % for M/D/1 at rho = 0.5 with 100k
jobs, 2.2 % at rho = 0.8 with 200k jobs, and 0.9 % for the M/M/1 sojourn at rho = 0.5 with
100k jobs, so the resulting tolerances (about 5 %, 9 % and 4 %) are 3.5 to 4 sigma wide.
The device itself is checked *exactly* by replaying the same random inputs through the
Lindley recursion.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import simpy
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoffload.errors import ConfigError
from cryptoffload.sim.core import ProcessGenerator, Simulation
from cryptoffload.sim.devices import FifoDevice, ReconfigurableDevice, reconfig_time_from_bitstream


# -- helpers ----------------------------------------------------------------------------------
def _single_server_queue(
    rho: float, n: int, service: str, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, FifoDevice]:
    """Poisson arrivals (mean service 1 s) into one FIFO server; returns inter-arrival times,
    service times, and the simulated waiting times, in arrival order."""
    sim = Simulation(seed)
    dev = FifoDevice(sim, "server")
    gaps = sim.rng.exponential(1.0 / rho, n)
    services = np.ones(n) if service == "D" else sim.rng.exponential(1.0, n)
    waits = np.empty(n)

    def job(i: int) -> ProcessGenerator:
        timing = yield from dev.execute(float(services[i]), kind="job")
        waits[i] = timing.wait

    def source() -> ProcessGenerator:
        for i in range(n):
            yield sim.env.timeout(float(gaps[i]))
            sim.process(job(i))

    sim.process(source())
    sim.run()
    assert dev.jobs == n
    return gaps, services, waits, dev


def _lindley(gaps: np.ndarray, services: np.ndarray) -> np.ndarray:
    w = np.zeros(len(gaps))
    for i in range(1, len(gaps)):
        w[i] = max(0.0, w[i - 1] + services[i - 1] - gaps[i])
    return w


def _batch_means(x: np.ndarray, batches: int = 20) -> tuple[float, float]:
    """Mean and its standard error from means of contiguous batches (handles autocorrelation:
    at rho = 0.8 the waits decorrelate over ~100 jobs, batches here hold >= 5000)."""
    means = np.array([b.mean() for b in np.array_split(x, batches)])
    return float(means.mean()), float(means.std(ddof=1) / math.sqrt(batches))


# -- queueing closed forms --------------------------------------------------------------------
@pytest.mark.parametrize("rho, n", [(0.5, 100_000), (0.8, 200_000)])
def test_md1_mean_wait_matches_pollaczek_khinchine(rho: float, n: int) -> None:
    gaps, services, waits, dev = _single_server_queue(rho, n, "D", seed=12345)
    # The simulated device is exactly the Lindley recursion on the same inputs ...
    np.testing.assert_allclose(waits, _lindley(gaps, services), rtol=1e-9, atol=1e-9)
    # ... and its mean wait matches Wq = rho * D / (2 (1 - rho)) within the statistics.
    warm = n // 100  # drop the start-empty transient
    mean, se = _batch_means(waits[warm:])
    theory = rho * 1.0 / (2.0 * (1.0 - rho))
    assert se / theory < 0.035, "run too short for the check to mean anything"
    assert abs(mean - theory) < 4.0 * se, (mean, theory, se)
    # Work conservation and utilisation: busy time is exactly the sum of service times.
    assert dev.busy_time == pytest.approx(float(services.sum()), rel=1e-12)
    span = dev.sim.now
    assert dev.utilisation(span) == pytest.approx(rho, rel=0.02)


def test_mm1_mean_sojourn_is_one_over_mu_minus_lambda() -> None:
    rho, n = 0.5, 100_000
    gaps, services, waits, dev = _single_server_queue(rho, n, "M", seed=2024)
    sojourn = (waits + services)[n // 100 :]
    mean, se = _batch_means(sojourn)
    theory = 1.0 / (1.0 - rho)  # mu = 1, lambda = rho
    assert se / theory < 0.02
    assert abs(mean - theory) < 4.0 * se, (mean, theory, se)
    # The recorded per-kind latencies are the same sojourn times.
    lat = dev.sim.metrics.latency("job")
    assert lat.count == n
    assert lat.mean == pytest.approx(float((waits + services).mean()), rel=1e-9)


# -- hand-worked examples ---------------------------------------------------------------------
def _run_jobs(
    servers: int, jobs: list[tuple[float, float]]
) -> tuple[Simulation, FifoDevice, list[tuple[float, float, float]]]:
    """Start each (arrival, duration) job in list order; returns (arrival, start, finish)."""
    sim = Simulation(0)
    dev = FifoDevice(sim, "dev", servers=servers)
    out: list[tuple[float, float, float]] = [(0.0, 0.0, 0.0)] * len(jobs)

    def job(i: int, arrival: float, duration: float) -> ProcessGenerator:
        yield sim.env.timeout(arrival)
        t = yield from dev.execute(duration, kind="k")
        out[i] = (t.arrival, t.start, t.finish)

    for i, (a, d) in enumerate(jobs):
        sim.process(job(i, a, d))
    sim.run()
    return sim, dev, out


def test_single_server_fifo_by_hand() -> None:
    # Arrivals 0, 0.5, 1 with durations 2, 1, 1: starts 0, 2, 3; finishes 2, 3, 4.
    sim, dev, out = _run_jobs(1, [(0.0, 2.0), (0.5, 1.0), (1.0, 1.0)])
    assert out == [(0.0, 0.0, 2.0), (0.5, 2.0, 3.0), (1.0, 3.0, 4.0)]
    assert dev.jobs == 3 and dev.busy_time == 4.0 and sim.now == 4.0
    assert dev.utilisation(4.0) == 1.0
    lat = sim.metrics.latency("k")
    assert (lat.mean, lat.max) == (pytest.approx(2.5), 3.0)  # latencies 2, 2.5, 3
    assert sim.metrics.throughput("k") == pytest.approx(3.0 / 4.0)


def test_two_servers_by_hand() -> None:
    # Jobs of 3, 1, 1, 1 at t=0 on two servers: starts 0, 0, 1, 2; busy 6 s over 2 x 3 s.
    sim, dev, out = _run_jobs(2, [(0.0, 3.0), (0.0, 1.0), (0.0, 1.0), (0.0, 1.0)])
    assert [o[1] for o in out] == [0.0, 0.0, 1.0, 2.0]
    assert [o[2] for o in out] == [3.0, 1.0, 2.0, 3.0]
    assert dev.busy_time == 6.0
    assert dev.utilisation(sim.now) == pytest.approx(1.0)
    assert dev.utilisation(6.0) == pytest.approx(0.5)


def test_busy_time_is_exact_mid_run_and_queue_is_visible() -> None:
    sim = Simulation(0)
    dev = FifoDevice(sim, "d")
    for _ in range(3):
        sim.process(dev.execute(2.0))
    sim.run(until=1.5)
    assert dev.busy_time == 1.5
    assert dev.in_service == 1 and dev.queue_length == 2 and dev.jobs == 0
    sim.run()
    assert dev.busy_time == 6.0 and dev.jobs == 3
    assert sim.metrics.kinds == []  # no kind given: nothing recorded


def test_interrupted_job_is_charged_what_it_used() -> None:
    sim = Simulation(0)
    dev = FifoDevice(sim, "d")

    def victim() -> ProcessGenerator:
        try:
            yield from dev.execute(5.0)
        except simpy.Interrupt:
            pass

    p = sim.process(victim())

    def killer() -> ProcessGenerator:
        yield sim.env.timeout(1.0)
        p.interrupt()

    sim.process(killer())

    def later() -> ProcessGenerator:
        # queued when this process first runs, i.e. after the victim's request
        return (yield from dev.execute(1.0))

    after = sim.process(later())
    sim.run()
    assert dev.busy_time == pytest.approx(2.0)
    assert after.value.start == 1.0 and after.value.finish == 2.0


# -- properties -------------------------------------------------------------------------------
jobs_strategy = st.lists(
    st.tuples(
        st.floats(0.0, 10.0, allow_nan=False),
        st.floats(1e-3, 5.0, allow_nan=False),
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=150, deadline=None)
@given(servers=st.integers(1, 3), jobs=jobs_strategy)
def test_device_is_work_conserving_fifo(servers: int, jobs: list[tuple[float, float]]) -> None:
    jobs = sorted(jobs, key=lambda j: j[0])  # list order == arrival order, ties in list order
    sim, dev, out = _run_jobs(servers, jobs)
    durations = [d for _, d in jobs]
    assert dev.busy_time == pytest.approx(math.fsum(durations), rel=1e-12)
    assert dev.jobs == len(jobs)
    # FIFO over c servers: job i starts when it arrives or when the earliest server frees.
    free = [0.0] * servers
    for (a, d), (arr, start, finish) in zip(jobs, out):
        k = min(range(servers), key=free.__getitem__)
        expected_start = max(a, free[k])
        assert arr == pytest.approx(a, abs=1e-12)
        assert start == pytest.approx(expected_start, rel=1e-9, abs=1e-9)
        assert finish == pytest.approx(expected_start + d, rel=1e-9, abs=1e-9)
        free[k] = expected_start + d
    span = sim.now
    assert dev.utilisation(span) <= 1.0 + 1e-12


# -- validation -------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf])
def test_device_rejects_bad_duration_at_call_time(bad: float) -> None:
    dev = FifoDevice(Simulation(0), "d")
    with pytest.raises(ConfigError):
        dev.execute(bad)


@pytest.mark.parametrize("servers", [0, -1, 1.5, True])
def test_device_rejects_bad_servers(servers: object) -> None:
    with pytest.raises(ConfigError):
        FifoDevice(Simulation(0), "d", servers=servers)  # type: ignore[arg-type]


def test_device_rejects_empty_name() -> None:
    with pytest.raises(ConfigError):
        FifoDevice(Simulation(0), "")


# -- reconfigurable devices -------------------------------------------------------------------
def test_reconfig_time_from_bitstream_virtex2() -> None:
    # A 29,063,072-bit Virtex-II bitstream through an 8-bit port at 66 MHz.
    t = reconfig_time_from_bitstream(29_063_072, 8, 66e6)
    assert t == pytest.approx(29_063_072 / 528e6, rel=1e-12)
    assert t == pytest.approx(0.05504, abs=5e-6)


@pytest.mark.parametrize(
    "args", [(0, 8, 66e6), (1e6, 0, 66e6), (1e6, 8, -1.0), (math.nan, 8, 66e6)]
)
def test_reconfig_time_from_bitstream_rejects(args: tuple[float, float, float]) -> None:
    with pytest.raises(ConfigError):
        reconfig_time_from_bitstream(*args)


def test_reconfigure_then_execute_ordering_and_accounting() -> None:
    sim = Simulation(0)
    fpga = ReconfigurableDevice(sim, "fpga", slots=2, reconfig_time=0.25, initial={"aes"})
    assert fpga.loaded == frozenset({"aes"}) and not fpga.reconfiguring and not fpga.busy
    rc = sim.process(fpga.reconfigure({"des", "3des"}))
    job = sim.process(fpga.execute("des", 1.0, kind="des"))  # accepted: queued behind rc
    assert fpga.target == frozenset({"des", "3des"})
    sim.run(until=0.1)
    assert fpga.reconfiguring and not fpga.busy
    assert fpga.loaded == frozenset()  # full reconfiguration: nothing usable meanwhile
    assert fpga.reconfig_until == 0.25
    assert fpga.reconfig_time_spent == pytest.approx(0.1)
    assert fpga.target == frozenset({"des", "3des"})  # what is being written counts
    late = sim.process(fpga.execute("3des", 0.5))  # accepted while reconfiguring
    with pytest.raises(ConfigError):
        fpga.execute("aes", 0.5)  # the old set is gone
    sim.run(until=0.5)
    assert fpga.busy and not fpga.reconfiguring
    assert fpga.loaded == frozenset({"des", "3des"})
    sim.run()
    assert (rc.value.start, rc.value.finish) == (0.0, 0.25)
    assert (job.value.arrival, job.value.start, job.value.finish) == (0.0, 0.25, 1.25)
    assert (late.value.arrival, late.value.start, late.value.finish) == (0.1, 1.25, 1.75)
    assert fpga.reconfig_count == 1 and fpga.reconfig_time_spent == 0.25
    assert fpga.busy_time == 1.5 and fpga.jobs == 2  # reconfiguration is not busy time
    assert fpga.utilisation(sim.now) == pytest.approx(1.5 / 1.75)
    assert sim.metrics.latency("des").mean == 1.25
    rep = sim.summary()["resources"]["fpga"]
    assert rep["reconfig_count"] == 1 and rep["reconfig_time"] == 0.25
    assert rep["loaded"] == ["3des", "des"]


def test_jobs_queued_before_a_reconfiguration_use_the_old_set() -> None:
    sim = Simulation(0)
    fpga = ReconfigurableDevice(sim, "fpga", slots=1, reconfig_time=0.5, initial=["aes"])
    first = sim.process(fpga.execute("aes", 1.0))
    sim.process(fpga.reconfigure(["des"]))
    with pytest.raises(ConfigError):
        fpga.execute("aes", 1.0)  # still loaded now, but gone by the time it would run
    last = sim.process(fpga.execute("des", 1.0))
    sim.run()
    assert (first.value.start, first.value.finish) == (0.0, 1.0)
    assert (last.value.start, last.value.finish) == (1.5, 2.5)
    assert fpga.reconfig_until == 1.5
    assert fpga.busy_time == 2.0 and fpga.reconfig_time_spent == 0.5


def test_executing_an_unloaded_function_raises() -> None:
    fpga = ReconfigurableDevice(Simulation(0), "fpga", slots=2, reconfig_time=0.05)
    with pytest.raises(ConfigError, match="not loaded"):
        fpga.execute("aes", 1.0)
    fpga2 = ReconfigurableDevice(Simulation(0), "f2", slots=2, reconfig_time=0.05, initial=[1])
    with pytest.raises(ConfigError):
        fpga2.execute(2, 1.0)


def test_reconfigurable_validation() -> None:
    sim = Simulation(0)
    with pytest.raises(ConfigError):
        ReconfigurableDevice(sim, "a", slots=0, reconfig_time=0.1)
    with pytest.raises(ConfigError):
        ReconfigurableDevice(sim, "b", slots=1, reconfig_time=-0.1)
    with pytest.raises(ConfigError):
        ReconfigurableDevice(sim, "c", slots=1, reconfig_time=math.nan)
    with pytest.raises(ConfigError):
        ReconfigurableDevice(sim, "d", slots=1, reconfig_time=0.1, initial={"aes", "des"})
    fpga = ReconfigurableDevice(sim, "e", slots=2, reconfig_time=0.0, initial={"aes"})
    with pytest.raises(ConfigError):
        fpga.reconfigure({"a", "b", "c"})
    with pytest.raises(ConfigError):
        fpga.reconfigure("aes")  # a string is not a set of functions
    with pytest.raises(ConfigError):
        fpga.execute("aes", 0.0)


def test_zero_time_reconfiguration_is_allowed() -> None:
    sim = Simulation(0)
    fpga = ReconfigurableDevice(sim, "fpga", slots=1, reconfig_time=0.0, initial=["a"])
    sim.process(fpga.reconfigure(["b"]))
    job = sim.process(fpga.execute("b", 2.0))
    sim.run()
    assert job.value.finish == 2.0
    assert fpga.reconfig_count == 1 and fpga.reconfig_time_spent == 0.0


def test_interrupted_reconfiguration_leaves_the_device_blank() -> None:
    sim = Simulation(0)
    fpga = ReconfigurableDevice(sim, "fpga", slots=1, reconfig_time=1.0, initial=["a"])

    def reconfig() -> ProcessGenerator:
        try:
            yield from fpga.reconfigure(["b"])
        except simpy.Interrupt:
            pass

    p = sim.process(reconfig())
    sim.run(until=0.4)
    p.interrupt()
    sim.run()
    assert fpga.loaded == frozenset() and fpga.target == frozenset()
    assert fpga.reconfig_time_spent == pytest.approx(0.4)
    assert fpga.reconfig_until == pytest.approx(0.4)
    with pytest.raises(ConfigError):
        fpga.execute("b", 1.0)
