"""The isc-he-cnn claims: the best and worst predicted numbers become the agreement and the
divergence (a headline claim of the paper taking that role when it is one of them), the other
headline claims follow once each; Table 3's note counts the values beyond 10 %."""

from __future__ import annotations

from types import SimpleNamespace

from cryptoffload.report.result import Claim
from cryptoffload.profiles.sensitivity import Band, Swing
from cryptoffload.studies._bands import Banded
from cryptoffload.studies._isc_claims import (HEADLINE_ID, Headline, HeadlineRow, band_name, candidates, claims,
                                              table3_note)
from cryptoffload.studies._isc_paper import PREDICTED
from cryptoffload.studies._isc_tables import Table3, Table3Row

SETTING = SimpleNamespace(paper_like=True, main_is_paper=True, provenance="simulated", bandwidths=[1.0, 16.0])


def _t2(latencies_s: dict[float, float]) -> SimpleNamespace:
    return SimpleNamespace(runs={b: SimpleNamespace(mean_latency_s=s) for b, s in latencies_s.items()})


def _headline(ratio: float) -> Headline:
    """The paper's two-number claim under both its rows, and the CPU speedup's own claim."""
    lab_r, lab_t = "16 CSDs vs 16 FPGA&SSD: latency reduction (%)", "16 CSDs vs 16 FPGA&SSD: throughput ratio"
    both = Claim(paper="16 vs 16", ours="ours", provenance="simulated", table=HEADLINE_ID, key=[lab_r])
    cpu = Claim(paper="10.6x", ours="10.0x", provenance="derived", table=HEADLINE_ID, key=["cpu"])
    return Headline(16, [HeadlineRow(lab_r, "simulated", 72.0, 72.2), HeadlineRow(lab_t, "simulated", ratio, 3.6),
                         HeadlineRow("cpu", "derived", 10.0, 10.6)],
                    {lab_r: both, lab_t: both, "cpu": cpu})


def test_candidates_are_table2_points_and_headline_rows() -> None:
    c = candidates(_t2({1.0: 3.85, 16.0: 0.95}), _headline(4.5))  # type: ignore[arg-type]
    assert [(x.table, x.key, x.gbps, x.headline) for x in c] == [
        ("table2_latency_vs_bandwidth", ["1 GB/s", PREDICTED], 1.0, None),
        ("table2_latency_vs_bandwidth", ["16 GB/s", PREDICTED], 16.0, None),
        (HEADLINE_ID, ["16 CSDs vs 16 FPGA&SSD: latency reduction (%)"], None,
         "16 CSDs vs 16 FPGA&SSD: latency reduction (%)"),
        (HEADLINE_ID, ["16 CSDs vs 16 FPGA&SSD: throughput ratio"], None, "16 CSDs vs 16 FPGA&SSD: throughput ratio"),
        (HEADLINE_ID, ["cpu"], None, "cpu")]
    assert c[1].paper == "Table 2 at 16 GB/s: 1,055 ms" and c[1].ours == "predicted 950 ms (-10.0%)"
    assert c[3].ours == "predicted 4.5 (+25.0%)"


def test_a_headline_claim_takes_the_divergence_and_is_not_repeated() -> None:
    head = _headline(4.5)  # throughput ratio +25 %: the worst; 1 GB/s exact: the best
    out = claims(SETTING, _t2({1.0: 3.85, 16.0: 0.95}), head, [])  # type: ignore[arg-type]
    # no bands: the closest and the furthest are stated, not judged (an agreement needs a band)
    assert [(c.kind, c.table, c.key) for c in out] == [
        ("claim", "table2_latency_vs_bandwidth", ["1 GB/s", PREDICTED]),
        ("claim", HEADLINE_ID, ["16 CSDs vs 16 FPGA&SSD: latency reduction (%)"]),
        ("claim", HEADLINE_ID, ["cpu"])]  # the shared claim once, under neither of its two labels again
    assert out[1].paper == "16 vs 16" and out[1].why.startswith("our predicted FPGA compute")


def test_a_table2_point_diverging_most_is_a_claim_of_its_own() -> None:
    # throughput ratio exact: the agreement (the shared claim); 16 GB/s at -53 %: the divergence
    out = claims(SETTING, _t2({1.0: 3.9, 16.0: 0.5}), _headline(3.6), [])  # type: ignore[arg-type]
    assert [(c.kind, c.key) for c in out] == [
        ("claim", ["16 CSDs vs 16 FPGA&SSD: latency reduction (%)"]), ("claim", ["16 GB/s", PREDICTED]),
        ("claim", ["cpu"])]
    assert out[1].paper == "Table 2 at 16 GB/s: 1,055 ms" and out[1].why == ""  # no gap decomposed: no why
    # not the paper's own program: no agreement or divergence, the headline claims as they are
    other = claims(SimpleNamespace(**{**vars(SETTING), "main_is_paper": False}), _t2({1.0: 3.9}), _headline(3.6), [])
    assert [(c.kind, c.key) for c in other] == [("claim", ["16 CSDs vs 16 FPGA&SSD: latency reduction (%)"]),
                                                ("claim", ["cpu"])]


def _banded(name: str, nominal: float, low: float, high: float, paper: float) -> Banded:
    swing = Swing("keyswitch_s", 6.4e-4, 9.6e-4, low, high)
    return Banded(name, Band(nominal, low, high, (swing,), "2 corners"), paper, [])


def test_with_bands_a_claim_is_an_agreement_only_with_the_paper_inside() -> None:
    # the best candidate (1 GB/s, exact) has a band that misses the paper: a divergence naming the input
    bands = {"Table 2 at 1 GB/s (ms)": _banded("Table 2 at 1 GB/s (ms)", 3850.0, 3860.0, 3900.0, 3850.0),
             "16 CSDs vs 16 FPGA&SSD: throughput ratio": _banded("t", 4.5, 3.5, 4.6, 3.6)}
    out = claims(SETTING, _t2({1.0: 3.85, 16.0: 0.95}), _headline(4.5), [], bands)  # type: ignore[arg-type]
    first, shared = out[0], out[1]
    assert (first.kind, first.band, first.paper_value, first.closes) == ("divergence", [3860.0, 3900.0], 3850.0,
                                                                         "keyswitch_s")
    assert first.why.startswith("the paper's 3850 lies outside our band [3860, 3900]; keyswitch_s moves ours")
    # the worst candidate (throughput x4.5 vs x3.6) lies inside its band: an agreement, its reason kept
    assert (shared.kind, shared.band, shared.paper_value) == ("agreement", [3.5, 4.6], 3.6)
    assert shared.key == ["16 CSDs vs 16 FPGA&SSD: latency reduction (%)"] and shared.why.startswith("our predicted")
    assert band_name(candidates(_t2({16.0: 0.9}), _headline(3.6))[0]) == "Table 2 at 16 GB/s (ms)"  # type: ignore[arg-type]


def test_the_cpu_speedup_claim_carries_the_band_of_its_denominator() -> None:
    from cryptoffload.studies._isc_claims import CPU_SPEEDUP, _with_cpu_band

    c = Claim(paper="10.6x", ours="12.3x", provenance="simulated", table=HEADLINE_ID, key=[CPU_SPEEDUP])
    out = _with_cpu_band(c, {"Table 2 at 8 GB/s (ms)": _banded("x", 926.0, 826.0, 1316.0, 1071.0)})
    assert out.band == [11359 / 1316.0, 11359 / 826.0] and out.paper_value == 10.6 and out.kind == "claim"
    other = Claim(paper="x", ours="y", provenance="simulated", key=["cpu"])
    assert _with_cpu_band(other, {"Table 2 at 8 GB/s (ms)": _banded("x", 926.0, 826.0, 1316.0, 1071.0)}).band is None


def test_table3_note() -> None:
    ours = Table3Row(16, 3858.0, 1951.0, 1071.0 * 1.5, 4.147, 8.201, 14.939)  # CSD latency +50 %
    fine = Table3Row(3, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0)  # no paper row for 3 devices: not counted
    assert table3_note(Table3({}, {}, [fine, ours])) == [
        "Table 3: 1 of 6 values beyond 10 % (from +0% to +50%; largest k=16 csd_latency_ms +50%): each board's "
        "latency is Table 2's at its share of the lanes, so Table 3 inherits Table 2's gap (see table2_gap)"]
    assert table3_note(Table3({}, {}, [fine])) == []
