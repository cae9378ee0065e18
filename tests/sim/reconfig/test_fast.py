"""The compiled fast path against closed forms (held to the SimPy reference model, policy by
policy, in tests/policies/test_reconfig.py)."""

from __future__ import annotations

import numpy as np
import pytest

from cryptoffload.sim.reconfig import fast

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
