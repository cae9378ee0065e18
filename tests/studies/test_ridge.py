"""The ridge study end to end on a small run: contract, accuracy within the bound, labels."""

from __future__ import annotations

import json

import pytest

from cryptoffload.errors import ConfigError
from cryptoffload.studies import ridge as st


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("ridge")
    cfg = st.RidgeConfig(quick=True, records=400, d=4, chunk=200, workers=2)
    return st.run(cfg, out), out


def test_contract_tables_and_figures(small_run):
    res, out = small_run
    data = json.loads((out / "result.json").read_text())
    assert data["study"] == "ridge"
    phases = data["tables"]["table2_phases"]
    assert phases["provenance"] == "mixed" and "provenance" in phases["columns"]
    kinds = {r[1] for r in phases["rows"]}
    assert kinds <= {"measured", "derived"} and "measured" in kinds
    assert {r[1] for r in phases["paper"]} == {"cited"}
    for fig in data["figures"]:
        assert (out / fig).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_accuracy_within_bound_and_modes_agree(small_run):
    res, _ = small_run
    rows = res.tables["accuracy"].rows
    names = [r[0] for r in rows]
    assert any("scikit-learn" in n for n in names) and any("diabetes" in n for n in names)
    assert all(r[6] for r in rows), rows
    assert res.extra["same_model"] is True
    assert not res.notes


def test_bad_config_refused(tmp_path):
    with pytest.raises(ConfigError):
        st.run(st.RidgeConfig(stat_bits=60), tmp_path / "a")
    with pytest.raises(ConfigError):
        st.run(st.RidgeConfig(records=0), tmp_path / "b")
    with pytest.raises(ConfigError, match="scheduler|address"):
        st.run(st.RidgeConfig(records=10, scheduler="not-an-address"), tmp_path / "c")
    for d in ("a", "b", "c"):
        assert not (tmp_path / d / "result.json").exists()
