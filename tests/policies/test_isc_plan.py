"""The in-storage capacity planner: the paper's key reasoning (every client's keys on every CSD),
capacity and load sizing, refusals; and the shared setup refusing DRAM that cannot hold the program."""

from __future__ import annotations

import math

import pytest

from cryptoffload.errors import ConfigError
from cryptoffload.policies.isc_plan import plan_isc, setup


def test_planner_follows_the_papers_key_reasoning() -> None:
    t = plan_isc(10_000)
    v = {r[0]: r[1] for r in t.rows}
    # section 4.5.1: weights once + keys x clients on one CSD (our program: 0.34 GB of keys)
    assert v["NAND per CSD with every client's keys on it"] == pytest.approx(
        v["weights per model"] + 10_000 * v["evaluation keys per client"], rel=1e-9)
    assert v["CSDs recommended"] == 1
    # fit check: with the program fitted to the paper (0.49 GB of keys) it is the paper's 5,000 GB
    fv = {r[0]: r[1] for r in plan_isc(10_000, "fitted").rows}
    assert fv["NAND per CSD with every client's keys on it"] == pytest.approx(5000 + 3.3, rel=0.05)
    small = {r[0]: r[1] for r in plan_isc(10_000, nand_tb=1.0, requests_per_client_per_s=0.01).rows}
    keys = small["evaluation keys per client"]
    assert small["CSDs for capacity"] == math.ceil(10_000 * keys / (1000 - small["weights per model"]))
    # 100 inferences/s offered, each CSD at most 80 % busy
    assert small["CSDs for the load"] == math.ceil(100 / (0.8 * small["throughput of one CSD"]))
    assert small["CSDs recommended"] == max(small["CSDs for capacity"], small["CSDs for the load"])
    assert small["NAND per CSD to provision"] < 1000
    with pytest.raises(ConfigError):
        plan_isc(0)
    with pytest.raises(ConfigError):
        plan_isc(10, requests_per_client_per_s=-1.0)


def test_setup_refuses_dram_that_cannot_hold_the_program() -> None:
    s = setup()
    assert s.program.source == "paper-inputs" and set(s.platforms) == {"fpga_only", "fpga_ssd", "csd"}
    assert any(p.endswith("he_cnn_paper_inputs.toml") for p in s.profiles)
    with pytest.raises(ConfigError, match="platform .*: DRAM of 0.001 GB cannot hold"):
        setup(dram_gb=0.001)
