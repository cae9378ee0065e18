"""Tests of the TLS-offload (SmartNIC / kTLS) cost model, node simulation and planner (seed 004).

Closed forms first (M/D/1 against Pollaczek-Khinchine, the NIC line-rate bound, the model's
equations computed by hand), then the properties the planner must have, then provenance and
the errors a user can provoke. The measured inputs here are ILLUSTRATIVE numbers, not
measurements: plain 0.05 ms / 8 ms and tls 0.25 ms / 60 ms per 2 KB / 64 MB request.
"""

from __future__ import annotations

import math
import tomllib

import pytest
import tomli_w

from cryptoffload.errors import ConfigError, ProfileError
from cryptoffload.profiles.loader import builtin_profile_path, load_profile
from cryptoffload.sim.smartnic import (
    MODES,
    REQUIRED_PROFILE_FIELDS,
    MeasuredCosts,
    TlsCostModel,
    clients_per_core,
    simulate_node,
)

KB2 = 2048
MB64 = 64 * 1024 * 1024
PLAIN = {KB2: 0.05e-3, MB64: 8e-3}
TLS = {KB2: 0.25e-3, MB64: 60e-3}
WIRE_RATE = 25e9 / 8 * 1448 / (1448 + 90)  # TCP payload bytes/s of 25 GbE


def measured(**kw: object) -> MeasuredCosts:
    args = {"plain_s": PLAIN, "tls_s": TLS, "provenance": "illustrative"}
    args.update(kw)
    return MeasuredCosts(**args)  # type: ignore[arg-type]


def model(**overrides: object) -> TlsCostModel:
    return TlsCostModel.from_profile(None, measured(), **overrides)


# -- profile ----------------------------------------------------------------------------------
def test_builtin_profile_has_every_field_with_a_source() -> None:
    p = load_profile("tls_offload", required=REQUIRED_PROFILE_FIELDS)
    assert p.kind == "derived"
    for name in REQUIRED_PROFILE_FIELDS:
        assert p.source(name).strip()
    for name, pv in p.values.items():
        if name.startswith(("ktls.", "nic.cpu", "handoff.")) and "line_rate" not in name:
            assert 0.0 <= pv.value <= 1.0, name
    assert p.value("ktls.cpu_fraction_min") <= p.value("ktls.cpu_fraction") <= p.value("ktls.cpu_fraction_max")
    assert p.value("nic.cpu_fraction_of_ktls_min") <= p.value("nic.cpu_fraction_of_ktls") <= p.value("nic.cpu_fraction_of_ktls_max")


def _profile_without(tmp_path, dotted: str, value: object = None):
    data = tomllib.loads(builtin_profile_path("tls_offload").read_text(encoding="utf-8"))
    section, key = dotted.split(".")
    if value is None:
        del data[section][key]
    else:
        data[section][key]["value"] = value
    path = tmp_path / "p.toml"
    path.write_text(tomli_w.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize("dotted", ["nic.line_rate_bps", "ktls.cpu_fraction_max", "handoff.cpu_share"])
def test_missing_profile_field_is_a_profile_error_naming_it(tmp_path, dotted: str) -> None:
    path = _profile_without(tmp_path, dotted)
    with pytest.raises(ProfileError, match=dotted.replace(".", r"\.")):
        TlsCostModel.from_profile(path, measured())
    with pytest.raises(ProfileError, match=dotted.replace(".", r"\.")):
        TlsCostModel.from_profile(load_profile(path), measured())  # a Profile object too


def test_out_of_range_profile_fraction_is_a_profile_error(tmp_path) -> None:
    # the profile loader refuses it (profiles/rules.py: a fraction), naming the field and the fix
    path = _profile_without(tmp_path, "ktls.cpu_fraction", 1.5)
    with pytest.raises(ProfileError, match="cpu_fraction.*between 0 and 1"):
        TlsCostModel.from_profile(path, measured())


# -- the model's equations, by hand -----------------------------------------------------------
def test_nominal_costs_follow_the_equations() -> None:
    m = model()
    fk, fn, rho = 0.93, 0.4, 0.001
    hk = 1.062 * 0.25e-3 - (0.05e-3 + fk * 0.2e-3)  # calibrated on the 2 KB fetch
    assert m.handoff_ktls_s == pytest.approx(hk)
    assert m.cpu_s("ktls", MB64) == pytest.approx(8e-3 + fk * 52e-3 + hk)
    resync_64 = rho * math.ceil(MB64 / 1448) * ((16384 + 1448) / 2) / MB64
    base_n2 = 0.05e-3 + fk * 0.2e-3 * (fn + rho * 2 * ((2048 + 1448) / 2) / 2048)
    hn = 1.13 * 1.062 * 0.25e-3 - base_n2 - hk
    assert m.handoff_nic_s == pytest.approx(hn)
    assert m.cpu_s("ktls-nic", MB64) == pytest.approx(8e-3 + fk * 52e-3 * (fn + resync_64) + hk + hn)
    # measured modes pass through
    assert m.cpu_s("plain", KB2) == 0.05e-3 and m.cpu_s("tls", MB64) == 60e-3
    # the calibration reproduces seed 004's small-file ratios (transfer of 2 KB is ~0.7 us)
    small = m.seed_ratio_check()["small"]
    assert small["ktls_over_tls"] == pytest.approx(1.062, rel=1e-3)
    assert small["nic_over_ktls"] == pytest.approx(1.13, rel=1e-3)


def test_fractions_of_one_reproduce_the_measured_tls_cost() -> None:
    m = model(ktls_fraction=1.0, nic_fraction=1.0, retransmit_rate=0.0, handoff_cpu_share=0.0)
    for s in (KB2, 1_000_000, MB64):
        t = m.measured.tls(s)
        assert m.cpu_s("ktls", s) == pytest.approx(t, rel=1e-12)
        assert m.cpu_s("ktls-nic", s) == pytest.approx(t, rel=1e-12)
    # and with no hand-off increments in the seed ratios, no added waiting either
    m1 = model(ktls_fraction=1.0, nic_fraction=1.0, retransmit_rate=0.0,
               small_ktls_over_tls=1.0, small_nic_over_ktls=1.0)
    for mode in ("ktls", "ktls-nic"):
        c = m1.cost(mode, MB64)
        assert c.cpu_s == pytest.approx(60e-3) and c.delay_s == 0.0


def test_handshake_stays_in_user_space_in_every_mode() -> None:
    hs = 0.15e-3
    m = TlsCostModel.from_profile(None, measured(handshake_s=hs), nic_fraction=0.0,
                                  retransmit_rate=0.0, handoff_cpu_share=0.0)
    assert m.record_layer_s(KB2) == pytest.approx(0.05e-3)
    assert m.cpu_s("ktls-nic", KB2) == pytest.approx(0.05e-3 + hs)  # crypto gone, handshake not


def test_costs_are_interpolated_linearly_between_measured_sizes() -> None:
    m = model()
    mid = (KB2 + MB64) // 2
    assert m.measured.tls(mid) == pytest.approx((0.25e-3 + 60e-3) / 2, rel=1e-6)


def test_variants_bracket_the_nominal_prediction() -> None:
    costs = {v: TlsCostModel.from_profile(None, measured(), variant=v).cpu_s("ktls-nic", MB64)
             for v in ("optimistic", "nominal", "pessimistic")}
    assert costs["optimistic"] < costs["nominal"] < costs["pessimistic"]


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
            m = model(ktls_fraction=fk, nic_fraction=fn, handoff_cpu_share=0.0)
            for s in (KB2, 300_000, MB64):
                tls, ktls, nic = (m.cpu_s(x, s) for x in ("tls", "ktls", "ktls-nic"))
                assert nic <= ktls + 1e-15 and ktls <= tls + 1e-15
    # nominal profile, large files: the planner finds at least as many clients with the DPU
    m = model()
    kw = dict(model=m, cores=1, n_requests=300)
    tls = clients_per_core("tls", MB64, 0.5, 1.0, **kw)
    nic = clients_per_core("ktls-nic", MB64, 0.5, 1.0, **kw)
    assert nic.clients >= tls.clients > 0
    assert nic.provenance == "modelled" and tls.provenance == "illustrative"


# -- provenance -------------------------------------------------------------------------------
def test_provenance_flows_to_every_output() -> None:
    m = TlsCostModel.from_profile(None, MeasuredCosts(PLAIN, TLS))  # default: "measured"
    for mode in MODES:
        want = "measured" if mode in ("plain", "tls") else "modelled"
        assert m.cost(mode, KB2).provenance == want
        assert m.capacity(mode, KB2).provenance == want
        assert simulate_node(m, mode, KB2, 100.0, n_requests=50).provenance == want
    assert model().cost("tls", KB2).provenance == "illustrative"


# -- bad inputs -------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs", [
    {"tls_s": {KB2: 0.01e-3, MB64: 60e-3}},           # tls below plain
    {"tls_s": {KB2: 0.25e-3}},                          # sizes differ
    {"plain_s": {KB2: -1.0, MB64: 8e-3}},               # negative cost
    {"plain_s": {0: 1e-3, MB64: 8e-3}, "tls_s": {0: 2e-3, MB64: 60e-3}},  # size 0
    {"plain_s": {}, "tls_s": {}},                       # nothing measured
    {"handshake_s": 1.0},                               # handshake above the TLS increment
    {"handshake_s": float("nan")},
    {"provenance": "modelled"},
    {"provenance": ""},
])
def test_bad_measured_inputs_are_config_errors(kwargs: dict) -> None:
    with pytest.raises(ConfigError):
        measured(**kwargs)


def test_bad_calls_are_config_errors() -> None:
    m = model()
    with pytest.raises(ConfigError, match="unknown TLS mode"):
        m.cpu_s("quic", KB2)
    with pytest.raises(ConfigError, match="outside the measured sizes"):
        m.cpu_s("ktls", 2 * MB64)
    with pytest.raises(ConfigError):
        m.capacity("tls", {}, 1)
    with pytest.raises(ConfigError):
        m.capacity("tls", {KB2: -1.0})
    with pytest.raises(ConfigError):
        m.capacity("tls", KB2, cores=0)
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
    with pytest.raises(ConfigError, match="variant"):
        TlsCostModel.from_profile(None, measured(), variant="median")
    with pytest.raises(ConfigError, match="unknown parameter"):
        TlsCostModel.from_profile(None, measured(), ktls_frac=0.5)
    with pytest.raises(ConfigError, match=r"\[0, 1\]"):
        TlsCostModel.from_profile(None, measured(), nic_fraction=2.0)
    with pytest.raises(ConfigError, match="2048 bytes"):  # hand-off calibration needs 2 KB
        TlsCostModel.from_profile(None, MeasuredCosts({4096: 1e-4, MB64: 8e-3}, {4096: 3e-4, MB64: 6e-2}))
