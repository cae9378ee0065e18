"""The compiled fast path against closed forms and against the SimPy reference model."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoffload.policies.reconfig import POLICIES, PolicyContext, make_policy
from cryptoffload.sim import reconfig_fast as fast
from cryptoffload.sim.reconfig_platform import load_reconfig_platform
from cryptoffload.sim.reconfig_server import ServerCosts, simulate_simpy
from cryptoffload.workloads.web_trace import generate_trace

K = 10
SW = np.full(K, 1e-6)  # 1 us per byte in software
HW = np.full(K, 1e-7)  # 10x faster on the FPGA


def test_software_only_single_request_is_its_service_time():
    r = fast.run_kernel(np.array([0.0]), np.array([3]), np.array([1000.0]), SW, HW, 5e-7, 0.06, fast.SOFTWARE)
    assert r.latency[0] == pytest.approx(1000 * 1e-6 + 5e-7, rel=1e-12)
    assert r.sw_busy == pytest.approx(r.latency[0]) and r.fpga_busy == 0


def test_fifo_queue_closed_form():
    # n requests arriving together: the i-th waits for the i-1 before it (D/D/1 batch)
    n, d = 50, 1000 * 1e-6
    r = fast.run_kernel(np.zeros(n), np.zeros(n, dtype=int), np.full(n, 1000.0), SW, HW, 0.0, 0.06, fast.SOFTWARE)
    assert np.allclose(r.latency, d * np.arange(1, n + 1), rtol=1e-12)


def test_md1_mean_wait_on_the_software_path():
    # Poisson arrivals, deterministic service: Wq = rho D / (2 (1 - rho))
    rng = np.random.default_rng(5)
    n, lam, d = 200_000, 600.0, 1e-3
    t = np.cumsum(rng.exponential(1 / lam, n))
    r = fast.run_kernel(t, np.zeros(n, dtype=int), np.full(n, 1000.0), SW, HW, 0.0, 0.06, fast.SOFTWARE)
    rho = lam * d
    wq = rho * d / (2 * (1 - rho))
    assert (r.latency - d).mean() == pytest.approx(wq, rel=0.05)


def test_hardware_reconfigures_on_every_miss_and_waits():
    t = np.array([0.0, 1.0, 2.0, 3.0])
    c = np.array([0, 5, 0, 6])
    r = fast.run_kernel(t, c, np.full(4, 1000.0), SW, HW, 0.0, 0.06, fast.HARDWARE, initial=(0, 1))
    # 5 is not loaded: reconfigure (60 ms) -> {5, 0}; 0 is then loaded; 6 evicts the LRU (0)
    assert r.n_reconfig == 2
    assert r.latency[0] == pytest.approx(1e-4)
    assert r.latency[1] == pytest.approx(0.06 + 1e-4)
    assert r.latency[2] == pytest.approx(1e-4)
    assert r.latency[3] == pytest.approx(0.06 + 1e-4)
    assert r.on_fpga.all() and r.sw_busy == 0


def test_overlap_encrypts_in_software_while_reconfiguring():
    t = np.array([0.0, 0.001, 0.2])
    c = np.array([5, 5, 5])
    pa, pb = np.array([5, 5, 5]), np.array([6, 6, 6])
    r = fast.run_kernel(t, c, np.full(3, 1000.0), SW, HW, 0.0, 0.06, fast.OVERLAP, pa, pb, initial=(0, 1))
    assert r.n_reconfig == 1
    assert not r.on_fpga[0] and not r.on_fpga[1]  # miss, then still reconfiguring
    assert r.on_fpga[2]  # the pair {5, 6} is loaded by t = 0.06
    assert r.latency[1] == pytest.approx(1e-3)  # waited 0 (first finished at 1 ms), 1 ms service


def test_overlap_does_not_reconfigure_to_the_pair_already_loaded():
    t = np.array([0.0, 1.0])
    c = np.array([7, 7])
    pa, pb = np.array([1, 1]), np.array([0, 0])  # prediction == loaded (order ignored)
    r = fast.run_kernel(t, c, np.full(2, 100.0), SW, HW, 0.0, 0.06, fast.OVERLAP, pa, pb, initial=(0, 1))
    assert r.n_reconfig == 0 and not r.on_fpga.any()


def test_fixed_set():
    fixed = np.zeros(K, dtype=bool)
    fixed[[2, 3]] = True
    c = np.array([2, 4, 3])
    r = fast.run_kernel(np.array([0.0, 1.0, 2.0]), c, np.full(3, 10.0), SW, HW, 0.0, 0.06, fast.FIXED, fixed=fixed)
    assert list(r.on_fpga) == [True, False, True]


def test_parallel_is_never_slower_than_one_server_when_both_can_serve():
    rng = np.random.default_rng(1)
    n = 5000
    t = np.cumsum(rng.exponential(1e-4, n))
    c = np.zeros(n, dtype=int)
    s = rng.exponential(1000, n)
    pa, pb = np.zeros(n, dtype=int), np.ones(n, dtype=int)
    seq = fast.run_kernel(t, c, s, SW, HW, 0.0, 0.06, fast.OVERLAP, pa, pb, initial=(0, 1))
    par = fast.run_kernel(t, c, s, SW, HW, 0.0, 0.06, fast.PARALLEL, pa, pb, initial=(0, 1))
    assert par.latency.mean() <= seq.latency.mean()
    assert 0 < par.sw_busy  # the host took some of the load


@pytest.fixture(scope="module")
def small_world():
    plat = load_reconfig_platform()
    tr = generate_trace(3000, seed=11)
    hist = generate_trace(3000, seed=12)
    return plat, tr, hist


@pytest.mark.parametrize("name", list(POLICIES))
@pytest.mark.parametrize("rate", [20.0, 400.0, 5000.0])
def test_fast_path_equals_simpy_model(small_world, name, rate):
    plat, tr, hist = small_world
    trr = tr.rescaled(rate)
    c = np.asarray(tr.cipher, dtype=np.int64)
    s = np.asarray(tr.size, dtype=np.float64)
    ctx = PolicyContext(np.asarray(hist.cipher, dtype=np.int64), np.asarray(hist.size), c,
                        np.asarray(tr.size), plat.slices_pct, 3, plat.k, window=200_000)
    pol = make_policy(name)
    pol.prepare(ctx)
    costs = ServerCosts(plat.sw_seconds_per_byte, plat.fpga_seconds_per_byte, plat.packet_overhead, plat.reconfig_time)
    a = fast.run_kernel(np.asarray(trr.time), c, s, plat.sw_seconds_per_byte, plat.fpga_seconds_per_byte,
                        plat.packet_overhead, plat.reconfig_time, **pol.kernel_args())
    b = simulate_simpy(np.asarray(trr.time), c, s, costs, pol)
    assert np.array_equal(a.latency, b.latency)
    assert np.array_equal(a.on_fpga, b.on_fpga)
    assert a.n_reconfig == b.n_reconfig
    assert a.sw_busy == pytest.approx(b.sw_busy, rel=1e-9)
    assert a.fpga_busy == pytest.approx(b.fpga_busy, rel=1e-9)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 0.01), st.integers(0, 3), st.integers(1, 100_000)), min_size=1, max_size=40),
       st.sampled_from(["software", "hardware", "nopredict", "fix5", "parallel"]))
def test_fast_equals_simpy_on_random_small_traces(reqs, name):
    plat = load_reconfig_platform()
    t = np.cumsum([g for g, _, _ in reqs])
    t -= t[0]
    c = np.array([x for _, x, _ in reqs], dtype=np.int64)
    s = np.array([x for _, _, x in reqs], dtype=np.float64)
    ctx = PolicyContext(c, s.astype(np.int64), c, s.astype(np.int64), plat.slices_pct, 1, plat.k, window=50_000)
    pol = make_policy(name)
    pol.prepare(ctx)
    costs = ServerCosts(plat.sw_seconds_per_byte, plat.fpga_seconds_per_byte, plat.packet_overhead, plat.reconfig_time)
    a = fast.run_kernel(t, c, s, plat.sw_seconds_per_byte, plat.fpga_seconds_per_byte, plat.packet_overhead,
                        plat.reconfig_time, **pol.kernel_args())
    b = simulate_simpy(t, c, s, costs, pol)
    assert np.array_equal(a.latency, b.latency)
