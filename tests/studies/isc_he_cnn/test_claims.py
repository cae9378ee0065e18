"""The isc-he-cnn verdicts and claims (issue 35): every cell beside a paper value is judged by its
band (the fitted program's not judged), the claims are the paper's headline with their verdicts;
Table 3's note counts the values beyond 10 %."""

from __future__ import annotations

from types import SimpleNamespace

from cryptoffload.profiles.sensitivity import Band, Swing
from cryptoffload.report.result import Table
from cryptoffload.studies.bands import Banded
from cryptoffload.studies.isc_he_cnn.claims import CPU_SPEEDUP, HEADLINE_ID, TABLE2_ID, Headline, claims, table3_note, verdicts
from cryptoffload.studies.isc_he_cnn.paper import FITTED, PREDICTED
from cryptoffload.studies.isc_he_cnn.tables import Table3, Table3Row
from cryptoffload.studies.verdicts import Judging

SETTING = SimpleNamespace(paper_like=True, main_is_paper=True, provenance="simulated", bandwidths=[1.0, 16.0],
                          label=PREDICTED)
LAB_R, LAB_T = "16 CSDs vs 16 FPGA&SSD: latency reduction (%)", "16 CSDs vs 16 FPGA&SSD: throughput ratio"
FULL = Judging(False, "full", "cryptoffload study isc-he-cnn --out DIR")


def _tables() -> dict[str, Table]:
    t2 = Table(TABLE2_ID, "Table 2", ["bandwidth", "program", "provenance", "latency_ms", "speedup_vs_cpu"],
               [["1 GB/s", PREDICTED, "simulated", 3656.0, 11359 / 3656.0],
                ["16 GB/s", PREDICTED, "simulated", 882.0, 11359 / 882.0],
                ["1 GB/s", FITTED, "fitted", 3842.0, 11359 / 3842.0],
                ["CPU, one thread", "", "cited", 11359.0, 1.0]], "mixed",
               paper=[["1 GB/s", PREDICTED, None, 3850.0, 11359 / 3850.0],
                      ["16 GB/s", PREDICTED, None, 1055.0, 11359 / 1055.0],
                      ["1 GB/s", FITTED, None, 3850.0, 11359 / 3850.0], ["CPU, one thread", "", None, 11359.0, 1.0]],
               key_columns=2)
    head = Table(HEADLINE_ID, "Headline", ["claim", "provenance", "value"],
                 [[LAB_R, "simulated", 74.8], [LAB_T, "simulated", 3.96], [CPU_SPEEDUP, "derived", 12.3]], "mixed",
                 paper=[[LAB_R, None, 72.2], [LAB_T, None, 3.6], [CPU_SPEEDUP, None, 10.6]])
    return {t2.id: t2, head.id: head}


def _banded(name: str, nominal: float, low: float, high: float, paper: float) -> Banded:
    swing = Swing("keyswitch_s", 6.4e-4, 9.6e-4, low, high)
    return Banded(name, Band(nominal, low, high, (swing,), "8 corners"), paper, [])


BANDS = {"Table 2 at 1 GB/s (ms)": _banded("t", 3656.0, 3600.0, 3700.0, 3850.0),
         "Table 2 at 16 GB/s (ms)": _banded("t", 882.0, 780.0, 1270.0, 1055.0),
         "Table 2 at 8 GB/s (ms)": _banded("t", 926.0, 826.0, 1316.0, 1071.0),
         LAB_R: _banded(LAB_R, 74.8, 64.4, 77.5, 72.2), LAB_T: _banded(LAB_T, 3.96, 2.0, 5.5, 3.6)}


def test_every_cell_beside_a_paper_value_gets_its_verdict() -> None:
    judged = verdicts(SETTING, _tables(), BANDS, FULL)  # type: ignore[arg-type]
    kinds = {(v.table, v.key[0], v.key[-1] if v.table == TABLE2_ID else "", v.column): v.kind for v in judged}
    assert kinds == {
        (TABLE2_ID, "1 GB/s", PREDICTED, "latency_ms"): "divergence",       # 3,850 outside [3,600, 3,700]
        (TABLE2_ID, "1 GB/s", PREDICTED, "speedup_vs_cpu"): "divergence",   # the same band, CPU over it
        (TABLE2_ID, "16 GB/s", PREDICTED, "latency_ms"): "agreement",       # half-width 245 <= 25 % of 1,055
        (TABLE2_ID, "16 GB/s", PREDICTED, "speedup_vs_cpu"): "inconclusive",  # 11,359 / it: 2.81 > 25 % of 10.77
        (TABLE2_ID, "1 GB/s", FITTED, "latency_ms"): "fitted",              # fitted to this very table
        (TABLE2_ID, "1 GB/s", FITTED, "speedup_vs_cpu"): "fitted",
        (HEADLINE_ID, LAB_R, "", "value"): "agreement",                     # [64.4, 77.5] holds 72.2, far from 0
        (HEADLINE_ID, LAB_T, "", "value"): "inconclusive",                  # [2.0, 5.5] holds 1: no gain
        (HEADLINE_ID, CPU_SPEEDUP, "", "value"): "agreement"}               # 11,359 / [826, 1,316] holds 10.6
    cpu = next(v for v in judged if v.key == [CPU_SPEEDUP])
    assert cpu.band == [11359 / 1316.0, 11359 / 826.0] and cpu.provenance == "derived"
    sp = next(v for v in judged if v.key == ["1 GB/s", PREDICTED] and v.column == "speedup_vs_cpu")
    assert sp.paper_source.startswith("derived: the paper's CPU 11,359 ms / its 1 GB/s latency 3,850 ms")


def test_the_claims_are_the_papers_headline_each_with_its_verdict() -> None:
    judged = verdicts(SETTING, _tables(), BANDS, FULL)  # type: ignore[arg-type]
    out = claims(Headline(16, []), judged, [])
    assert [(c.kind, c.key, c.column) for c in out] == [("agreement", [LAB_R], "value"),
                                                        ("inconclusive", [LAB_T], "value"),
                                                        ("agreement", [CPU_SPEEDUP], "value")]
    assert out[0].ours == "16 CSDs vs 16 FPGA&SSD: latency -74.8 %" and out[0].paper.endswith("-72.2 %")


def test_a_quick_run_judges_nothing_it_could_judge_otherwise_and_another_program_nothing() -> None:
    quick = Judging(True, "sample", "cryptoffload study isc-he-cnn --out DIR", "coarser steps")
    judged = verdicts(SETTING, _tables(), BANDS, quick)  # type: ignore[arg-type]
    assert {v.kind for v in judged} == {"not judged in quick mode", "fitted"}
    other = SimpleNamespace(**{**vars(SETTING), "paper_like": False})
    assert verdicts(other, _tables(), BANDS, FULL) == []  # type: ignore[arg-type]


def test_table3_note() -> None:
    ours = Table3Row(16, 3858.0, 1951.0, 1071.0 * 1.5, 4.147, 8.201, 14.939)  # CSD latency +50 %
    fine = Table3Row(3, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0)  # no paper row for 3 devices: not counted
    assert table3_note(Table3({}, {}, [fine, ours])) == [
        "Table 3: 1 of 6 values beyond 10 % (from +0% to +50%; largest k=16 csd_latency_ms +50%): each board's "
        "latency is Table 2's at its share of the lanes, so Table 3 inherits Table 2's gap (see table2_gap)"]
    assert table3_note(Table3({}, {}, [fine])) == []
