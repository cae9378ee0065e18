"""The fpga-reconfig study end to end on small runs: contract, predictions vs the paper, perturbations."""

from __future__ import annotations

import json

import pytest

from cryptoffload.errors import ConfigError, ProfileError
from cryptoffload.studies.fpga_reconfig import study as st


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("fr")
    cfg = st.FpgaReconfigConfig(quick=True, seed=1, requests=20_000, seeds=3, workers=1)
    res = st.run(cfg, out)
    return res, out


def test_result_contract(small_run):
    res, out = small_run
    data = json.loads((out / "result.json").read_text())
    for key in ("study", "mode", "seed", "version", "machine", "tables", "figures", "profiles", "notes"):
        assert key in data
    assert data["study"] == "fpga-reconfig" and data["mode"] == "quick"
    t6 = data["tables"]["table6_p90_vs_oracle"]
    assert t6["provenance"] == "simulated"
    assert len(t6["rows"]) == len(st.PAPER_RATES) and len(t6["paper"]) == len(st.PAPER_RATES)
    for tid in ("table6_spread", "mean_p90_vs_oracle", "ordering_by_rate", "table7_cipher_mix",
                "prediction_interval_mb", "client_population", "readings_sensitivity"):
        assert tid in data["tables"], tid
    pop = {r[0]: r for r in data["tables"]["client_population"]["rows"]}
    assert pop["clients"][2] == "fitted" and pop["activity_pareto_shape"][2] == "fitted"
    for fig in data["figures"]:
        assert (out / fig).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "table6_p90_vs_oracle.csv").exists() and (out / "table6_p90_vs_oracle_paper.csv").exists()
    assert "profiles/virtex2_ciphers.toml" in data["profiles"]
    assert not any("seed 00" in h for h in data["headline"])


def prediction_failures(res) -> list[str]:
    """Which predictions of the paper's results miss their stated tolerance (empty: none).

    Predictions, not fits: nothing in the model was adjusted to Table 6. Tolerances: the paper's
    mean Predict/Oracle (1.18) within 25 %; Oracle <= Predict <= Nopredict at every rate (median
    over seeds); Hardware an order of magnitude worst at <= 100 req/s.
    """
    means = {r[0]: r[1] for r in res.tables["mean_p90_vs_oracle"].rows}
    checks = {
        "Predict/Oracle mean within 25 % of 1.18": abs(means["predict"] / 1.18 - 1) <= 0.25,
        "Oracle <= Predict <= Nopredict at every rate": res.extra["claims"]["oracle_le_predict_le_nopredict_every_rate"],
        "Hardware worst at low rates": res.extra["claims"].get("hardware_worst_low_rates", True),
    }
    return [name for name, ok in checks.items() if not ok]


def test_predictions_hold_within_their_tolerances(small_run):
    res, _ = small_run
    assert prediction_failures(res) == [], res.notes
    assert res.extra["beyond_beats_predict"]
    rows = {r[0]: r for r in res.tables["ordering_by_rate"].rows}
    assert set(rows) == set(float(r) for r in st.PAPER_RATES)  # every rate, 10 req/s included


@pytest.mark.parametrize(("reconfig_ms", "fails"), [(0.0, "Predict/Oracle mean within 25 % of 1.18"),
                                                    (5000.0, "Oracle <= Predict <= Nopredict at every rate")])
def test_prediction_checks_fail_when_an_input_is_perturbed(tmp_path, reconfig_ms, fails):
    # A free reconfiguration makes the Oracle (which knows the next request) far better than any
    # predictor; a 5 s one leaves the FPGA reconfiguring and every overlap policy in software.
    cfg = st.FpgaReconfigConfig(quick=True, requests=20_000, seeds=2, workers=1, readings=False,
                                reconfig_ms=reconfig_ms, policies=["software", "hardware", "nopredict", "predict", "oracle"])
    assert fails in prediction_failures(st.run(cfg, tmp_path))


def test_distributions_place_the_papers_draw(small_run):
    res, _ = small_run
    t7 = res.tables["table7_cipher_mix"]
    top = t7.rows[0]
    assert top[0] == 1 and 0.1 < top[1] < 0.5  # one dominant cipher, as in the paper's Table 7
    assert 0 <= top[t7.columns.index("paper_percentile")] <= 100
    spread = res.tables["table6_spread"]
    for r in spread.rows:
        assert r[2] <= r[3] <= r[4]  # p10 <= median <= p90
    assert any("percentile" in h for h in res.headline)


def test_the_headline_is_the_scoreboard_and_every_cell_has_its_verdict(small_run):
    """Issue 35: a verdict for every cell beside the paper's (Table 6, its means, Table 8 over the
    seeds, Table 7); a quick run's seeds and requests are not the full run's, so it judges nothing
    but the fitted Table 7 and says so first."""
    res, _ = small_run
    board = res.scoreboard
    assert board.rows == 80 + 7 + 33 + 10 and board.counts["fitted"] == 10
    assert board.counts["not judged in quick mode"] == board.rows - 10
    assert res.headline[0] == f"Scoreboard: {board.text()} (verdicts table; docs/result-contract.md)"
    assert all("cryptoffload study fpga-reconfig --out DIR" in v.reason() for v in res.verdicts if v.kind != "fitted")
    assert "fitted" in " ".join(res.headline)  # the population is fitted, and says so in the same sentence
    assert res.fits == {"client_population": "Table 7"} and res.tables["table7_cipher_mix"].provenance == "fitted"
    # the other views of the same figures say where they are judged
    for tid in ("table6_spread", "latency_p90_ms", "table8_enc_time_reduction_pct", "readings_sensitivity"):
        assert res.tables[tid].unjudged, tid
    assert res.tables["latency_p90_ms"].paper_derived  # the paper's p90 in ms is arithmetic on its Table 6


def test_readings_are_labelled_and_change_feasibility(small_run):
    res, _ = small_run
    rows = {r[0]: r for r in res.tables["readings_sensitivity"].rows}
    cols = res.tables["readings_sensitivity"].columns
    cap = cols.index("fixall_capacity_rps")
    assert rows["table2-in-MBps"][cap] == pytest.approx(8 * rows["literal"][cap], rel=0.02)  # packet time fixed
    assert rows["literal"][cap] < 20_000  # the literal reading cannot carry the paper's top rate
    assert "reading" in res.tables["readings_sensitivity"].title


def test_software_is_the_work_ratio_under_heavy_load(small_run):
    """Deep in overload every queue grows linearly, so p90 ratios tend to total-work ratios."""
    res, _ = small_run
    t6 = res.tables["table6_p90_vs_oracle"]
    last = t6.rows[-1]
    assert last[t6.columns.index("software")] > last[t6.columns.index("predict")] > 1.0


def test_table8_oracle_saves_encryption_time(small_run):
    res, _ = small_run
    t8 = res.tables["table8_enc_time_reduction_pct"]
    mean_row = t8.rows[-1]
    oracle = mean_row[t8.columns.index("oracle")]
    assert 20 < oracle < 100


def test_processes_give_the_same_tables_as_one_process(tmp_path):
    kw = dict(quick=True, seed=3, requests=4000, rates=[100.0, 3000.0], seeds=3, readings=False,
              policies=["nopredict", "predict", "oracle"])
    a = st.run(st.FpgaReconfigConfig(**kw, workers=1), tmp_path / "one")
    b = st.run(st.FpgaReconfigConfig(**kw, workers=2), tmp_path / "two")
    assert a.tables["table6_spread"].rows == b.tables["table6_spread"].rows


def test_same_seed_same_result(tmp_path):
    cfg = st.FpgaReconfigConfig(quick=True, seed=4, requests=5000, rates=[300.0], policies=["predict", "oracle"],
                                seeds=2, workers=1, readings=False)
    a = st.run(cfg, tmp_path / "a")
    b = st.run(cfg, tmp_path / "b")
    assert a.tables["latency_p90_ms"].rows == b.tables["latency_p90_ms"].rows


@pytest.mark.slow
def test_simpy_engine_gives_the_same_tables(tmp_path):
    kw = dict(quick=True, seed=2, requests=1500, rates=[50.0, 2000.0], policies=["nopredict", "predict", "oracle", "parallel"],
              seeds=1, readings=False)
    a = st.run(st.FpgaReconfigConfig(**kw), tmp_path / "fast")
    b = st.run(st.FpgaReconfigConfig(**kw, engine="simpy"), tmp_path / "simpy")
    assert a.tables["latency_p90_ms"].rows == b.tables["latency_p90_ms"].rows


@pytest.mark.parametrize("bad", [
    dict(rates=[0.0]), dict(rates=[-5.0]), dict(rates=[float("nan")]), dict(policies=["nosuch"]),
    dict(requests=1), dict(engine="gpu"), dict(window_mb=0.0), dict(reconfig_ms=-1.0), dict(policies=[]),
    dict(seeds=0), dict(workers=True), dict(interval="adaptive"), dict(clients="everyone"),
])
def test_bad_config_is_refused_before_anything_is_written(tmp_path, bad):
    out = tmp_path / "o"
    with pytest.raises(ConfigError):
        st.run(st.FpgaReconfigConfig(**bad), out)
    assert not out.exists()


def test_profile_missing_a_field_is_refused_naming_it(tmp_path):
    from cryptoffload.profiles import builtin_profile_path

    text = builtin_profile_path("virtex2_ciphers").read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace('fpga_mbps = { value = 300.1', 'fpga_gbps = { value = 0.3001'))
    with pytest.raises(ProfileError, match=r"bad.toml: field 'ciphers.aes-cbc.fpga_mbps' is missing"):
        st.run(st.FpgaReconfigConfig(requests=100, rates=[10.0], profile=str(bad)), tmp_path / "o")
    assert not (tmp_path / "o").exists()
    # a typo that names no unit is refused by the loader itself, whatever reads the profile
    bad.write_text(text.replace('fpga_mbps = { value = 300.1', 'fpga_mbpz = { value = 300.1'))
    with pytest.raises(ProfileError, match=r"bad.toml: field 'ciphers.aes-cbc.fpga_mbpz' names no unit or kind"):
        st.run(st.FpgaReconfigConfig(requests=100, rates=[10.0], profile=str(bad)), tmp_path / "o")


def test_replaying_a_user_log(tmp_path):
    log = tmp_path / "access.log"
    lines = []
    for i in range(3000):
        host = f"10.0.0.{i // 50 % 20}"
        lines.append(f'{host} - - [10/Oct/2000:13:{(i // 60) % 60:02d}:{i % 60:02d} -0700] "GET /f{i} HTTP/1.0" 200 {1000 + 37 * i}')
    lines.insert(10, "this is not a log line")
    log.write_text("\n".join(lines) + "\n")
    res = st.run(st.FpgaReconfigConfig(trace=str(log), policies=["software", "predict", "oracle"]), tmp_path / "o")
    assert any("1 bad line" in n for n in res.notes)
    assert len(res.tables["latency_p90_ms"].rows) == 1  # the log's own timing: one rate


def test_this_machine_tables_with_a_measured_software_profile(tmp_path):
    """The report's run: software throughput measured here stands beside the paper's Table 2
    as measured (no fitted input behind it), and the result is written."""
    prof = tmp_path / "ciphers.toml"
    prof.write_text('[meta]\nname = "m"\nkind = "measured"\ndescription = "test"\n'
                    '[ciphers.aes-ecb]\nsoftware_mbps = { value = 1234.5, source = "measured here" }\n')
    cfg = st.FpgaReconfigConfig(quick=True, seed=1, requests=4_000, seeds=2, workers=1, rates=(10.0, 100.0),
                                sw_profile=str(prof))
    res = st.run(cfg, tmp_path / "out")
    sw = res.tables["software_throughput_mbps"]
    assert sw.provenance == "measured" and sw.reproduces == "Table 2"
    assert dict((r[0], r[1]) for r in sw.rows)["AES-ECB"] == 1234.5
    assert "this_machine_p90_ms" in res.tables and (tmp_path / "out" / "result.json").exists()


def test_the_claims_are_the_papers_means_our_tuned_interval_and_the_top_rate(small_run):
    """The paper's 5 MB Predict and its Nopredict against Oracle, averaged over rates (what a user
    reads first: does prediction hide reconfiguration?), our tuned interval beside them, and
    Oracle's own p90 at the paper's highest rate; each quotes its cell's verdict and band."""
    res, _ = small_run
    predict, nopredict, tuned, top = res.claims
    assert [c.key for c in res.claims] == [["predict-5mb"], ["nopredict"], ["predict"], [20000.0]]
    by = {(v.table, repr(v.key), v.column): v for v in res.verdicts}
    for c in res.claims:
        v = by[(c.table, repr(c.key), c.column)]
        assert (c.kind, c.band, c.paper_value) == (v.kind, v.band, v.paper)
    rows = {r[0]: r for r in res.tables["headline_bands"].rows}
    a = rows["mean over rates predict-5mb"]
    xs = [r for r in res.tables["mean_p90_vs_oracle"].rows if r[0] == "predict-5mb"][0]
    assert predict.band == [a[2], a[3]] and predict.paper_value == 1.18 and a[1] == xs[1]  # nominal: the median
    assert a[2] <= xs[2] and a[3] >= xs[3]  # the 55 ms corners are the table's 10-90 % over seeds
    assert "the paper's 5 MB interval" in predict.ours and nopredict.paper_value == 2.01
    assert tuned.why.endswith("beside the paper's 5 MB Predict") and "our extension" in tuned.why
    assert top.paper_value == 0.0288 and "Table 2's throughputs carry at most" in top.why


def test_every_agreement_holds_the_papers_value_inside_its_band(small_run):
    res, _ = small_run
    for c in res.claims:
        assert c.kind != "agreement" or (c.band is not None and c.band[0] <= c.paper_value <= c.band[1]), c.ours
    for r in res.tables["headline_bands"].rows:
        assert r[5] == (r[2] <= r[4] <= r[3])  # paper_inside as computed


def test_bands_move_the_reconfiguration_time_and_the_fitted_clients(small_run):
    res, _ = small_run
    tornado = [r for r in res.tables["headline_tornado"].rows if r[1] == "reconfiguration time (ms)"]
    assert len(tornado) == 8  # every headline figure: the seven means and Oracle at the top rate
    for r in tornado:
        assert (round(r[3], 2), round(r[4], 2), round(r[5], 2)) == (55.04, 55.04, 60.0) and r[2] == "cited"
        assert r[6] != r[7]  # the figure at 55 ms and at 60 ms differ
    clients = [r for r in res.tables["headline_tornado"].rows if r[1] == "clients in the fitted population"]
    assert [(r[2], r[3], r[4], r[5]) for r in clients] == [("fitted", 30_000, 30_000, 300_000)] * 8
