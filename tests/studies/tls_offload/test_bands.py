"""tls-offload's bands on made-up fetches: the model's inputs over tls_offload.toml's ranges,
the measured fetch and a fetch ratio over this run's own noise, and claims judged by them."""

from __future__ import annotations

import math
import statistics

import pytest

from cryptoffload.profiles import load_profile
from cryptoffload.report.result import StudyResult
from cryptoffload.studies.frame import add_headline
from cryptoffload.report.verdicts import verdict_kind
from cryptoffload.sim.tls import smartnic as nic
from cryptoffload.studies.tls_offload import bands as tb
from cryptoffload.studies.tls_offload import model as tm
from cryptoffload.studies.verdicts import Judging

T4 = 2.7764451051977934  # Student's t, 97.5 %, four degrees of freedom: five fetches

FILES = {"2K.bin": tm.SMALL, "64M.bin": tm.LARGE}
SAMPLES = {("tls", "64M.bin"): [0.28, 0.30, 0.29, 0.31, 0.27], ("ktls", "64M.bin"): [0.30, 0.32, 0.31, 0.33, 0.29],
           ("tls", "2K.bin"): [9e-3, 8e-3, 10e-3], ("ktls", "2K.bin"): [9e-3, 9e-3, 9e-3],
           ("plain", "64M.bin"): [0.2, 0.2], ("plain", "2K.bin"): [3e-3, 3e-3]}


def _samples(mode: str, fname: str, client: str) -> list[float]:
    return SAMPLES.get((mode, fname), [])


def _mean(mode: str, fname: str, client: str) -> float | None:
    s = _samples(mode, fname, client)
    return statistics.fmean(s) if s else None


def _model() -> nic.TlsCostModel:
    costs = nic.MeasuredCosts({tm.SMALL: 0.18e-3, tm.LARGE: 4.8e-3}, {tm.SMALL: 1.0e-3, tm.LARGE: 38e-3})
    return nic.TlsCostModel(costs.with_handshake(), nic.TlsOffloadParams.from_profile())


def test_the_noise_is_this_runs_own() -> None:
    n = tb.fetch_noise(_samples, "64M.bin", "wget", ktls_is_tls=True)
    se_tls = statistics.stdev(SAMPLES[("tls", "64M.bin")]) / math.sqrt(5) / 0.29
    se_k = statistics.stdev(SAMPLES[("ktls", "64M.bin")]) / math.sqrt(5) / 0.31
    assert (n.count, n.tls_se) == (5, pytest.approx(se_tls))
    assert n.ratio_se == pytest.approx(math.hypot(se_tls, se_k)) and n.identical_diff == pytest.approx(0.31 / 0.29 - 1)
    alone = tb.fetch_noise(_samples, "64M.bin", "wget", ktls_is_tls=False)
    assert alone.ratio_se == pytest.approx(math.sqrt(2) * se_tls) and alone.identical_diff is None
    assert tm.noise_words(n) == ("this run's fetch has a standard error of 2.4 % over 5 fetches, a ratio of two such "
                                 "series 3.3 %, and two identical configurations here (ktls ran as user-space TLS) "
                                 "differed by +6.9 %")


def test_a_ratio_band_moves_the_profile_ranges_and_the_measured_noise() -> None:
    model, prof = _model(), load_profile(nic.PROFILE_NAME)
    n = tb.fetch_noise(_samples, "64M.bin", "wget", True)
    b = tb.ratio_band(prof, model, ["ktls/tls", "64M.bin", "wget"], tm.LARGE, SAMPLES[("tls", "64M.bin")], n, 0.992,
                      quick=True)
    assert b.figure == "ktls/tls 64M.bin wget"
    assert b.band.nominal == model.predicted_fetch_s("ktls", tm.LARGE, 0.29) / 0.29
    ends = {s.input: (s.low_input, s.high_input) for s in b.band.tornado}
    for f in tb.MODEL_FIELDS:
        assert ends[f] == prof.range(f), f
    assert ends[tb.RATIO_NOISE] == (pytest.approx(1 - T4 * n.ratio_se), pytest.approx(1 + T4 * n.ratio_se))
    assert ends[tb.FETCH] == pytest.approx((0.29 - T4 * n.tls_se * 0.29, 0.29 + T4 * n.tls_se * 0.29))
    assert b.band.method == f"Latin hypercube, {tb.QUICK_SAMPLES} points, seed 1"
    assert b.band.most_sensitive == tb.RATIO_NOISE  # a sub-percent effect against a few percent of noise


def test_a_variant_moves_only_the_measured_noise() -> None:
    model, prof = _model(), load_profile(nic.PROFILE_NAME)
    n = tb.fetch_noise(_samples, "64M.bin", "wget", True)
    b = tb.ratio_band(prof, model, ["ktls/tls", "64M.bin", "wget"], tm.LARGE, SAMPLES[("tls", "64M.bin")], n, 0.992,
                      quick=True, model_fields=())
    assert [i.name for i in b.inputs] == [tb.FETCH, tb.RATIO_NOISE] and b.band.method == "4 corners"
    r = b.band.nominal
    assert (b.band.low, b.band.high) == (pytest.approx(r * (1 - T4 * n.ratio_se), rel=1e-3),
                                         pytest.approx(r * (1 + T4 * n.ratio_se), rel=1e-3))
    assert tb.note(True, "pessimistic").startswith("The pessimistic variant is itself an end of the model's ranges")


def test_claims_follow_their_bands_and_quote_the_runs_noise() -> None:
    model, prof = _model(), load_profile(nic.PROFILE_NAME)
    rows = tm.fetch_predictions(model, _mean, FILES, ["wget"])[0]
    noise = {(f, "wget"): tb.fetch_noise(_samples, f, "wget", True) for f in FILES}
    bands = {tb.figure_label(*r.key): tb.ratio_band(prof, model, r.key, FILES[r.file], _samples("tls", r.file, "wget"),
                                                    noise[(r.file, "wget")], r.paper, True)
             for r in rows if r.provenance == "simulated" and r.paper is not None}
    res = StudyResult("tls-offload", "t", "full", 1, "test", {})
    for t in tm.model_tables(model, _mean, lambda mode, f: {}, FILES, ["wget"], 1e-9, [], "simulated", {})[0]:
        res.add(t)
    judged = tm.verdicts(res.tables["single_fetch_prediction"], FILES, prof, bands,
                         Judging(False, "full", "cryptoffload study tls-offload --out DIR"))
    add_headline(res, tm.claims(rows, model, FILES, _mean, judged, "simulated", bands, noise))
    by = {tuple(v.key): v for v in judged}
    assert set(by) == {(r, f, "wget") for r in ("tls/plain", "ktls/tls", "ktls-nic/ktls") for f in FILES}
    assert by[("tls/plain", "2K.bin", "wget")].kind == "inconclusive"  # the measured rows: no band given here
    for v in judged:
        assert v.kind == verdict_kind(v.band, v.paper, 1.0, v.paper_range)
    # the paper's -0.8 % beside a band a few percent wide around 1 (no change): too wide to tell
    large = next(c for c in res.claims if c.key == ["ktls/tls", "64M.bin", "wget"])
    assert large.kind == "inconclusive" and large.within_noise and "standard error of 2.4 % over 5 fetches" in large.why
    assert "about a percent" not in " ".join(c.why for c in res.claims)
    question = res.claims[0]  # the open question, judged on its NIC step's cell
    assert question.key == ["ktls-nic/ktls", "2K.bin", "wget"] and question.paper_value == 1.13
    assert question.kind == by[("ktls-nic/ktls", "2K.bin", "wget")].kind
