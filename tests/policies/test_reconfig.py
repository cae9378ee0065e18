"""Reconfiguration policies: each one's readable rule (``decide``, what the SimPy model and a
real proxy call) gives exactly the compiled fast path's results (``kernel_args``), on the
study's platform and on random small traces; the table, its refusals and the preparation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoffload.errors import ConfigError
from cryptoffload.policies.reconfig import (
    INTERVAL_POLICIES, PAPER_POLICIES, POLICIES, BEYOND_POLICIES, FpgaView, PolicyContext, make_policy,
    prepare_policies, run_policy, same_pair)
from cryptoffload.sim.reconfig import fast
from cryptoffload.sim.reconfig.platform import load_reconfig_platform
from cryptoffload.sim.reconfig.server import ServerCosts, simulate_simpy
from cryptoffload.workloads.web_trace import generate_trace


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


def test_the_table_and_unknown_names() -> None:
    assert set(PAPER_POLICIES) | set(BEYOND_POLICIES) == set(POLICIES)
    assert set(INTERVAL_POLICIES) <= set(POLICIES)
    assert make_policy("PREDICT").name == "predict"
    with pytest.raises(ConfigError, match="unknown policy 'lru' \\(known: software, hardware"):
        make_policy("lru")
    assert same_pair((1, 2), (2, 1)) and same_pair((3, 3), (3, 3)) and not same_pair((1, 2), (1, 3))


def test_decision_rules() -> None:
    plat = load_reconfig_platform()
    hist = generate_trace(400, seed=3)
    c = np.asarray(hist.cipher, dtype=np.int64)
    s = np.asarray(hist.size, dtype=np.int64)
    ctx = PolicyContext(c, s, c, s, plat.slices_pct, 1, plat.k, window=50_000)
    fix5 = make_policy("fix5")
    fix5.prepare(ctx)
    assert fix5.fixed.sum() == 5 and plat.slices_pct[fix5.fixed].max() <= plat.slices_pct[~fix5.fixed].min()
    hw = make_policy("hardware")
    miss = hw.decide(0, 7, FpgaView(0.0, (0, 1), 0.0))
    assert (miss.run_on, miss.reconfigure_to, miss.blocking) == ("fpga", (7, -1), True)
    pred = make_policy("predict")
    pred.prepare(ctx)
    busy = pred.decide(0, 0, FpgaView(0.0, (0, 1), reconfig_until=1.0))
    assert busy.run_on == "software" and busy.reconfigure_to is None      # never while reconfiguring
    assert pred.decide(0, 1, FpgaView(2.0, (0, 1), 1.0)).run_on == "fpga"
    with pytest.raises(ConfigError, match="service-time estimates"):
        make_policy("parallel").decide(0, 0, FpgaView(0.0, (0, 1), 0.0))


def test_prepare_policies_uses_each_policys_interval_and_run_policy_the_fast_path() -> None:
    plat = load_reconfig_platform()
    tr, hist = generate_trace(1500, seed=21), generate_trace(1500, seed=22)
    pols = prepare_policies(["predict", "predict-5mb", "predict-online"], tr, hist, plat, seed=1,
                            window=200_000, decay=0.5)
    assert pols["predict-online"].decay == 0.5
    fixed = make_policy("predict")
    fixed.prepare(PolicyContext(np.asarray(hist.cipher, dtype=np.int64), np.asarray(hist.size, dtype=np.int64),
                                np.asarray(tr.cipher, dtype=np.int64), np.asarray(tr.size, dtype=np.int64),
                                plat.slices_pct, 1, plat.k, window=5 * 1024 * 1024))
    assert np.array_equal(pols["predict-5mb"].pred_a, fixed.pred_a)   # its own 5 MB, not the 200 kB asked
    t = np.asarray(tr.rescaled(500.0).time)
    a = run_policy(pols["predict"], t, tr, plat)
    b = fast.run_kernel(t, np.asarray(tr.cipher, dtype=np.int64), np.asarray(tr.size, dtype=np.float64),
                        plat.sw_seconds_per_byte, plat.fpga_seconds_per_byte, plat.packet_overhead,
                        plat.reconfig_time, **pols["predict"].kernel_args())
    assert np.array_equal(a.latency, b.latency) and a.n_reconfig == b.n_reconfig
