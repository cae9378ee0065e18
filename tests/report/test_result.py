"""Study results: the Table invariants, the one writer (complete result or nothing that looks
complete), result.json as the architecture's contract says, and the PNG figures."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest

from cryptoffload.report.plots import line_plot
from cryptoffload.report.result import Claim, StudyResult, Table, load_result, write_result
from cryptoffload.report.verdicts import verdict_for

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
CONTRACT_KEYS = {"study", "mode", "seed", "version", "machine", "tables", "figures", "profiles", "notes"}


def _table(**kw) -> Table:
    args = dict(id="table6_p90_vs_oracle", title="Table 6", columns=["rate", "predict", "oracle_p90_s"],
                rows=[[10, 1.02, 0.0005], [100, 1.5, 0.0009]], provenance="simulated",
                paper=[[10, 1.0, 0.000508], [200, 2.02, None]])
    args.update(kw)
    return Table(**args)


def _result(**kw) -> StudyResult:
    res = StudyResult(study="fpga-reconfig", title="FPGA study", mode="quick", seed=1, version="0.1.0",
                      machine={"cpu": "test cpu", "cores": 2}, profiles=["profiles/virtex2_ciphers.toml"],
                      notes=["a note"], headline=["a headline"], paper="Niwa et al.", elapsed_s=1.25,
                      extra={"claims": {"ordering": True}})
    t6 = res.add(_table())
    res.add(Table("table7_cipher_mix", "Table 7", ["cipher", "share"], [["AES-ECB", 0.1], ["DES-ECB", 0.9]], "cited"))
    res.verdicts += [verdict_for(t6, [10], "predict", figure="predict at 10", paper_source="cited: Table 6",
                                 alternative=2.0, alternative_what="Nopredict", band=[0.99, 1.05], quick=True,
                                 basis="sample", rerun="cryptoffload study fpga-reconfig --out DIR"),
                     verdict_for(t6, [10], "oracle_p90_s", figure="oracle at 10", paper_source="cited: Table 6",
                                 alternative=0.0, alternative_what="none", band=None, quick=True, why="one seed")]
    for k, v in kw.items():
        setattr(res, k, v)
    return res


def _png(path: Path) -> None:
    line_plot(path, [1, 10, 100], {"a": [1.0, 2.0, 3.0]}, title="t", xlabel="x", ylabel="y")


def _read_csv(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


# ---- Table --------------------------------------------------------------------------------
def test_table_rejects_a_row_of_the_wrong_width() -> None:
    with pytest.raises(ValueError, match="does not match columns"):
        _table(rows=[[10, 1.0]])
    with pytest.raises(ValueError, match="does not match columns"):
        _table(rows=[[10, 1.0, 2.0, 3.0]])


def test_table_rejects_a_paper_row_of_the_wrong_width() -> None:
    with pytest.raises(ValueError, match="does not match columns"):
        _table(paper=[[10, 1.0]])


@pytest.mark.parametrize("prov", ["", "guessed", "Simulated", None])
def test_table_rejects_bad_provenance(prov) -> None:
    with pytest.raises(ValueError, match="provenance"):
        _table(provenance=prov)


@pytest.mark.parametrize("prov", ["simulated", "measured", "fitted", "cited", "stored", "mixed"])
def test_table_accepts_each_provenance(prov: str) -> None:
    assert _table(provenance=prov).provenance == prov


def test_paper_row_matches_on_key_columns() -> None:
    t = _table()
    assert t.paper_row([10]) == [10, 1.0, 0.000508]
    assert t.paper_row([100]) is None
    t2 = Table("t", "t", ["rate", "policy", "v"], [[10, "a", 1.0]], "simulated",
               paper=[[10, "b", 2.0], [10, "a", 3.0]], key_columns=2)
    assert t2.paper_row([10, "a"]) == [10, "a", 3.0]


# ---- write_result -------------------------------------------------------------------------
def test_write_result_writes_csvs_figures_and_contract_json(tmp_path: Path) -> None:
    out = tmp_path / "out" / "study"
    res = _result()
    path = write_result(res, out, [("p90_vs_rate.png", _png)])
    assert path == out / "result.json"
    assert sorted(p.name for p in out.iterdir()) == sorted([
        "result.json", "p90_vs_rate.png", "table6_p90_vs_oracle.csv", "table6_p90_vs_oracle_paper.csv",
        "table7_cipher_mix.csv"])
    assert (out / "p90_vs_rate.png").read_bytes()[:8] == PNG_MAGIC

    # every CSV row says where its numbers come from
    assert _read_csv(out / "table6_p90_vs_oracle.csv") == [
        ["rate", "predict", "oracle_p90_s", "provenance"], ["10", "1.02", "0.0005", "simulated"],
        ["100", "1.5", "0.0009", "simulated"]]
    # None is an empty cell
    assert _read_csv(out / "table6_p90_vs_oracle_paper.csv")[2] == ["200", "2.02", "", "cited"]

    data = json.loads(path.read_text(encoding="utf-8"))
    assert CONTRACT_KEYS <= set(data)
    assert (data["study"], data["mode"], data["seed"], data["version"]) == ("fpga-reconfig", "quick", 1, "0.1.0")
    assert data["machine"] == {"cpu": "test cpu", "cores": 2}
    assert data["figures"] == ["p90_vs_rate.png"]
    assert data["profiles"] == ["profiles/virtex2_ciphers.toml"]
    assert data["notes"] == ["a note"]
    assert set(data["tables"]) == {"table6_p90_vs_oracle", "table7_cipher_mix"}
    for t in data["tables"].values():
        assert {"columns", "rows", "paper", "provenance"} <= set(t)
    t6 = data["tables"]["table6_p90_vs_oracle"]
    assert t6["columns"] == ["rate", "predict", "oracle_p90_s"]
    assert t6["rows"] == [[10, 1.02, 0.0005], [100, 1.5, 0.0009]]
    assert t6["paper"] == [[10, 1.0, 0.000508], [200, 2.02, None]]
    assert t6["provenance"] == "simulated"
    assert data["tables"]["table7_cipher_mix"]["paper"] is None
    assert data["tables"]["table7_cipher_mix"]["provenance"] == "cited"
    assert not [p for p in out.iterdir() if p.name.startswith(".partial-")]
    # every paper cell has its verdict; a quick run leaves what the full run could judge otherwise
    assert data["scoreboard"] == {"rows": 2, "agreement": 0, "divergence": 0, "inconclusive": 1, "fitted": 0,
                                  "not judged in quick mode": 1}
    assert [v["kind"] for v in data["verdicts"]] == ["not judged in quick mode", "inconclusive"]
    assert data["verdicts"][0]["reason"].endswith("could differ from the full run's: cryptoffload study fpga-reconfig "
                                                  "--out DIR")
    # the paper's CSV says where its numbers come from
    assert _read_csv(out / "table6_p90_vs_oracle_paper.csv")[0] == ["rate", "predict", "oracle_p90_s", "provenance"]


def test_nan_and_inf_become_null_and_numpy_becomes_plain_numbers(tmp_path: Path) -> None:
    res = _result()
    res.tables.clear()
    res.verdicts.clear()
    res.add(Table("t", "t", ["k", "a", "b", "c"],
                  [[1, math.nan, math.inf, -math.inf], [np.int64(2), np.float64(0.5), np.float32(0.25), np.nan]],
                  "simulated", paper=[[1, float("nan"), 1.0, None]]))
    res.extra = {"x": np.float64(math.nan), "y": [np.int64(3), math.inf]}
    path = write_result(res, tmp_path)
    text = path.read_text(encoding="utf-8")
    assert "NaN" not in text and "Infinity" not in text
    data = json.loads(text)
    t = data["tables"]["t"]
    assert t["rows"] == [[1, None, None, None], [2, 0.5, 0.25, None]]
    assert t["paper"] == [[1, None, 1.0, None]]
    assert data["extra"] == {"x": None, "y": [3, None]}
    assert _read_csv(tmp_path / "t.csv")[1:] == [["1", "", "", "", "simulated"], ["2", "0.5", "0.25", "", "simulated"]]


def test_load_result_round_trips(tmp_path: Path) -> None:
    res = _result()
    path = write_result(res, tmp_path, [("fig.png", _png)])
    back = load_result(path)
    assert back == res
    assert back.tables["table6_p90_vs_oracle"].paper_row([10]) == [10, 1.0, 0.000508]
    assert back.figures == ["fig.png"]


def test_rewrite_replaces_the_result(tmp_path: Path) -> None:
    write_result(_result(notes=["first"]), tmp_path)
    write_result(_result(notes=["second"]), tmp_path)
    assert load_result(tmp_path / "result.json").notes == ["second"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".partial-")]


def _boom(path: Path) -> None:
    path.write_bytes(b"half a png")
    raise RuntimeError("figure failed")


def test_failing_figure_leaves_nothing_in_a_new_folder(tmp_path: Path) -> None:
    out = tmp_path / "new"
    with pytest.raises(RuntimeError, match="figure failed"):
        write_result(_result(), out, [("ok.png", _png), ("bad.png", _boom)])
    # The folder itself may have been created, but it holds nothing: no result.json, no CSV,
    # no figure, no staging folder.
    assert not out.exists() or list(out.iterdir()) == []


def test_failing_figure_keeps_the_previous_complete_result_untouched(tmp_path: Path) -> None:
    """What the code does: the old result is removed only once every new file is staged, so a
    failure while drawing leaves the previous run's files, result.json included, exactly as
    they were (a complete older result, never a mix of old and new)."""
    old = _result(notes=["old run"])
    write_result(old, tmp_path, [("ok.png", _png)])
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    new = _result(notes=["new run"])
    new.tables["table6_p90_vs_oracle"].rows = [[10, 9.99, 9.99], [100, 9.99, 9.99]]
    new.verdicts.clear()
    new.tables["table6_p90_vs_oracle"].unjudged = "a test of the writer, not of the verdicts"
    new.add(Table("extra_table", "extra", ["a"], [[1]], "simulated"))
    with pytest.raises(RuntimeError):
        write_result(new, tmp_path, [("ok.png", _png), ("bad.png", _boom)])
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert after == before
    assert load_result(tmp_path / "result.json").notes == ["old run"]


def test_failing_csv_leaves_nothing(tmp_path: Path) -> None:
    class Unprintable:
        def __str__(self) -> str:
            raise RuntimeError("cannot print")

    res = _result()
    res.add(Table("bad", "bad", ["a"], [[Unprintable()]], "simulated"))
    with pytest.raises(RuntimeError):
        write_result(res, tmp_path / "o")
    assert not (tmp_path / "o").exists() or list((tmp_path / "o").iterdir()) == []


# ---- plots --------------------------------------------------------------------------------
def test_line_plot_writes_a_png_and_closes_its_figure(tmp_path: Path) -> None:
    before = plt.get_fignums()
    path = tmp_path / "p.png"
    line_plot(path, [10, 100, 1000], {"predict": [0.1, 0.2, 0.4], "oracle": [0.1, 0.15, 0.3]},
              title="p90", xlabel="rate", ylabel="s", paper={"predict": [0.1, 0.3]}, paper_x=[10, 1000],
              hline=1.0, subtitle="sub")
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC
    assert len(data) > 1000
    assert plt.get_fignums() == before


def test_line_plot_linear_axes(tmp_path: Path) -> None:
    path = tmp_path / "lin.png"
    line_plot(path, [0, 1, 2], {"a": [0.0, -1.0, 2.0]}, title="t", xlabel="x", ylabel="y", logx=False, logy=False)
    assert path.read_bytes()[:8] == PNG_MAGIC


# ---- provenance: fitted, per row, per column, claims ----------------------------------------
def _fitted_result() -> StudyResult:
    res = _result()
    res.tables.clear()
    res.verdicts.clear()
    res.declare_fits({"u280:ops.rotate_s": "Table 1"})
    t1 = res.add(Table("table1", "Table 1", ["devices", "provenance", "naive_ms"],
                       [[1, "fitted", 14.3], [2, "simulated", 8.0]], "mixed", paper=[[1, None, 14.297]],
                       reproduces="Table 1", row_inputs=[["u280"], ["cited_costs"]]))
    res.verdicts.append(verdict_for(t1, [1], "naive_ms", figure="naive at 1", paper_source="cited: Table 1",
                                    alternative=0.0, alternative_what="none", band=None, quick=True))
    res.add(Table("ratios", "Ratios", ["ratio", "model", "here"], [["a/b", 1.1, 1.3]], "mixed",
                  column_provenance={"model": "simulated", "here": "measured"}))
    res.claim(Claim(paper="14.297 ms", ours="14.3 ms", provenance="fitted", table="table1", key=[1],
                    kind="claim", band=[14.3, 14.3]))
    return res


def test_fitted_rows_columns_and_claims_round_trip(tmp_path: Path) -> None:
    res = _fitted_result()
    path = write_result(res, tmp_path)
    back = load_result(path)
    t = back.tables["table1"]
    assert (t.reproduces, t.row_inputs, t.provenance) == ("Table 1", [["u280"], ["cited_costs"]], "mixed")
    assert [t.row_provenance(i) for i in range(2)] == ["fitted", "simulated"]
    assert back.tables["ratios"].cell_provenance(0, "here") == "measured"
    assert back.fits == {"u280:ops.rotate_s": "Table 1"}
    assert back.claims[0].provenance == "fitted" and back.claims[0].key == [1]
    assert back.headline[-1] == "14.3 ms (paper: 14.297 ms) — fitted; band 14.3 (no input moves it)"
    # a column-mixed table's CSV says each column's provenance
    assert _read_csv(tmp_path / "ratios.csv")[1] == ["a/b", "1.1", "1.3", "model: simulated; here: measured"]
    # a table with its own provenance column is written as it is
    assert _read_csv(tmp_path / "table1.csv")[0] == ["devices", "provenance", "naive_ms"]


def test_write_result_refuses_a_fit_labelled_as_a_prediction(tmp_path: Path) -> None:
    res = _fitted_result()
    res.tables["table1"].rows[0][1] = "simulated"
    with pytest.raises(ValueError, match="fitted to 'Table 1'.*label it fitted"):
        write_result(res, tmp_path / "o")
    assert not (tmp_path / "o" / "result.json").exists()


def test_table_rejects_inconsistent_declarations() -> None:
    with pytest.raises(ValueError, match="row_inputs"):
        _table(row_inputs=[["a"]])
    with pytest.raises(ValueError, match="not a column"):
        _table(column_provenance={"nope": "simulated"})
    with pytest.raises(ValueError, match="provenance must be one of"):
        _table(column_provenance={"predict": "guessed"})
    with pytest.raises(ValueError, match="claim provenance"):
        Claim(paper="x", ours="y", provenance="mixed")


def test_a_claims_sentence_says_what_it_is_and_only_a_simulated_one_is_predicted() -> None:
    assert Claim("1.18", "1.08", "simulated", kind="agreement", band=[1.1, 1.2], paper_value=1.18,
                 alternative=0.0).sentence() == \
        "Predicted agreement, inside our band: 1.08 (paper: 1.18) — simulated; band 1.1 .. 1.2"
    assert Claim("636 s", "662 s", "measured", kind="agreement", band=[630.0, 670.0], paper_value=636.0,
                 alternative=0.0).sentence().startswith("Agreement, inside our band: 662 s")
    assert Claim("x", "y", "fitted", kind="divergence", why="w", band=[2.0, 3.0], paper_value=1.0,
                 alternative=0.0).sentence() == "Divergence, outside our band: y (paper: x) — fitted; band 2 .. 3; w"
    assert Claim("x", "y", "simulated", kind="inconclusive", why="w").label() == \
        "inconclusive: our band is too wide to tell"
    assert Claim("x", "y", "cited").label() == "the paper's claim"
    assert Claim("x", "y", "cited", why="w").sentence() == "y (paper: x) — cited; w"


@pytest.mark.parametrize("kind", ["agreement", "divergence"])
def test_an_agreement_or_a_divergence_needs_a_band_and_the_papers_value(kind: str) -> None:
    """Judging against the paper needs our band: without one a claim is stated, not judged; a
    result.json written before bands reads back that way."""
    with pytest.raises(ValueError, match=f"an {kind} with the paper is judged against our band"):
        Claim("1.18", "1.08", "simulated", kind=kind)
    with pytest.raises(ValueError, match="judged against our band"):
        Claim("1.18", "1.08", "simulated", kind=kind, band=[1.0, 1.2])
    with pytest.raises(ValueError, match="judged against our band"):  # no alternative: no effect to judge
        Claim("1.18", "1.08", "simulated", kind=kind, band=[1.0, 1.2], paper_value=1.18)
    old = Claim.from_contract({"paper": "1.18", "ours": "1.08", "provenance": "simulated", "kind": kind})
    assert old.kind == "claim"
    with pytest.raises(ValueError, match="'agreement' by the rule"):
        Claim("1.18", "1.08", "simulated", kind="divergence", band=[1.1, 1.2], paper_value=1.18, alternative=0.0)


# ---- issue 26: claims carry their band --------------------------------------------------------
def _banded(paper_value: float, **kw) -> Claim:
    args = dict(paper="1.18", ours="1.26", provenance="simulated", band=[1.1, 1.3], paper_value=paper_value,
                most_sensitive="reconfig_s", closes="slots", table="t", key=[1], band_method="4 corners",
                alternative=0.0)
    args.update(kw)
    return Claim.judged(**args)


def test_a_claim_is_an_agreement_only_with_the_paper_inside_an_informative_band() -> None:
    inside = _banded(1.18)
    assert (inside.kind, inside.closes, inside.why, inside.inside) == ("agreement", "", "", True)
    # the same band against an alternative it does not exclude (Oracle's own 1.0 is 0.18 away; the band is 0.2 wide)
    wide = _banded(1.18, alternative=1.0)
    assert wide.kind == "inconclusive" and wide.why.startswith("the band [1.1, 1.3] is too wide to judge")
    assert _banded(1.1).kind == "agreement" and _banded(1.3).kind == "agreement"  # the ends are inside
    out = _banded(1.05, why="our tuned interval")
    assert out.kind == "divergence" and out.closes == "slots"
    assert out.why == ("the paper's 1.05 lies outside our band [1.1, 1.3]; slots moves ours furthest towards it; "
                       "our tuned interval")
    assert _banded(1.05, closes="").why == "the paper's 1.05 lies outside our band [1.1, 1.3]; no input of ours moves towards it"
    with pytest.raises(ValueError, match="'divergence' by the rule"):
        Claim("1.05", "1.26", "simulated", kind="agreement", band=[1.1, 1.3], paper_value=1.05, alternative=0.0)
    with pytest.raises(ValueError, match=r"band must be \[low, high\]"):
        Claim("x", "y", "simulated", band=[1.3, 1.1])


def test_a_paper_figure_given_in_words_is_inside_when_its_stated_range_meets_the_band() -> None:
    # "half" at one digit is 0.45 .. 0.55: it meets [0.52, 0.53] though the point 0.5 does not
    half = _banded(0.5, band=[0.52, 0.53], paper_range=[0.45, 0.55])
    assert half.kind == "agreement" and half.inside and half.paper_range == [0.45, 0.55]
    assert half.label() == "predicted agreement, the paper's range meets our band"
    assert half.band_text().startswith("band 0.52 .. 0.53 against the paper's 0.45 .. 0.55 (its value at its stated precision)")
    assert _banded(0.5, band=[0.52, 0.53]).kind == "divergence"  # the point alone: outside
    far = _banded(0.5, band=[0.56, 0.6], paper_range=[0.45, 0.55])
    assert far.kind == "divergence" and far.why.startswith("the paper's 0.45 .. 0.55 lies outside our band [0.56, 0.6]")
    with pytest.raises(ValueError, match="paper_range must be"):
        Claim("x", "y", "simulated", band=[0.52, 0.53], paper_value=0.5, paper_range=[0.51, 0.55])
    # a quick run whose band is not the full run's says so instead of judging
    assert _banded(0.5, band=[0.52, 0.53], paper_range=[0.45, 0.55], quick_basis="sample").kind == \
        "not judged in quick mode"
    back = Claim.from_contract(half.to_contract())
    assert back.paper_range == [0.45, 0.55] and back.kind == "agreement"


def test_a_band_wider_than_the_effect_is_inconclusive_and_says_within_noise() -> None:
    c = _banded(0.992, band=[0.95, 1.01], alternative=1.0, most_sensitive="tls fetch noise")
    assert c.within_noise and c.kind == "inconclusive" and c.effect == pytest.approx(-0.008)
    assert c.band_text() == ("band 0.95 .. 1.01, most sensitive to tls fetch noise; within noise "
                             "(the band is wider than the 0.008 effect)")
    assert not _banded(1.18).within_noise
    assert _banded(1.18).label() == "predicted agreement, inside our band" and _banded(1.05).label() == \
        "divergence, outside our band"


def test_a_banded_claim_round_trips_and_an_old_result_still_loads(tmp_path: Path) -> None:
    res = _fitted_result()
    res.claims.clear()
    res.tables["table1"].rows[0][1] = "simulated"
    res.fits.clear()
    res.verdicts.clear()
    res.tables["table1"].unjudged = "a test of the claim's round trip"
    res.claim(_banded(1.05, table="table1", key=[2]))
    back = load_result(write_result(res, tmp_path))
    c = back.claims[0]
    assert (c.band, c.paper_value, c.most_sensitive, c.closes, c.kind, c.band_method) == (
        [1.1, 1.3], 1.05, "reconfig_s", "slots", "divergence", "4 corners")
    data = json.loads((tmp_path / "result.json").read_text())
    assert data["claims"][0]["within_noise"] is False
    # a result.json written before bands existed: no band keys, read back without one, unjudged
    for key in ("band", "paper_value", "most_sensitive", "closes", "effect", "within_noise", "band_method",
                "alternative"):
        del data["claims"][0][key]
    (tmp_path / "result.json").write_text(json.dumps(data))
    old = load_result(tmp_path / "result.json").claims[0]
    assert (old.band, old.paper_value, old.most_sensitive, old.kind) == (None, None, "", "claim")
    assert old.band_text() == ""


@pytest.mark.parametrize("text, needle", [
    ('{"tables": {}}', "field 'study' missing"),
    ('[1, 2]', "not a study result"),
    ('{"tables": {"t": {"title": "x"}}}', "field 'columns' missing"),
    ('{"tables": {"t": 5}}', "cannot read study result"),
    ('{"tables": {}, "a": NaN}', "cannot read study result"),
    ('{"tables": {}, "a": 1, "a": 2}', "cannot read study result"),
])
def test_a_result_of_the_wrong_shape_is_one_clear_error(tmp_path: Path, text: str, needle: str) -> None:
    """api.study.read hands a user's file here: a bad one is a ConfigError naming the file and
    how to write a good one, never a KeyError's traceback."""
    from cryptoffload.errors import ConfigError

    path = tmp_path / "result.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match="cannot read study result") as info:
        load_result(path)
    assert needle in str(info.value) and str(path) in str(info.value) and "--out DIR" in str(info.value)
