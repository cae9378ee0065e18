"""Tests of the management-node simulation and the clients-per-core planner of TLS offload
(``sim/tls/node.py``): the NIC line-rate bound, M/D/1 against Pollaczek-Khinchine, the planner's
properties, provenance and bad calls. Measured inputs are ILLUSTRATIVE, as in test_smartnic.py.
"""

from __future__ import annotations

import pytest

from cryptoffload.errors import ConfigError
from cryptoffload.sim.tls.smartnic import SERVING_MODES, MeasuredCosts, TlsCostModel
from cryptoffload.sim.tls.node import clients_per_core, plan_modes, simulate_node

KB2 = 2048
MB64 = 64 * 1024 * 1024
PLAIN = {KB2: 0.05e-3, MB64: 8e-3}
TLS = {KB2: 0.25e-3, MB64: 60e-3}
WIRE_RATE = 25e9 / 8 * 1448 / (1448 + 90)  # TCP payload bytes/s of 25 GbE


def model(**overrides: object) -> TlsCostModel:
    return TlsCostModel.from_profile(None, MeasuredCosts(PLAIN, TLS, provenance="illustrative"), **overrides)


# -- capacity and the NIC line-rate bound -----------------------------------------------------
def test_nic_line_rate_bounds_64MB_files() -> None:
    m = model()
    wire = MB64 + (MB64 // 16384) * 22
    cap = m.capacity("ktls-nic", MB64, cores=4)
    assert cap.bound == "nic_line_rate"
    assert cap.requests_per_s == pytest.approx(WIRE_RATE / wire)
    assert cap.cpu_bound_rps > cap.requests_per_s
    assert cap.per_core_requests_per_s == pytest.approx(1 / m.cpu_s("ktls-nic", MB64))
    # one core of user-space TLS is CPU-bound at 1 / 60 ms
    tls = m.capacity("tls", MB64, cores=1)
    assert tls.bound == "cpu" and tls.requests_per_s == pytest.approx(1 / 60e-3)
    # the simulated NIC saturates at the bound: offered 95 % of it, link ~95 % busy
    r = simulate_node(m, "ktls-nic", MB64, arrival_rate=0.95 * cap.requests_per_s, cores=4,
                      n_requests=600, warmup_fraction=0.0)
    assert r.nic_utilisation == pytest.approx(0.95, abs=0.07)
    assert r.throughput_rps <= cap.requests_per_s * 1.02


def test_optional_record_limit_bounds_capacity_and_runs() -> None:
    m = model(max_records_per_s=1000.0)
    cap = m.capacity("ktls-nic", KB2, cores=2)
    assert cap.bound == "nic_records" and cap.requests_per_s == pytest.approx(1000.0)
    assert m.capacity("tls", KB2, cores=2).bound == "cpu"  # the NIC engine is not used
    r = simulate_node(m, "ktls-nic", KB2, arrival_rate=500.0, cores=2, n_requests=1000)
    assert r.throughput_rps == pytest.approx(500.0, rel=0.15)


# -- simulation against a closed form ---------------------------------------------------------
def test_single_core_md1_matches_pollaczek_khinchine() -> None:
    m = model()
    service = m.cpu_s("plain", KB2)
    rho = 0.6
    lam = rho / service
    transfer = KB2 / m.wire_rate_Bps
    expected = service + rho * service / (2 * (1 - rho)) + transfer  # M/D/1 mean sojourn
    r = simulate_node(m, "plain", KB2, arrival_rate=lam, cores=1, n_requests=20000, seed=3)
    assert r.mean_latency_s == pytest.approx(expected, rel=0.04)
    assert r.cpu_utilisation == pytest.approx(rho, rel=0.03)
    assert r.throughput_rps == pytest.approx(lam, rel=0.03)
    assert r.offered_cpu_load == pytest.approx(rho)


# -- planner ----------------------------------------------------------------------------------
def test_planner_gives_more_clients_to_more_cores() -> None:
    m = model()
    kw = dict(model=m, n_requests=1500)
    one = clients_per_core("tls", KB2, 2e-3, 20.0, cores=1, **kw)
    two = clients_per_core("tls", KB2, 2e-3, 20.0, cores=2, **kw)
    assert 0 < one.clients < two.clients
    for plan in (one, two):  # never beyond the utilisation guard (95 % of capacity)
        assert plan.clients <= 0.95 * plan.capacity_clients
    loose = clients_per_core("plain", KB2, 1.0, 20.0, cores=1, **kw)  # only the guard binds
    assert loose.clients == int(0.95 * loose.capacity_clients) and loose.runs > 0
    assert one.p99_latency_s is not None and one.p99_latency_s <= 2e-3


def test_offload_never_needs_more_cpu_than_user_space_tls_when_fractions_below_one() -> None:
    for fk in (0.0, 0.5, 0.99):
        for fn in (0.0, 0.5, 0.99):
            # without the bounce copy (which the NIC path adds on Linux < 5.19)
            m = model(ktls_fraction=fk, nic_fraction=fn, handoff_cpu_share=0.0, bounce_copy_s_per_byte=0.0)
            for s in (KB2, 300_000, MB64):
                tls, ktls, nic = (m.cpu_s(x, s) for x in ("tls", "ktls", "ktls-nic"))
                assert nic <= ktls + 1e-15 and ktls <= tls + 1e-15
    # nominal profile, large files: the planner finds at least as many clients with the DPU
    m = model()
    kw = dict(model=m, cores=1, n_requests=300)
    tls = clients_per_core("tls", MB64, 0.5, 1.0, **kw)
    nic = clients_per_core("ktls-nic", MB64, 0.5, 1.0, **kw)
    assert nic.clients >= tls.clients > 0
    assert nic.provenance == "simulated" and tls.provenance == "illustrative"


def test_plan_modes_plans_every_mode() -> None:
    plans = plan_modes(KB2, 10e-3, 20.0, model=model(), n_requests=300)
    assert set(plans) == set(SERVING_MODES)
    # the NIC's per-connection set-up holds the worker (cpu_share 1): fewer 2 KB clients than kTLS
    assert plans["ktls-nic"].clients < plans["ktls"].clients


def test_simulated_provenance_follows_the_cost_model() -> None:
    m = TlsCostModel.from_profile(None, MeasuredCosts(PLAIN, TLS))  # default: "measured"
    for mode in SERVING_MODES:
        want = "measured" if mode in ("plain", "tls") else "simulated"
        assert simulate_node(m, mode, KB2, 100.0, n_requests=50).provenance == want


def test_bad_calls_are_config_errors() -> None:
    m = model()
    with pytest.raises(ConfigError):
        simulate_node(m, "tls", KB2, arrival_rate=0.0)
    with pytest.raises(ConfigError):
        simulate_node(m, "tls", KB2, arrival_rate=10.0, warmup_fraction=1.0)
    with pytest.raises(ConfigError):
        clients_per_core("tls", KB2, 0.0, 1.0, model=m)
    with pytest.raises(ConfigError):
        clients_per_core("tls", KB2, 1e-3, -1.0, model=m)
    with pytest.raises(ConfigError):
        clients_per_core("tls", KB2, 1e-3, 1.0, model=m, max_utilisation=1.5)
