"""The tls-offload study's model half (``studies/tls_offload/model.py``) on made-up fetch times, no
nginx needed: predictions labelled, a fitted variant labelled fitted, claims with their reasons,
the answer to the paper's question."""

from __future__ import annotations

import pytest

from cryptoffload.report.provenance import check_provenance
from cryptoffload.report.result import StudyResult
from cryptoffload.studies.frame import add_headline
from cryptoffload.sim.tls import smartnic as nic
from cryptoffload.profiles.loader import load_profile
from cryptoffload.studies.tls_offload import bands as tband
from cryptoffload.studies.tls_offload import model as tm
from cryptoffload.studies.tls_offload import study as st
from cryptoffload.studies.verdicts import Judging

FILES = {"2K.bin": tm.SMALL, "64M.bin": tm.LARGE}
FETCH = {("plain", "2K.bin"): 3e-3, ("tls", "2K.bin"): 9e-3, ("plain", "64M.bin"): 0.2, ("tls", "64M.bin"): 0.29}


def _fetch(mode: str, fname: str, client: str) -> float | None:
    return FETCH.get((mode, fname))


def _model(variant: str = "nominal") -> nic.TlsCostModel:
    costs = nic.MeasuredCosts({tm.SMALL: 0.18e-3, tm.LARGE: 4.8e-3}, {tm.SMALL: 1.0e-3, tm.LARGE: 38e-3})
    return nic.TlsCostModel(costs.with_handshake(), nic.TlsOffloadParams.from_profile(variant=variant))


def _bands(model: nic.TlsCostModel, rows: list[tm.PredictionRow], label: str) -> dict:
    """Bands as the study makes them, on two identical fetches per file (no fetch noise): the
    model's ranges for the nominal variant, nothing for a variant (already an end of them)."""
    noise = tband.FetchNoise(5, 0.0, 0.0, None)
    fields = tband.MODEL_FIELDS if model.params.variant == "nominal" else ()
    found = {tband.figure_label(*r.key): tband.ratio_band(load_profile(nic.PROFILE_NAME), model, r.key, FILES[r.file],
                                                          [FETCH[("tls", r.file)]] * 5, noise, r.paper, True, fields)
             for r in rows if r.provenance == label and (r.paper is not None or r.file == "2K.bin")}
    return {k: b for k, b in found.items() if b is not None}


def _result(model: nic.TlsCostModel, label: str) -> StudyResult:
    res = StudyResult(st.NAME, st.TITLE, "quick", 1, "test", {})
    for t in tm.model_tables(model, _fetch, lambda mode, f: {}, FILES, ["wget"], 1e-9, model.params.input_names(),
                             label, {"wget": 5e-3})[0]:
        res.add(t)
    rows = tm.fetch_predictions(model, _fetch, FILES, ["wget"], label)[0]
    bands = _bands(model, rows, label)
    judged = tm.verdicts(res.tables["single_fetch_prediction"], FILES, load_profile(nic.PROFILE_NAME), bands,
                         Judging(True, "sample", "cryptoffload study tls-offload --out DIR", "test"))
    add_headline(res, tm.claims(rows, model, FILES, _fetch, judged, label, bands))
    res.verdicts += judged
    return res


def test_model_rows_claims_and_the_answer() -> None:
    res = _result(_model(), "simulated")
    rows = {(r[0], r[1]): r for r in res.tables["single_fetch_prediction"].rows}
    assert rows[("ktls/tls", "2K.bin")][3] == "simulated" and rows[("tls/plain", "2K.bin")][3] == "measured"
    assert rows[("tls/plain", "2K.bin")][5] == pytest.approx(0.0)  # 9/3 = the paper's 3x: the error column works
    # a quick run: every cell beside the paper's has its verdict, none it could judge otherwise than the full run
    assert {v.kind for v in res.verdicts} == {"not judged in quick mode"} and len(res.verdicts) == 6
    assert [c.key for c in res.claims] == [["ktls-nic/ktls", "2K.bin", "wget"], ["ktls/tls", "64M.bin", "wget"],
                                           ["ktls-nic/ktls", "64M.bin", "wget"]]
    assert all(c.why for c in res.claims)
    question = res.claims[0]  # the paper's open question, on the card
    assert "+6.2 %" in question.paper and "one connection" in question.ours and question.provenance == "simulated"
    assert question.sentence() not in res.headline  # the headline has the full answer instead
    answer = next(h for h in res.headline if h.startswith("Why offload"))
    assert "+6.2 %" in answer and "+13 %" in answer and "derived" in answer
    implied = {r[0]: r for r in res.tables["paper_implied"].rows}
    fk = implied["2 KB kTLS fetch at which that delta is the paper's +13 %"][2]
    assert fk == pytest.approx(_model().handoff_nic_s / 0.13 * 1e3, rel=0.01)
    assert check_provenance(res) == []


def test_the_fitted_variant_is_labelled_fitted_and_the_check_holds_it_to_that() -> None:
    model = _model("pessimistic")
    fits = {f"{nic.PROFILE_NAME}:ktls.cpu_fraction_max": "Fig. 3/4"}
    honest = _result(model, "fitted")
    honest.declare_fits(fits)
    assert check_provenance(honest) == []
    assert all("fitted" in c.sentence() for c in honest.claims)
    mislabelled = _result(model, "simulated")
    mislabelled.declare_fits(fits)
    assert check_provenance(mislabelled)  # a fitted input shown as a prediction is refused
    # the nominal variant does not read the fitted field, so its rows are predictions
    nominal = _result(_model(), "simulated")
    nominal.declare_fits(fits)
    assert check_provenance(nominal) == []


def test_prediction_rows_carry_the_papers_ratio_and_read_back_by_field() -> None:
    rows, paper = tm.fetch_predictions(_model(), _fetch, FILES, ["wget", "curl"])
    first = rows[0]
    assert (first.ratio, first.file, first.client, first.provenance) == ("tls/plain", "2K.bin", "wget", "measured")
    assert first.ours == pytest.approx(3.0) and first.paper == 3.0 and first.key == ["tls/plain", "2K.bin", "wget"]
    curl = next(r for r in rows if r.client == "curl")
    assert curl.paper is None and curl.error_pct is None      # the paper's column is wget
    assert [p.ours for p in paper[:3]] == [3.0, 1.062, 1.13] and all(p.provenance is None for p in paper)
    res = StudyResult(st.NAME, st.TITLE, "quick", 1, "test", {})
    for t in tm.model_tables(_model(), _fetch, lambda mode, f: {}, FILES, ["wget"], 1e-9, [], "simulated", {})[0]:
        res.add(t)
    t = res.tables["single_fetch_prediction"]
    assert t.columns == ["ratio", "file", "client", "provenance", "ours", "error_pct"]  # the paper's ratio stays hidden
    assert t.paper[0] == ["tls/plain", "2K.bin", "wget", None, 3.0, None]


def test_the_papers_implied_fetch_times_are_named() -> None:
    model = _model()
    imp = tm.implied_by_paper(model)
    dk, dn = tm.server_deltas(model, tm.SMALL)
    assert (imp.delta_ktls, imp.delta_nic) == (dk, dn)
    assert imp.ktls_fetch == pytest.approx(dn / 0.13)
    assert imp.tls_fetch == pytest.approx(imp.ktls_fetch / 1.062)
    assert imp.plain_fetch == pytest.approx(imp.tls_fetch / 3.0) and imp.ktls_cost == pytest.approx(imp.tls_fetch * 0.062)
    assert [(r.label, r.mode, r.over) for r in tm.MODE_RATIOS] == [
        ("tls/plain", "tls", "plain"), ("ktls/tls", "ktls", "tls"), ("ktls-nic/ktls", "ktls-nic", "ktls")]
