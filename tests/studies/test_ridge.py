"""The ridge study end to end on a small run: contract, accuracy within the bound, labels."""

from __future__ import annotations

import json

import pytest

from cryptoffload.errors import ConfigError
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


@pytest.mark.parametrize("records, provenance", [(10_000, "derived"), (1_000_000, "measured")])
def test_phase_claims_name_the_closest_and_the_furthest_phase_with_reasons(records, provenance):
    """The headline's agreement and divergence are chosen from the phase times at 1,000,000
    records (ratio to the paper's, either way), labelled derived when scaled from a smaller run."""
    from cryptoffload.report.result import StudyResult

    keys = ["encryption", "aggregation", "pipeline", "solve", "transfer", "total", "per_provider"]
    ours = {"encryption": 662.0, "aggregation": 27.0, "solve": 15.0, "total": 709.0}
    rows = [st.PhaseRow(f"phase {i}", "measured", None, None, ours.get(k), k) for i, k in enumerate(keys)]
    paper = [st.PhaseRow(f"phase {i}", "cited", None, None, v, k) for i, (k, v) in
             enumerate(zip(keys, [636.0, 116.0, None, 20.0, None, 772.0, None]))]
    res = StudyResult("ridge", "t", "quick", 1, "0", {})
    st._phase_claims(res, rows, paper, records, 20 * records, 33e-6 * 20 * records, 1.3e-6 * 20 * records, 2)
    agree, diverge = res.claims
    assert (agree.kind, agree.key, diverge.kind, diverge.key) == ("agreement", ["phase 0"], "divergence", ["phase 1"])
    assert agree.provenance == diverge.provenance == provenance
    assert agree.label() == "closest agreement"  # measured here: nothing predicted
    assert "+4 %" in agree.ours and "-77 %" in diverge.ours and "K80" in diverge.paper
    assert "33 us per ciphertext" in agree.why and "1.30 us per ciphertext" in diverge.why and "6.8 us" in diverge.why
    assert ("scaled linearly" in agree.ours) == (records != 1_000_000)
    assert res.headline == [agree.sentence(), diverge.sentence()]


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
