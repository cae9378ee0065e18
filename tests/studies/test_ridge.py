"""The ridge study end to end on a small run: contract, accuracy within the bound, labels."""

from __future__ import annotations

import json

import pytest

from cryptoffload.errors import ConfigError
from cryptoffload.studies import _ridge_bands as rb
from cryptoffload.studies import ridge as st
from cryptoffload.apps.ridge.accuracy import Z_MARGIN


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("ridge")
    cfg = st.RidgeConfig(quick=True, records=400, d=4, chunk=200, workers=2)
    return st.run(cfg, out), out


def test_contract_tables_and_figures(small_run):
    res, out = small_run
    data = json.loads((out / "result.json").read_text())
    assert data["study"] == "ridge"
    phases = data["tables"]["table2_phases"]
    assert phases["provenance"] == "mixed" and "provenance" in phases["columns"]
    kinds = {r[1] for r in phases["rows"]}
    assert kinds <= {"measured", "derived"} and "measured" in kinds
    assert {r[1] for r in phases["paper"]} == {"cited"}
    # 400 records scaled to 1,000,000: that column is an extrapolation, derived whatever the row measured
    assert phases["column_provenance"] == {"time_s_at_1m_records": "derived"}
    assert {c["provenance"] for c in data["claims"] if c["table"] == "table2_phases"} <= {"derived"}
    for fig in data["figures"]:
        assert (out / fig).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_accuracy_is_the_fixed_point_error_expected_and_modes_agree(small_run):
    res, _ = small_run
    t = res.tables["accuracy"]
    col = {c: i for i, c in enumerate(t.columns)}
    rows = t.rows
    names = [r[0] for r in rows]
    assert any("scikit-learn" in n for n in names) and any("diabetes" in n for n in names)
    for r in rows:
        err, sigma, z = r[col["max_abs_diff"]], r[col["expected_sigma"]], r[col["max_z"]]
        # every coefficient within Z_MARGIN standard deviations of the expected rounding error
        assert r[col[f"within_{Z_MARGIN:g}_sigma"]] and z <= Z_MARGIN, r
        # and the bound is not loose: the worst coefficient's error is of the order of its sigma
        # (a run 10x more accurate than fixed point allows would be as suspicious as one 10x worse)
        assert err >= sigma / 10, r
        # where the data are at hand, our error IS the replayed rounding error, up to float noise
        if r[col["replay_gap"]] is not None:
            assert r[col["replay_gap"]] <= 1e-9, r
        # the worst-case bound is far looser than what is now asserted
        assert r[col["worst_case_bound"]] > Z_MARGIN * sigma
    diabetes = next(r for r in rows if "diabetes" in r[0])
    assert diabetes[col["replay_gap"]] is not None
    assert res.extra["same_model"] is True
    assert not res.notes


def test_bad_config_refused(tmp_path):
    with pytest.raises(ConfigError):
        st.run(st.RidgeConfig(stat_bits=60), tmp_path / "a")
    with pytest.raises(ConfigError):
        st.run(st.RidgeConfig(records=0), tmp_path / "b")
    with pytest.raises(ConfigError, match="scheduler|address"):
        st.run(st.RidgeConfig(records=10, scheduler="not-an-address"), tmp_path / "c")
    for d in ("a", "b", "c"):
        assert not (tmp_path / d / "result.json").exists()


def _claims(records: int, enc_se: float) -> list:
    """The phase claims of made-up phase times: encryption 662 s (paper 636 s, +4 %) with a
    relative standard error ``enc_se`` over 8 chunks, aggregation 27 s (paper 116 s) +-2 %."""
    from cryptoffload.report.result import StudyResult

    keys = ["encryption", "aggregation", "pipeline", "solve", "transfer", "total", "per_provider"]
    ours = {"encryption": 662.0, "aggregation": 27.0, "solve": 15.0, "total": 709.0}
    rows = [st.PhaseRow(f"phase {i}", "measured", None, None, ours.get(k), k) for i, k in enumerate(keys)]
    paper = [st.PhaseRow(f"phase {i}", "cited", None, None, v, k) for i, (k, v) in
             enumerate(zip(keys, [636.0, 116.0, None, 20.0, None, 772.0, None]))]
    noise = {"encryption": rb.RateNoise("encryption", 8, enc_se), "aggregation": rb.RateNoise("aggregation", 8, 0.01),
             "pipeline": rb.RateNoise("encryption + aggregation", 8, 0.02)}
    bands = rb.phase_bands(rb.PhaseFigures(662.0, 27.0, 694.0, 15.0), noise, st.PAPER_PHASE_S)
    res = StudyResult("ridge", "t", "quick", 1, "0", {})
    st._phase_claims(res, rows, paper, records, 20 * records, 33e-6 * 20 * records, 1.3e-6 * 20 * records, 2, bands)
    assert res.headline == [c.sentence() for c in res.claims]
    return res.claims


@pytest.mark.parametrize("records, provenance", [(10_000, "derived"), (1_000_000, "measured")])
def test_phase_claims_name_the_closest_and_the_furthest_phase_judged_by_their_bands(records, provenance):
    """The closest and the furthest phase at 1,000,000 records (ratio to the paper's, either
    way), each judged by its band: encryption +-2 x 2.5 % = [628.9, 695.1] holds the paper's
    636 s (an agreement); aggregation +-2 x 1 % = [26.46, 27.54] does not hold 116 s (a
    divergence that no input of ours closes: the paper's hardware is not modelled)."""
    agree, diverge = _claims(records, 0.025)
    assert (agree.kind, agree.key, diverge.kind, diverge.key) == ("agreement", ["phase 0"], "divergence", ["phase 1"])
    assert agree.provenance == diverge.provenance == provenance
    assert agree.band == pytest.approx([662 * 0.95, 662 * 1.05]) and agree.paper_value == 636.0
    assert diverge.band == pytest.approx([27 * 0.98, 27 * 1.02]) and diverge.paper_value == 116.0
    assert (agree.closes, diverge.closes) == ("", "")
    assert agree.most_sensitive == "run-to-run noise of the encryption chunk times (8 chunks)"
    assert agree.band_method == ("+-2 standard errors of the per-ciphertext encryption time over this run's 8 chunks "
                                 "(stdev / sqrt(k) / mean = 2.50%), times the phase time")
    assert agree.label() == "agreement, inside our band" and diverge.label() == "divergence, outside our band"
    assert "+4 %" in agree.ours and "-77 %" in diverge.ours and "K80" in diverge.paper
    assert agree.why.startswith("the closest of our phases to the paper's; measured on this machine, nothing "
                                "predicted: nothing of ours models one QAT DH8970 (QHCS1); ")
    assert diverge.why.startswith("the paper's 116 lies outside our band [26.46, 27.54]; no input of ours moves "
                                  "towards it; the furthest of our phases to the paper's; ")
    assert "33 us per ciphertext" in agree.why and "1.30 us per ciphertext" in diverge.why and "6.8 us" in diverge.why
    assert ("scaled linearly" in agree.ours) == (records != 1_000_000)


def test_the_closest_phase_outside_its_band_is_a_divergence():
    """-4 % is close, but +-2 x 1 % = [648.8, 675.2] leaves the paper's 636 s outside: a divergence."""
    closest, furthest = _claims(10_000, 0.01)
    assert (closest.kind, furthest.kind) == ("divergence", "divergence")
    assert closest.band == pytest.approx([662 * 0.98, 662 * 1.02])
    assert closest.why.startswith("the paper's 636 lies outside our band [648.8, 675.2]; no input of ours moves "
                                  "towards it; the closest of our phases to the paper's; ")


def test_the_run_bands_its_figures_by_its_own_chunks(small_run):
    """The run is cut into 8 chunks (400 records, --chunk 200), each timed; the headline_bands
    encryption row is the scaled phase time +-2 standard errors of those chunks' rates, and the
    accuracy claim's band is [0, Z_MARGIN] in z."""
    import math
    import statistics

    res, _ = small_run
    bulk = res.extra["bulk"]
    assert bulk["chunks"] == 8 and [c["start"] for c in bulk["per_chunk"]] == list(range(0, 400, 50))
    rates = [(c["encode_s"] + c["encrypt_s"]) / c["ciphertexts"] for c in bulk["per_chunk"]]
    se = statistics.stdev(rates) / math.sqrt(8) / statistics.fmean(rates)
    t = res.tables["headline_bands"]
    col = {c: i for i, c in enumerate(t.columns)}
    enc = next(r for r in t.rows if r[0].startswith("encryption"))
    phase = next(r for r in res.tables["table2_phases"].rows if r[0].startswith("encryption"))
    at_1m = phase[res.tables["table2_phases"].columns.index("time_s_at_1m_records")]
    assert enc[col["ours"]] == pytest.approx(at_1m, rel=1e-12)
    assert (enc[col["band_low"]], enc[col["band_high"]]) == pytest.approx((at_1m * (1 - 2 * se), at_1m * (1 + 2 * se)),
                                                                          rel=1e-9)
    acc = res.claims[-1]
    assert (acc.kind, acc.band, acc.paper_value) == ("claim", [0.0, Z_MARGIN], None)
    assert acc.most_sensitive.startswith("the fixed-point scale 2^-16 (frac_bits = 16)")
    assert next(r for r in t.rows if r[0] == rb.ACCURACY_FIGURE)[col["ours"]] == res.tables["accuracy"].rows[0][
        res.tables["accuracy"].columns.index("max_z")]


def test_streamed_reference_equals_scikit_learn_on_all_the_records():
    """The chunked reference (normal equations folded chunk by chunk, Ridge on their Cholesky
    factor) gives scikit-learn's coefficients on the whole array, and the chunked replay the
    whole-array one."""
    import numpy as np
    from sklearn.linear_model import Ridge

    from cryptoffload.apps.ridge.accuracy import replayed_error
    from cryptoffload.apps.ridge.bulk import chunk_records
    from cryptoffload.apps.ridge.protocol import RidgeParams
    from cryptoffload.workloads.ridge_data import algorithm1_y_bound

    cfg = st.RidgeConfig(quick=True, records=3000, d=5, lam=0.7)
    params = RidgeParams(d=5, max_records=3000, x_bound=1.0, y_bound=algorithm1_y_bound(5), lam=0.7)
    coef, sums = st.sklearn_on_run(cfg, 3000, 700, params)    # 5 chunks, the last partial
    X, y = chunk_records(cfg.seed, 0, 3000, 5)
    np.testing.assert_allclose(coef, Ridge(alpha=0.7, fit_intercept=False).fit(X, y).coef_, rtol=1e-10, atol=1e-12)
    assert sums.records == 3000 and sums.x_max == float(np.abs(X).max()) and sums.y_max == float(np.abs(y).max())
    np.testing.assert_allclose(sums.error(params.lam_int, 0.7),
                               replayed_error(X, y, params.scale, params.lam_int, 0.7), rtol=0, atol=1e-12)


def test_the_papers_rows_follow_ours_by_phase_key():
    """Each of our phase rows has the paper's row beside it, found by the phase's key (not by
    its position), with the paper's figures or None where it gives none."""
    rows = [st.PhaseRow("encryption here", "measured", 1.0, 5, 2.0, "encryption"),
            st.PhaseRow("GPU here", "measured", 1.5, None, 3.0, "gpu_encrypt_aggregate"),
            st.PhaseRow("per provider here", "measured", 2.5, 7, None, "per_provider")]
    assert st._paper_rows(rows) == [
        st.PhaseRow("encryption here", "cited", 636.0, 2e9, 636.0, "encryption"),
        st.PhaseRow("GPU here", "cited", 752.0, None, 752.0, "gpu_encrypt_aggregate"),
        st.PhaseRow("per provider here", "cited", None, None, None, "per_provider")]
