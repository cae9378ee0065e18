"""Tests of fair bandwidth sharing against closed forms and a brute-force reference.

Processor sharing has simple closed forms when the arrival pattern is simple (equal shares
while the set of active flows does not change), so the hand-worked cases below give exact
completion times; the property tests compare random patterns with a direct time-stepping
reference written independently of the event-driven implementation.
"""

from __future__ import annotations

import math

import pytest
import simpy
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoffload.errors import ConfigError
from cryptoffload.sim.core import ProcessGenerator, Simulation
from cryptoffload.sim.links import SharedLink


def _run(
    bandwidth: float,
    flows: list[tuple[float, float]],
    latency: float = 0.0,
    max_flows: int | None = None,
) -> tuple[Simulation, SharedLink, list[float]]:
    """Start each (start_time, nbytes) transfer; returns the completion times in list order."""
    sim = Simulation(0)
    link = SharedLink(sim, "link", bandwidth=bandwidth, latency=latency, max_flows=max_flows)
    done = [math.nan] * len(flows)

    def flow(i: int, start: float, nbytes: float) -> ProcessGenerator:
        if start > 0:
            yield sim.env.timeout(start)
        t = yield from link.transfer(nbytes, kind="xfer")
        done[i] = t.finish

    for i, (start, nbytes) in enumerate(flows):
        sim.process(flow(i, start, nbytes))
    sim.run()
    return sim, link, done


# -- closed forms -----------------------------------------------------------------------------
@pytest.mark.parametrize("start", [0.0, 3.25])
def test_single_transfer_is_latency_plus_serialisation(start: float) -> None:
    bw, lat, nbytes = 12.5e9, 1.7e-6, 24 * 1024
    sim, link, done = _run(bw, [(start, nbytes)], latency=lat)
    assert done[0] - start == pytest.approx(lat + nbytes / bw, rel=1e-12)
    assert link.busy_time == pytest.approx(nbytes / bw, rel=1e-12)  # latency uses no bandwidth
    assert link.bytes_moved == nbytes and link.transfers == 1
    assert sim.metrics.latency("xfer").mean == pytest.approx(lat + nbytes / bw, rel=1e-12)


def test_two_equal_flows_share_fairly() -> None:
    bw, s = 8e9, 1e6
    _, link, done = _run(bw, [(0.0, s), (0.0, s)])
    assert done == [pytest.approx(2 * s / bw, rel=1e-12)] * 2
    assert link.busy_time == pytest.approx(2 * s / bw, rel=1e-12)


def test_flows_of_size_s_and_2s() -> None:
    # Both at bw/2 until the small one ends at 2S/bw; the big one then has S left at bw.
    bw, s, lat = 1e9, 3e5, 2e-6
    _, link, done = _run(bw, [(0.0, s), (0.0, 2 * s)], latency=lat)
    assert done[0] == pytest.approx(2 * s / bw + lat, rel=1e-12)
    assert done[1] == pytest.approx(3 * s / bw + lat, rel=1e-12)
    assert link.bytes_moved == pytest.approx(3 * s, rel=1e-12)


def test_flow_joining_an_active_one() -> None:
    # bw = 10 B/s. A: 100 B at t=0, alone until t=4 (40 B sent, 60 left).
    # B: 30 B at t=4; both at 5 B/s, B ends at 4 + 30/5 = 10, A has 60 - 30 = 30 left,
    # then alone at 10 B/s: A ends at 13. With latency 0.5 both shift by 0.5.
    _, link, done = _run(10.0, [(0.0, 100.0), (4.0, 30.0)], latency=0.5)
    assert done[1] == pytest.approx(10.5, rel=1e-12)
    assert done[0] == pytest.approx(13.5, rel=1e-12)
    assert link.busy_time == pytest.approx(13.0, rel=1e-12)


def test_three_staggered_flows() -> None:
    # bw = 1. A=6 at 0; B=2 at 1; C=1 at 2.
    # [0,1]: A alone, A=5 left.  [1,2]: A,B at 1/2: A=4.5, B=1.5.
    # [2,5]: three at 1/3: C ends after 3 s (t=5); A=3.5, B=0.5.
    # [5,6]: two at 1/2: B ends at t=6; A=3.  [6,9]: A alone, ends at t=9.
    _, _, done = _run(1.0, [(0.0, 6.0), (1.0, 2.0), (2.0, 1.0)])
    assert done == [pytest.approx(9.0), pytest.approx(6.0), pytest.approx(5.0)]


def test_idle_gap_between_busy_periods() -> None:
    _, link, done = _run(2.0, [(0.0, 4.0), (10.0, 4.0)])
    assert done == [pytest.approx(2.0), pytest.approx(12.0)]
    assert link.busy_time == pytest.approx(4.0)
    assert link.utilisation(12.0) == pytest.approx(4.0 / 12.0)


def test_max_flows_queues_in_fifo_order() -> None:
    bw, s = 100.0, 50.0
    sim, link, done = _run(bw, [(0.0, s), (0.0, s), (0.0, s)], latency=0.1, max_flows=1)
    # One at a time at full rate; the latency does not hold the slot.
    assert done == [pytest.approx(0.6), pytest.approx(1.1), pytest.approx(1.6)]
    assert link.busy_time == pytest.approx(1.5)


def test_bytes_and_busy_time_are_exact_mid_transfer() -> None:
    sim = Simulation(0)
    link = SharedLink(sim, "l", bandwidth=10.0)
    sim.process(link.transfer(100.0))
    sim.process(link.transfer(100.0))
    sim.run(until=4.0)
    assert link.active_flows == 2
    assert link.bytes_moved == pytest.approx(40.0)
    assert link.busy_time == pytest.approx(4.0)
    sim.run()
    assert link.bytes_moved == pytest.approx(200.0) and link.active_flows == 0


def test_interrupted_transfer_frees_its_share() -> None:
    # Two 100 B flows at 10 B/s; A is interrupted at t=4 after 20 B. B has 80 B left, alone.
    sim = Simulation(0)
    link = SharedLink(sim, "l", bandwidth=10.0)

    def a() -> ProcessGenerator:
        try:
            yield from link.transfer(100.0)
        except simpy.Interrupt:
            pass

    pa = sim.process(a())
    pb = sim.process(link.transfer(100.0))
    sim.run(until=4.0)
    pa.interrupt()
    sim.run(until=pb)
    assert pb.value.finish == pytest.approx(12.0)
    assert link.bytes_moved == pytest.approx(120.0)
    assert link.busy_time == pytest.approx(12.0)
    assert link.transfers == 1


# -- properties -------------------------------------------------------------------------------
def _reference_ps(bandwidth: float, flows: list[tuple[float, float]]) -> list[float]:
    """Processor sharing by direct stepping from event to event (no virtual time)."""
    pending = sorted(range(len(flows)), key=lambda i: flows[i][0])
    remaining: dict[int, float] = {}
    finish = [math.nan] * len(flows)
    t = 0.0
    while pending or remaining:
        next_arrival = flows[pending[0]][0] if pending else math.inf
        if remaining:
            n = len(remaining)
            i_min = min(remaining, key=remaining.__getitem__)
            next_done = t + remaining[i_min] * n / bandwidth
        else:
            next_done = math.inf
        t_next = min(next_arrival, next_done)
        for i in remaining:
            remaining[i] -= (t_next - t) * bandwidth / len(remaining)
        t = t_next
        if next_done <= next_arrival:
            finish[i_min] = t
            del remaining[i_min]
            for i in [j for j, r in remaining.items() if r <= 1e-12 * flows[j][1]]:
                finish[i] = t
                del remaining[i]
        else:
            while pending and flows[pending[0]][0] <= t:
                i = pending.pop(0)
                remaining[i] = flows[i][1]
    return finish


sizes = st.floats(1.0, 1e6, allow_nan=False)
bandwidths = st.floats(1e3, 1e10, allow_nan=False)
latencies = st.floats(0.0, 1e-3, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(
    bw=bandwidths,
    lat=latencies,
    flows=st.lists(st.tuples(st.floats(0.0, 2.0, allow_nan=False), sizes), min_size=1, max_size=12),
)
def test_random_transfers_match_reference_and_conserve_work(
    bw: float, lat: float, flows: list[tuple[float, float]]
) -> None:
    # Scale start times to the transfers' own time scale so that flows really overlap.
    scale = max(b for _, b in flows) / bw
    flows = [(s * scale, b) for s, b in flows]
    sim, link, done = _run(bw, flows, latency=lat)
    total = math.fsum(b for _, b in flows)
    assert link.busy_time >= total / bw * (1 - 1e-9)
    # Work conservation: whenever a flow is active the whole bandwidth is in use.
    assert link.busy_time == pytest.approx(total / bw, rel=1e-9)
    assert link.bytes_moved == pytest.approx(total, rel=1e-9)
    expected = _reference_ps(bw, flows)
    for got, want in zip(done, expected):
        assert got == pytest.approx(want + lat, rel=1e-9, abs=1e-9 * scale)
    for (start, b), got in zip(flows, done):
        assert got >= start + b / bw + lat - 1e-9 * scale  # never faster than alone


@settings(max_examples=200, deadline=None)
@given(bw=bandwidths, lat=latencies, nbytes=st.lists(sizes, min_size=1, max_size=20))
def test_simultaneous_transfers_closed_form(bw: float, lat: float, nbytes: list[float]) -> None:
    _, link, done = _run(bw, [(0.0, b) for b in nbytes], latency=lat)
    total = math.fsum(nbytes)
    assert max(done) == pytest.approx(total / bw + lat, rel=1e-9)
    assert link.busy_time == pytest.approx(total / bw, rel=1e-9)
    # k-th smallest (1-based) ends when every flow has received s_(k): sum_{j<k} s_(j) +
    # (n - k + 1) s_(k) bytes have crossed the link.
    order = sorted(range(len(nbytes)), key=nbytes.__getitem__)
    s = [nbytes[i] for i in order]
    n = len(s)
    for k, i in enumerate(order):
        moved = math.fsum(s[:k]) + (n - k) * s[k]
        assert done[i] == pytest.approx(moved / bw + lat, rel=1e-9)


# -- validation -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs",
    [
        {"bandwidth": 0.0},
        {"bandwidth": -1.0},
        {"bandwidth": math.nan},
        {"bandwidth": math.inf},
        {"bandwidth": 1.0, "latency": -1e-9},
        {"bandwidth": 1.0, "latency": math.nan},
        {"bandwidth": 1.0, "max_flows": 0},
        {"bandwidth": 1.0, "max_flows": 2.5},
    ],
)
def test_link_rejects_bad_parameters(kwargs: dict[str, float]) -> None:
    with pytest.raises(ConfigError):
        SharedLink(Simulation(0), "l", **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("nbytes", [0, -5.0, math.nan, math.inf])
def test_transfer_rejects_bad_sizes_at_call_time(nbytes: float) -> None:
    link = SharedLink(Simulation(0), "l", bandwidth=1.0)
    with pytest.raises(ConfigError):
        link.transfer(nbytes)


@settings(max_examples=100, deadline=None)
@given(
    bw=bandwidths,
    lat=latencies,
    flows=st.lists(st.tuples(st.floats(0.0, 2.0, allow_nan=False), sizes), min_size=1, max_size=10),
)
def test_single_flow_link_is_a_fifo_queue(
    bw: float, lat: float, flows: list[tuple[float, float]]
) -> None:
    scale = max(b for _, b in flows) / bw
    flows = sorted(((s * scale, b) for s, b in flows), key=lambda f: f[0])
    _, link, done = _run(bw, flows, latency=lat, max_flows=1)
    free = 0.0
    for (start, b), got in zip(flows, done):
        free = max(start, free) + b / bw
        assert got == pytest.approx(free + lat, rel=1e-9, abs=1e-9 * scale)
    assert link.busy_time == pytest.approx(math.fsum(b for _, b in flows) / bw, rel=1e-9)
