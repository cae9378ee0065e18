"""The provenance check: a value computed from inputs fitted to the paper's table it stands
beside must say ``fitted``; mixed tables must say which rows or columns are which; claims
follow the row they quote."""

from __future__ import annotations

import pytest

from cryptoffload.report.provenance import check_provenance, fits_from_sources, fitted_inputs, fitted_target
from cryptoffload.report.result import Claim, StudyResult, Table


def _res(*tables: Table, fits: dict[str, str] | None = None) -> StudyResult:
    r = StudyResult("s", "S", "quick", 1, "0", {})
    for t in tables:
        r.add(t)
    r.declare_fits(fits or {})
    return r


def _t2(prov: str = "simulated", **kw) -> Table:
    return Table("t2", "Table 2", ["bw", "latency_ms"], [["1 GB/s", 3842.0], ["32 GB/s", 1050.0]], prov,
                 paper=[["1 GB/s", 3850.0]], **kw)


@pytest.mark.parametrize(("source", "target"), [
    ("fitted to Table 2: 0.058 GB of conv weights", "table 2"),
    ("Fitted to the paper's Table 1's naive row", "table 1 naive row"),
    ("fitted to Table 1 naive row: least squares", "table 1 naive row"),
    ("fitted: QAT+S1 throughput = QHCS1 / 1.76", ""),
    ("fitted (jointly with request_s): see request_s", ""),
    ("fitted to the paper's ratios", ""),
    ("Suzuki and Yamana, Table 1: device DRAM 8 GB", None),
    ("derived: Table 3 gives 16 lanes", None),
    ("assumed: parallel accumulators", None),
])
def test_fitted_target_reads_profile_sources(source: str, target: str | None) -> None:
    assert fitted_target(source) == target


def test_fits_from_sources_keeps_only_fitted_values() -> None:
    fits = fits_from_sources("p", {"a.x": "fitted to Table 2: x", "a.y": "cited: HEAX", "b": "fitted: y"})
    assert fits == {"p:a.x": "table 2", "p:b": ""}


def test_a_fit_beside_its_own_table_must_say_fitted() -> None:
    fits = {"he_cnn_paper:phases.p1.weights_share": "Table 2"}
    bad = check_provenance(_res(_t2(reproduces="Table 2"), fits=fits))
    assert len(bad) == 1 and "row ['1 GB/s']" in bad[0] and "label it fitted" in bad[0]
    assert check_provenance(_res(_t2("fitted", reproduces="Table 2"), fits=fits)) == []


def test_fits_propagate_only_to_the_table_they_were_fitted_to_and_to_rows_that_use_them() -> None:
    fits = {"lanes:x16": "Table 3"}
    # fitted to Table 3, shown beside Table 2: a prediction
    assert check_provenance(_res(_t2(reproduces="Table 2"), fits=fits)) == []
    # a table that does not say what it reproduces is treated as the fitted one (errs to 'fitted')
    assert check_provenance(_res(_t2(), fits=fits)) != []
    # a table whose declared inputs do not include the fitted profile is a prediction
    assert check_provenance(_res(_t2(inputs=["heax_set_c"]), fits=fits)) == []
    # per-row inputs: only the row that uses the fit must say fitted
    t = Table("t2", "T", ["bw", "provenance", "latency_ms"], [["1 GB/s", "simulated", 3.0], ["1 GB/s*", "fitted", 3.0]],
              "mixed", paper=[["1 GB/s", None, 3.85], ["1 GB/s*", None, 3.85]], reproduces="Table 3",
              row_inputs=[["heax_set_c"], ["lanes"]])
    assert fitted_inputs(t, 1, fits) == ["lanes:x16"] and fitted_inputs(t, 0, fits) == []
    assert check_provenance(_res(t, fits=fits)) == []
    t.rows[1][1] = "simulated (lanes read off Table 3)"
    assert "row ['1 GB/s*']" in check_provenance(_res(t, fits=fits))[0]


def test_rows_without_a_paper_value_need_no_label() -> None:
    fits = {"p:f": "Table 2"}
    t = _t2(reproduces="Table 2", row_inputs=[["other"], ["p"]])
    assert check_provenance(_res(t, fits=fits)) == []  # 32 GB/s has no paper row


def test_column_provenance_is_per_value() -> None:
    fits = {"p:f": "Table 1"}
    t = Table("r", "R", ["ratio", "model", "here"], [["a", 1.0, 2.0]], "mixed", paper=[["a", 1.1, None]],
              reproduces="Table 1", column_provenance={"model": "simulated", "here": "measured"})
    assert "model computed from p:f" in check_provenance(_res(t, fits=fits))[0]
    t.column_provenance = {"model": "fitted", "here": "measured"}
    assert check_provenance(_res(t, fits=fits)) == []


def test_a_mixed_table_must_say_which_part_is_which() -> None:
    t = Table("m", "M", ["k", "a"], [["x", 1.0]], "mixed")
    assert "no 'provenance' column" in check_provenance(_res(t))[0]


def test_claims_follow_the_row_they_quote() -> None:
    fits = {"p:f": "Table 2"}
    r = _res(_t2("fitted", reproduces="Table 2"), fits=fits)
    r.claim(Claim("3,850 ms", "3,842 ms", "simulated", table="t2", key=["1 GB/s"], band=[3800.0, 3900.0],
                  most_sensitive="p:f"))
    assert "quotes a fitted row" in check_provenance(r)[0]
    r.claims[0].provenance = "fitted"
    assert check_provenance(r) == []
    r.claim(Claim("x", "y", "simulated", table="t2", key=["9 GB/s"], band=[1.0, 1.0]))
    assert "has no row" in check_provenance(r)[0]


def test_a_claim_says_what_its_row_says() -> None:
    """A row labelled in a provenance column (a cited time over our latency: derived) makes a
    claim of that label, not the table's usual one."""
    t = Table("h", "Headline", ["claim", "provenance", "value"],
              [["ratio", "simulated", 3.5], ["speedup vs CPU", "derived", 10.2]], "mixed")
    r = _res(t)
    r.claim(Claim("10.6x", "10.2x", "simulated", table="h", key=["speedup vs CPU"], band=[10.0, 10.4],
                  most_sensitive="p:f"))
    assert "labelled derived but says simulated" in check_provenance(r)[0]
    r.claims[0].provenance = "derived"
    assert check_provenance(r) == []


def test_every_claim_carries_its_band_and_names_what_moves_it() -> None:
    r = _res(_t2(reproduces="Table 2"), fits={})
    r.claim(Claim("3,850 ms", "3,842 ms", "simulated", table="t2", key=["1 GB/s"]))
    assert check_provenance(r) == ["claim '3,842 ms': no band (every headline claim carries the band its inputs and "
                                   "noise allow: studies/bands.py, profiles/sensitivity.py)"]
    r.claims[0].band = [3800.0, 3900.0]
    assert check_provenance(r) == ["claim '3,842 ms': its band does not name its most sensitive input"]
    r.claims[0].band = [3842.0, 3842.0]          # nothing moves it: nothing to name
    assert check_provenance(r) == []
    r.claims[0].band, r.claims[0].most_sensitive = [3800.0, 3900.0], "p:f"
    assert check_provenance(r) == []


def test_a_fit_to_one_row_predicts_the_other_rows_of_its_table() -> None:
    fits = {"u280:ops.rotate_s": "table 1 naive row"}
    naive = Table("n", "naive", ["devices", "ms"], [[2, 8.05]], "simulated", paper=[[2, 8.049]], reproduces="Table 1 naive row")
    tuned = Table("t", "tuned", ["devices", "ms"], [[2, 7.6]], "simulated", paper=[[2, 7.447]], reproduces="Table 1 tuned row")
    whole = Table("w", "whole", ["devices", "ms"], [[2, 7.6]], "simulated", paper=[[2, 7.447]], reproduces="Table 1")
    assert check_provenance(_res(naive, fits=fits)) != []   # the fitted row itself
    assert check_provenance(_res(tuned, fits=fits)) == []   # another row: a prediction
    assert check_provenance(_res(whole, fits=fits)) != []   # the whole table holds the fitted row
