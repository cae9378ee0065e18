"""The paillier-offload study end to end on small runs: contract, paper shape, measured rows."""

from __future__ import annotations

import json

import pytest

from cryptoffload.errors import ConfigError, ProfileError
from cryptoffload.studies import paillier_offload as st

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def measured_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("po")
    cfg = st.PaillierOffloadConfig(quick=True, seed=3, sim_count=1500, measure_count=48, seconds=0.02, rounds=1,
                                   threads=8, inflight=16, all_cores=False, sweep_inflight=[1, 8],
                                   engine="cpu-threads")
    return st.run(cfg, out), out


def test_contract_and_files(measured_run):
    res, out = measured_run
    data = json.loads((out / "result.json").read_text())
    assert data["study"] == "paillier-offload" and data["mode"] == "quick"
    t1 = data["tables"]["table1_implementations"]
    assert t1["provenance"] == "mixed" and "provenance" in t1["columns"]
    kinds = {row[1] for row in t1["rows"]}
    assert {"simulated", "measured", "cited"} <= kinds
    for fig in data["figures"]:
        assert (out / fig).read_bytes()[:8] == PNG_MAGIC
    assert "profiles/qat_dh8970.toml" in data["profiles"]
    for tid in ("encryption_one_core", "decryption_one_core", "plan_cores_vs_qat", "table1_ratios"):
        assert tid in data["tables"]
        assert (out / f"{tid}.csv").exists()


def test_simulated_rows_have_the_paper_shape(measured_run):
    res, _ = measured_run
    ratios = {r[0]: r[1] for r in res.tables["table1_ratios"].rows}
    assert 46 * 0.75 <= ratios["S2 / S1 throughput"] <= 46 * 1.25
    assert 1.76 * 0.8 <= ratios["QHCS1 / S2 throughput"] <= 1.76 * 1.2
    assert ratios["QHCS1 / S2 mean latency"] < 1
    assert 0.85 <= ratios["QHCS2 / QHCS1 throughput"] <= 1.0
    assert 0.5 * 0.75 <= ratios["QHCS2 / QHCS1 mean latency"] <= 0.5 * 1.25


def test_measured_modes_present_and_labelled(measured_run):
    res, _ = measured_run
    rows = res.tables["table1_implementations"].rows
    measured = [r for r in rows if r[1] == "measured"]
    names = " ".join(r[0] for r in measured)
    for label in ("S1-like", "S2-like", "QHCS1-like", "QHCS2-like", "phe 1.5.0"):
        assert label in names
    assert all(r[3] > 0 for r in measured)
    # the simulated rows never claim to be measured, and say which platform they model
    for r in rows:
        if r[0] in st.SIM_LABELS.values():
            assert r[1] == "simulated" and "model" in r[2]
    assert any("measured" in h for h in res.headline) and any("simulated" in h for h in res.headline)


def test_simulation_only_run(tmp_path):
    cfg = st.PaillierOffloadConfig(quick=True, sim_count=600, measure=False, sweep_inflight=[1, 4])
    res = st.run(cfg, tmp_path)
    assert all(r[1] != "measured" for r in res.tables["table1_implementations"].rows)
    assert "encryption_one_core" not in res.tables
    assert any("--no-measure" in n for n in res.notes)


def test_bad_config_refused_and_nothing_written(tmp_path):
    with pytest.raises(ConfigError):
        st.run(st.PaillierOffloadConfig(bits=1001), tmp_path / "a")
    with pytest.raises(ConfigError):
        st.run(st.PaillierOffloadConfig(sim_count=0), tmp_path / "b")
    with pytest.raises(ProfileError):
        st.run(st.PaillierOffloadConfig(profile=str(tmp_path / "missing.toml"), measure=False), tmp_path / "c")
    for d in ("a", "b", "c"):
        assert not (tmp_path / d / "result.json").exists()
