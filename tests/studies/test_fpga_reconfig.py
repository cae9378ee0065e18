"""The fpga-reconfig study end to end on a small run: contract, tables, paper claims."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cryptoffload.errors import ConfigError, ProfileError
from cryptoffload.studies import fpga_reconfig as st


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("fr")
    cfg = st.FpgaReconfigConfig(quick=True, seed=1, requests=40_000)
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
    for fig in data["figures"]:
        assert (out / fig).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "table6_p90_vs_oracle.csv").exists() and (out / "table6_p90_vs_oracle_paper.csv").exists()
    assert "profiles/virtex2_ciphers.toml" in data["profiles"]


def test_paper_orderings_hold(small_run):
    res, _ = small_run
    assert res.extra["claims"]["ordering_above_100"], res.notes
    assert res.extra["claims"]["hardware_worst_low_rates"], res.notes
    assert res.extra["beyond_beats_predict"]


def test_software_is_the_work_ratio_under_heavy_load(small_run):
    """Deep in overload every queue grows linearly, so p90 ratios tend to total-work ratios."""
    res, _ = small_run
    t6 = res.tables["table6_p90_vs_oracle"]
    cols = t6.columns
    last = t6.rows[-1]
    assert last[cols.index("software")] > last[cols.index("predict")] > 1.0


def test_mean_table_has_the_papers_headline_numbers(small_run):
    res, _ = small_run
    paper = dict(map(tuple, res.tables["mean_p90_vs_oracle"].paper))
    assert paper["predict"] == 1.18 and paper["nopredict"] == 2.01
    assert any("Predict/Oracle" in h and "paper 1.18" in h for h in res.headline)


def test_table8_oracle_saves_encryption_time(small_run):
    res, _ = small_run
    t8 = res.tables["table8_enc_time_reduction_pct"]
    mean_row = t8.rows[-1]
    oracle = mean_row[t8.columns.index("oracle")]
    assert 20 < oracle < 100


def test_same_seed_same_result(tmp_path):
    cfg = st.FpgaReconfigConfig(quick=True, seed=4, requests=5000, rates=[300.0], policies=["predict", "oracle"])
    a = st.run(cfg, tmp_path / "a")
    b = st.run(cfg, tmp_path / "b")
    assert a.tables["latency_p90_ms"].rows == b.tables["latency_p90_ms"].rows


def test_simpy_engine_gives_the_same_tables(tmp_path):
    kw = dict(quick=True, seed=2, requests=1500, rates=[50.0, 2000.0], policies=["nopredict", "predict", "oracle", "parallel"])
    a = st.run(st.FpgaReconfigConfig(**kw), tmp_path / "fast")
    b = st.run(st.FpgaReconfigConfig(**kw, engine="simpy"), tmp_path / "simpy")
    assert a.tables["latency_p90_ms"].rows == b.tables["latency_p90_ms"].rows


@pytest.mark.parametrize("bad", [
    dict(rates=[0.0]), dict(rates=[-5.0]), dict(rates=[float("nan")]), dict(policies=["nosuch"]),
    dict(requests=1), dict(engine="gpu"), dict(window_mb=0.0), dict(reconfig_ms=-1.0), dict(policies=[]),
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
    bad.write_text(text.replace('fpga_mbps = { value = 300.1', 'fpga_mbpz = { value = 300.1'))
    with pytest.raises(ProfileError, match=r"bad.toml: field 'ciphers.aes-cbc.fpga_mbps' is missing"):
        st.run(st.FpgaReconfigConfig(requests=100, rates=[10.0], profile=str(bad)), tmp_path / "o")
    assert not (tmp_path / "o").exists()


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
