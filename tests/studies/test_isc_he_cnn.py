"""The isc-he-cnn study end to end: the paper's Table 2 and Table 3 within 10 %, provenance,
a real trace with wall times (measured CPU row), bad input, and the capacity planner."""

from __future__ import annotations

import json
import math

import pytest

from cryptoffload.errors import ConfigError
from cryptoffload.studies import isc_he_cnn as st
from cryptoffload.workloads import he_program as hp

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def paper_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("isc")
    return st.run(st.IscHeCnnConfig(quick=True), out), out


def test_table2_within_ten_percent_of_the_paper(paper_run) -> None:
    res, _ = paper_run
    t2 = res.tables["table2_latency_vs_bandwidth"]
    for row in t2.rows[:-1]:
        paper = t2.paper_row(row[:1])
        assert row[1] == "simulated"
        assert row[2] == pytest.approx(paper[2], rel=0.10), row
    cpu = t2.rows[-1]
    assert cpu[0] == st.CPU_LABEL and cpu[1] == "cited" and cpu[2] == pytest.approx(11359)


def test_table3_and_headline_within_ten_percent(paper_run) -> None:
    res, _ = paper_run
    t3 = res.tables["table3_devices"]
    assert t3.provenance == "simulated"
    for row in t3.rows:
        paper = t3.paper_row(row[:1])
        for ours, theirs in zip(row[1:], paper[1:]):
            if theirs is None:
                assert ours is None  # 32 FPGA&SSD boards do not fit on 16 lanes
            else:
                assert ours == pytest.approx(theirs, rel=0.10), (row[0], ours, theirs)
    head = {r[0]: r[1] for r in res.tables["table3_headline"].rows}
    assert head["16 CSDs vs 16 FPGA&SSD: latency reduction (%)"] == pytest.approx(72.2, rel=0.10)
    assert head["16 CSDs vs 16 FPGA&SSD: throughput ratio"] == pytest.approx(3.60, rel=0.10)
    assert not [n for n in res.notes if "beyond 10 %" in n]


def test_contract_files_and_labels(paper_run) -> None:
    res, out = paper_run
    data = json.loads((out / "result.json").read_text())
    assert data["study"] == "isc-he-cnn" and data["mode"] == "quick"
    for p in ("profiles/heax_set_c.toml", "profiles/isc_platforms.toml", "profiles/he_cnn_paper.toml"):
        assert p in data["profiles"]
    assert set(data["figures"]) == {"table2_latency.png", "table3_latency.png", "table3_throughput.png",
                                    "dram_occupancy.png"}
    for fig in data["figures"]:
        assert (out / fig).read_bytes()[:8] == PNG_MAGIC
    for tid in ("table2_latency_vs_bandwidth", "table3_devices", "table3_headline", "workload", "plan_clients",
                "table2_generated_cnn"):
        assert (out / f"{tid}.csv").exists()
    assert all("simulated" in h for h in res.headline)
    assert res.elapsed_s < 60


def test_real_trace_with_wall_times_gives_a_measured_cpu_row(tmp_path) -> None:
    trace = hp.generate_cnn().to_trace()
    for op in trace["ops"]:
        op["wall_s"] = 0.003
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace))
    cfg = st.IscHeCnnConfig(model=str(path), bandwidths=[1.0, 8.0], devices=[1, 16], compare_generated=False,
                            plan_clients=100)
    res = st.run(cfg, tmp_path / "out")
    cpu = res.tables["table2_latency_vs_bandwidth"].rows[-1]
    assert cpu[1] == "measured" and cpu[2] == pytest.approx(0.003 * len(trace["ops"]) * 1e3)
    assert res.tables["table3_devices"].rows[-1][0] == 16
    assert any("not the paper's program" in n for n in res.notes)
    assert "table2_generated_cnn" not in res.tables


def test_bad_input_refused_and_nothing_written(tmp_path) -> None:
    with pytest.raises(ConfigError, match="platform .*op #"):
        st.run(st.IscHeCnnConfig(dram_gb=0.01), tmp_path / "a")
    bad = hp.generate_cnn().to_trace()
    bad["ops"][3]["op"] = "bootstrap"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(ConfigError, match="op #3"):
        st.run(st.IscHeCnnConfig(model=str(path)), tmp_path / "b")
    with pytest.raises(ConfigError):
        st.run(st.IscHeCnnConfig(bandwidths=[0.0]), tmp_path / "c")
    with pytest.raises(ConfigError):
        st.run(st.IscHeCnnConfig(devices=[0]), tmp_path / "d")
    for d in "abcd":
        assert not (tmp_path / d / "result.json").exists()


def test_planner_follows_the_papers_key_reasoning() -> None:
    t = st.plan_isc(10_000)
    v = {r[0]: r[1] for r in t.rows}
    # seed 000 section 4.5.1: 0.5 GB x 10,000 clients = 5,000 GB of keys on one CSD
    assert v["NAND per CSD with every client's keys on it"] == pytest.approx(5000 + 3.3, rel=0.05)
    assert v["CSDs recommended"] == 1
    small = {r[0]: r[1] for r in st.plan_isc(10_000, nand_tb=1.0, requests_per_client_per_s=0.01).rows}
    assert small["CSDs for capacity"] == 5  # 4,907 GB of keys over (1,000 - 3.3) GB per CSD
    # 100 inferences/s offered, each CSD at most 80 % busy (~0.94 inferences/s each)
    assert small["CSDs for the load"] == math.ceil(100 / (0.8 * small["throughput of one CSD"])) == 133
    assert small["CSDs recommended"] == 133
    assert small["NAND per CSD to provision"] < 1000
    with pytest.raises(ConfigError):
        st.plan_isc(0)
    with pytest.raises(ConfigError):
        st.plan_isc(10, requests_per_client_per_s=-1.0)
