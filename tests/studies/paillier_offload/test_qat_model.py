"""The paillier-offload study's simulated half on its own: the five designs' rows labelled cited,
fitted or simulated with the reason, the ceiling from the cited card rate, the ratios beside
the paper's, and the headline claims -- without running the measured half."""

from __future__ import annotations

import pytest

from cryptoffload.report.provenance import check_provenance
from cryptoffload.report.verdicts import check_verdicts
from cryptoffload.studies.verdicts import Judging
from cryptoffload.report.result import StudyResult
from cryptoffload.studies.frame import add_headline
from cryptoffload.report.rows import table_of
from cryptoffload.sim.qat import model as qat
from cryptoffload.sim.qat.params import CARD_SCALINGS, load_qat_params
from cryptoffload.studies.paillier_offload import qat_model as qm


@pytest.fixture(scope="module")
def model() -> tuple[StudyResult, qm.QatModel]:
    m = qm.run_model(qat.PROFILE_NAME, "qat-measured", 600, 1, [4, 16])
    res = StudyResult("paillier-offload", "test", "quick", 1, "test", {}, fits=dict(m.fits))
    return res, m


def test_rows_are_labelled_and_the_ceiling_is_the_cited_card_rate(model) -> None:
    _, m = model
    labels = [r.implementation for r in m.rows]
    assert labels == [qm.SIM_LABELS[d] for d in qat.QAT_DESIGNS] + [qm.CEILING]
    prov = {r.implementation: r.provenance.split(" ", 1)[0] for r in m.rows}
    assert prov["SW (libhcs)"] == "cited" and prov[qm.CEILING] == "simulated"
    assert all(prov[qm.SIM_LABELS[d]] == "fitted" for d in qat.QAT_DESIGNS if d != "sw")
    assert m.ceiling_ops == pytest.approx(load_qat_params(qat.PROFILE_NAME, "qat-measured").card_modexp_per_s / 2)
    assert m.rows[-1].throughput_ops == m.ceiling_ops and m.paper_rows[-1].throughput_ops == qm.QHCS1_OPS
    assert sorted(m.sweep) == [4, 16] and m.profile_key == qat.PROFILE_NAME
    assert len(m.row_inputs) == len(m.rows) == len(m.paper_rows)


def test_tables_and_claims_pass_the_provenance_check(model) -> None:
    res, m = model                                           # with the model's fits declared
    res.add(qm.ratio_table(m, lambda *_: None, None))
    res.add(qm.readings_table(qat.PROFILE_NAME, m.sim["sw"].throughput_ops))
    res.add(table_of(qm.Table1Row, m.rows, paper=m.paper_rows, id="table1_implementations",
                     title="the model's rows, as the study shows them", provenance="mixed", reproduces="Table 1",
                     row_inputs=m.row_inputs))
    judged = qm.verdicts(res.tables, {}, Judging(res.mode == "quick", "full", "cryptoffload study paillier-offload"))
    claims, res.notes = qm.claims(m, judged, {})
    add_headline(res, claims)
    ratios = {r[0]: r for r in res.tables["table1_ratios"].rows}
    assert ratios["QHCS2 / QHCS1 mean latency"][1] == "simulated" and ratios["S2 / S1 throughput"][1] == "fitted"
    assert all(r[3] is None for r in ratios.values())       # nothing measured here in this test
    assert [r[0] for r in res.tables["qat_card_readings"].rows] == list(CARD_SCALINGS)
    # without bands (test_qat_bands.py: with them) the predicted cells are inconclusive, the fitted ones fitted
    assert [c.kind for c in res.claims] == ["inconclusive", "inconclusive"] and all(c.why for c in res.claims)
    assert all(c.band is None for c in res.claims)
    assert {v.kind for v in judged} == {"inconclusive", "fitted"}
    assert [v.key[0] for v in judged if v.kind == "inconclusive"] == [qm.CEILING, "QHCS2 / QHCS1 mean latency",
                                                                      "QHCS1 ceiling / SW throughput"]
    res.verdicts += judged
    assert check_provenance(res) == [] and check_verdicts(res) == []  # every cell judged, the labels honest
    assert res.tables["table1_implementations"].columns == ["implementation", "provenance", "platform",
                                                            "throughput_ops", "mean_latency_ms", "p99_latency_ms"]


def test_the_model_inputs_say_what_each_source_states(model) -> None:
    t = qm.inputs_table(qat.PROFILE_NAME)
    assert t.columns == ["input", "value", "provenance", "source"]
    prov = {r[0]: r[2] for r in t.rows}
    assert prov["card.modexp_latency_s"] == prov["cpu.request_s"] == prov["workload.qhcs_coroutines"] == "fitted"
    assert prov["card.rsa2k_private_per_s"] == "cited"
    # issue 26: the SW figure is arithmetic on the paper's QHCS1 figures, the CPU costs our stored run
    assert prov["cpu.paper_sw_encryption_s"] == "derived"
    assert prov["cpu.measured_gmp_powm_s"] == "stored"
    src = {r[0]: r[3] for r in t.rows}
    assert "1151 / 0.042" in src["cpu.paper_sw_encryption_s"]
    assert "[unverified: " in src["card.reference_rsa1k_private_per_s"]
    assert "[unverified: " in src["card.reference_rsa2k_private_per_s"]
    assert "[unverified" not in src["card.rsa2k_private_per_s"]
