"""Tests of the TLS-offload (SmartNIC / kTLS) cost model after the SmartNIC TLS paper.

The model's equations computed by hand; that nothing in it reads the paper's ratios (changing
them changes nothing); the cited constants' arithmetic; the handshake estimated from the
measurements; the predictions of single fetches, each shown to fail when the input that carries
it is removed; provenance and the errors a user can provoke. The node simulation and planner
are tested in ``test_tls_node.py``. The measured inputs here are ILLUSTRATIVE numbers, not
measurements: plain 0.05 ms / 8 ms and tls 0.25 ms / 60 ms per 2 KB / 64 MB request.
"""

from __future__ import annotations

import math
import tomllib

import pytest
import tomli_w

from cryptoffload.errors import ConfigError, ProfileError
from cryptoffload.profiles.loader import builtin_profile_path, load_profile
from cryptoffload.sim.tls.smartnic import (
    SERVING_MODES,
    REQUIRED_PROFILE_FIELDS,
    MeasuredCosts,
    TlsCostModel,
    TlsOffloadParams,
)

KB2 = 2048
MB64 = 64 * 1024 * 1024
PLAIN = {KB2: 0.05e-3, MB64: 8e-3}
TLS = {KB2: 0.25e-3, MB64: 60e-3}


def measured(**kw: object) -> MeasuredCosts:
    args = {"plain_s": PLAIN, "tls_s": TLS, "provenance": "illustrative"}
    args.update(kw)
    return MeasuredCosts(**args)  # type: ignore[arg-type]


def model(**overrides: object) -> TlsCostModel:
    return TlsCostModel.from_profile(None, measured(), **overrides)


def study_model(**overrides: object) -> TlsCostModel:
    """As the study builds it: the handshake estimated from the two sizes (0.198 ms here)."""
    return TlsCostModel.from_profile(None, measured().with_handshake(), **overrides)


def _profile_with(tmp_path, dotted: str, value: object = None):
    """The built-in profile with one field removed (``value`` None) or changed."""
    data = tomllib.loads(builtin_profile_path("tls_offload").read_text(encoding="utf-8"))
    section, key = dotted.split(".")
    if value is None:
        del data[section][key]
    else:
        data[section][key]["value"] = value
        data[section][key].pop("range", None)  # a changed value leaves the range it was stated with
        data[section][key].pop("range_why", None)
    path = tmp_path / "p.toml"
    path.write_text(tomli_w.dumps(data), encoding="utf-8")
    return path


# -- profile ----------------------------------------------------------------------------------
def test_builtin_profile_has_every_field_with_a_source() -> None:
    p = load_profile("tls_offload", required=REQUIRED_PROFILE_FIELDS)
    assert p.kind == "derived"
    for name in REQUIRED_PROFILE_FIELDS:
        assert p.source(name).strip()
    for name, pv in p.values.items():
        if "fraction" in name or "cpu_share" in name:
            assert 0.0 <= pv.value <= 1.0, name
    for base in ("ktls.cpu_fraction", "nic.cpu_fraction_of_ktls", "handoff.ktls_breakeven_bytes", "handoff.nic_setup_s"):
        assert p.value(base + "_min") <= p.value(base) <= p.value(base + "_max"), base


def test_only_the_pessimistic_ktls_end_is_fitted_and_the_handoffs_are_cited() -> None:
    p = load_profile("tls_offload")
    fitted = [k for k, v in p.values.items() if v.provenance == "fitted"]
    assert fitted == ["ktls.cpu_fraction_max"]
    for k in ("handoff.ktls_breakeven_bytes", "nic.bounce_copy_s_per_byte"):
        assert p.values[k].provenance == "cited", k
    # a third party's throughput read as a per-connection cost is our reading, not a citation
    assert p.values["handoff.nic_setup_s"].provenance == "assumed"
    # the variants read different fields: a table says which, so a fit of one is not counted in another
    assert "tls_offload:ktls.cpu_fraction_max" not in TlsOffloadParams.from_profile().input_names()
    assert "tls_offload:ktls.cpu_fraction_max" in TlsOffloadParams.from_profile(variant="pessimistic").input_names()


def test_cited_constants_follow_from_their_sources() -> None:
    p = TlsOffloadParams.from_profile()
    # Linux zerocopy-sendfile commit: 33.6 Gbit/s with the bounce copy, 79.92 without, one core
    assert p.bounce_copy_s_per_byte == pytest.approx(8 / 33.6e9 - 8 / 79.92e9, rel=0.01)
    # third-party ConnectX-6 Dx run: 10 kB files at 8.7 MB/s -> 870 connections/s
    assert p.nic_setup_s == pytest.approx(10_000 / 8.7e6, rel=0.01)
    assert p.ktls_breakeven_bytes == 102400


@pytest.mark.parametrize("dotted", ["nic.line_rate_bps", "ktls.cpu_fraction_max", "handoff.cpu_share",
                                    "handoff.nic_setup_s", "nic.bounce_copy_s_per_byte"])
def test_missing_profile_field_is_a_profile_error_naming_it(tmp_path, dotted: str) -> None:
    path = _profile_with(tmp_path, dotted)
    with pytest.raises(ProfileError, match=dotted.replace(".", r"\.")):
        TlsCostModel.from_profile(path, measured())
    with pytest.raises(ProfileError, match=dotted.replace(".", r"\.")):
        TlsCostModel.from_profile(load_profile(path), measured())  # a Profile object too


def test_out_of_range_profile_fraction_is_a_profile_error(tmp_path) -> None:
    # the profile loader refuses it (profiles/rules.py: a fraction), naming the field and the fix
    path = _profile_with(tmp_path, "ktls.cpu_fraction", 1.5)
    with pytest.raises(ProfileError, match="cpu_fraction.*between 0 and 1"):
        TlsCostModel.from_profile(path, measured())


# -- the model's equations, by hand -----------------------------------------------------------
def test_nominal_costs_follow_the_equations() -> None:
    m = model()
    fk, fn, rho, c = 0.93, 0.4, 0.001, 1.38e-10
    hk = 102400 * (1 - fk) * 52e-3 / MB64  # cited break-even x the per-byte saving
    hn = 1.149e-3                           # cited NIC set-up
    assert m.handoff_ktls_s == pytest.approx(hk)
    assert m.handoff_nic_s == pytest.approx(hn)
    assert m.cpu_s("ktls", MB64) == pytest.approx(8e-3 + fk * 52e-3 + hk)
    resync_64 = rho * math.ceil(MB64 / 1448) * ((16384 + 1448) / 2) / MB64
    assert m.cpu_s("ktls-nic", MB64) == pytest.approx(8e-3 + fk * 52e-3 * (fn + resync_64) + c * MB64 + hk + hn)
    # measured modes pass through
    assert m.cpu_s("plain", KB2) == 0.05e-3 and m.cpu_s("tls", MB64) == 60e-3


def test_the_bounce_copy_is_charged_to_nic_offload_only() -> None:
    m = model()
    for mode in SERVING_MODES:
        assert (m.cost(mode, MB64).breakdown.get("bounce_copy_s", 0.0) > 0) == (mode == "ktls-nic")


def test_nothing_reads_the_papers_ratios(tmp_path) -> None:
    """The hand-offs were once calibrated to the paper's +6.2 % / +13 %; now changing those
    figures in the profile changes no cost."""
    base = model()
    path = _profile_with(tmp_path, "paper.small_ktls_over_tls", 2.0)
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    data["paper"]["small_nic_over_ktls"]["value"] = 3.0
    data["paper"]["small_nic_over_ktls"].pop("range")
    data["paper"]["small_nic_over_ktls"].pop("range_why")
    path.write_text(tomli_w.dumps(data), encoding="utf-8")
    other = TlsCostModel.from_profile(path, measured())
    for mode in SERVING_MODES:
        for s in (KB2, MB64):
            assert other.cost(mode, s) == base.cost(mode, s)


def test_fractions_of_one_and_no_setup_reproduce_the_measured_tls_cost() -> None:
    m = model(ktls_fraction=1.0, nic_fraction=1.0, retransmit_rate=0.0, ktls_breakeven_bytes=0.0,
              nic_setup_s=0.0, bounce_copy_s_per_byte=0.0)
    for s in (KB2, 1_000_000, MB64):
        t = m.measured.tls(s)
        assert m.cpu_s("ktls", s) == pytest.approx(t, rel=1e-12)
        assert m.cpu_s("ktls-nic", s) == pytest.approx(t, rel=1e-12)
        assert m.cost("ktls-nic", s).delay_s == 0.0


def test_handshake_stays_in_user_space_in_every_mode() -> None:
    hs = 0.15e-3
    m = TlsCostModel.from_profile(None, measured(handshake_s=hs), nic_fraction=0.0, retransmit_rate=0.0,
                                  handoff_cpu_share=0.0, bounce_copy_s_per_byte=0.0)
    assert m.record_layer_s(KB2) == pytest.approx(0.05e-3)
    assert m.cpu_s("ktls-nic", KB2) == pytest.approx(0.05e-3 + hs)  # crypto gone, handshake not


def test_handshake_is_the_intercept_of_the_tls_increment_over_size() -> None:
    per_byte, hs = 7e-10, 0.6e-3
    plain = {KB2: 0.05e-3, MB64: 8e-3}
    tls = {s: plain[s] + hs + per_byte * s for s in plain}
    m = MeasuredCosts(plain, tls)
    assert m.handshake_intercept() == pytest.approx(hs)
    assert m.with_handshake().handshake_s == pytest.approx(hs)
    assert m.with_handshake(1e-4).handshake_s == 1e-4
    assert MeasuredCosts({KB2: 1e-4}, {KB2: 3e-4}).handshake_intercept() == 0.0  # one size: no line
    # a per-byte part that falls with size (noise) is not negative: the intercept is the smallest increment
    noisy = MeasuredCosts({KB2: 1e-4, MB64: 8e-3}, {KB2: 5e-4, MB64: 8.2e-3})
    assert noisy.handshake_intercept() == pytest.approx(2e-4)


def test_costs_are_interpolated_linearly_between_measured_sizes() -> None:
    m = model()
    mid = (KB2 + MB64) // 2
    assert m.measured.tls(mid) == pytest.approx((0.25e-3 + 60e-3) / 2, rel=1e-6)


def test_variants_bracket_the_nominal_prediction() -> None:
    costs = {v: TlsCostModel.from_profile(None, measured(), variant=v).cpu_s("ktls-nic", MB64)
             for v in ("optimistic", "nominal", "pessimistic")}
    assert costs["optimistic"] < costs["nominal"] < costs["pessimistic"]


# -- single-fetch predictions -----------------------------------------------------------------
def test_predicted_fetch_adds_the_server_side_difference() -> None:
    m = model()
    for mode in ("tls", "ktls", "ktls-nic"):
        c, t = m.cost(mode, KB2), m.cost("tls", KB2)
        assert m.predicted_fetch_s(mode, KB2, 0.01) == pytest.approx(0.01 + c.cpu_s + c.delay_s - t.cpu_s)
    with pytest.raises(ConfigError, match="measured"):
        m.predicted_fetch_s("plain", KB2, 0.01)
    with pytest.raises(ConfigError):
        m.predicted_fetch_s("ktls", KB2, 0.0)


def _ratios(m: TlsCostModel, size: int, fetch_s: float) -> tuple[float, float]:
    k = m.predicted_fetch_s("ktls", size, fetch_s)
    n = m.predicted_fetch_s("ktls-nic", size, fetch_s)
    return k / fetch_s, n / k


def prediction_holds_the_papers_directions(m: TlsCostModel) -> bool:
    """The paper's 2 KB finding (NIC offload slower than kTLS) and its 64 MB kTLS one (kTLS no
    slower than user-space TLS), for any fetch from 5 ms to 1 s."""
    for fetch in (5e-3, 20e-3, 0.1, 1.0):
        _, nic_small = _ratios(m, KB2, fetch)
        ktls_large, _ = _ratios(m, MB64, max(fetch, 0.1))
        if not (nic_small > 1.0 and ktls_large <= 1.0):
            return False
    return True


def test_prediction_nic_slower_for_2KB_and_ktls_not_slower_for_64MB() -> None:
    assert prediction_holds_the_papers_directions(study_model())
    # perturbed: without the cited NIC set-up the 2 KB slowdown goes -- it is the cause
    assert not prediction_holds_the_papers_directions(study_model(nic_setup_s=0.0))


def test_consistency_cited_nic_setup_is_the_papers_13_percent_of_a_9ms_fetch() -> None:
    """A consistency check, not a prediction (the paper gives no absolute times): at a 2 KB TLS
    fetch of 8.3 ms -- plain ~2.8 ms by the paper's 3x, plausible for wget on a LAN -- the cited
    NIC set-up adds 13 % +- 2 points; twice the set-up does not."""
    _, nic = _ratios(study_model(), KB2, 8.3e-3)
    assert nic == pytest.approx(1.13, abs=0.02)
    _, nic2 = _ratios(study_model(nic_setup_s=2.3e-3), KB2, 8.3e-3)
    assert abs(nic2 - 1.13) > 0.02


def test_divergence_ktls_predicted_neutral_for_2KB_where_the_paper_saw_plus_6_percent() -> None:
    """A documented divergence (docs/studies/tls-offload.md): the cited break-even gives a kTLS
    hand-off of microseconds, so no 2 KB fetch above 5 ms slows by more than 0.2 %."""
    for fetch in (5e-3, 8.3e-3, 0.1):
        k, _ = _ratios(study_model(), KB2, fetch)
        assert abs(k - 1.0) < 2e-3
    # the divergence is the hand-off: the paper's +6.2 % at 8.3 ms would need ~0.5 ms
    k, _ = _ratios(study_model(ktls_breakeven_bytes=0.52e-3 / study_model().ktls_saving_per_byte_s), KB2, 8.3e-3)
    assert k == pytest.approx(1.062, abs=0.01)


# -- provenance -------------------------------------------------------------------------------
def test_provenance_flows_to_every_cost() -> None:
    m = TlsCostModel.from_profile(None, MeasuredCosts(PLAIN, TLS))  # default: "measured"
    for mode in SERVING_MODES:
        want = "measured" if mode in ("plain", "tls") else "simulated"
        assert m.cost(mode, KB2).provenance == want
        assert m.capacity(mode, KB2).provenance == want
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
    {"provenance": "simulated"},
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
    for size in (0, 2048.0, True):
        with pytest.raises(ConfigError, match=r"file size \(bytes\) must be a positive integer"):
            m.cpu_s("tls", size)
    with pytest.raises(ConfigError):
        m.capacity("tls", {}, 1)
    with pytest.raises(ConfigError):
        m.capacity("tls", {KB2: -1.0})
    with pytest.raises(ConfigError):
        m.capacity("tls", KB2, cores=0)
    with pytest.raises(ConfigError, match="variant"):
        TlsCostModel.from_profile(None, measured(), variant="median")
    with pytest.raises(ConfigError, match="unknown parameter"):
        TlsCostModel.from_profile(None, measured(), ktls_frac=0.5)
    with pytest.raises(ConfigError, match=r"\[0, 1\]"):
        TlsCostModel.from_profile(None, measured(), nic_fraction=2.0)
    with pytest.raises(ConfigError):
        TlsCostModel.from_profile(None, measured(), nic_setup_s=-1.0)
