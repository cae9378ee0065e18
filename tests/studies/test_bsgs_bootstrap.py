"""Bootstrapping in bsgs-multidevice: the stage tables on the U280 profile (the values the
study's report shows at N = 1) and the stored OpenFHE benchmark read into typed rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from cryptoffload.profiles.loader import load_profile
from cryptoffload.studies import _bsgs_bootstrap as st
from cryptoffload.studies._bsgs_paper import paper_inputs


def test_stage_rows_on_one_device() -> None:
    said: list[str] = []
    stages = st.bootstrap_stage_rows(paper_inputs(load_profile("bsgs_u280"), [1]), (3, 3), said.append)
    assert said == ["bootstrapping stages"] and stages.slots == 32768
    assert stages.totals == [st.BootstrapRow(1, pytest.approx(0.8112792), pytest.approx(0.6613752),
                                             pytest.approx(0.8112792 / 0.6613752))]
    assert len(stages.detail) == 6 and {d.diagonals for d in stages.detail} == {63}
    assert stages.detail[0] == st.StageDetailRow(1, "CoeffToSlot 0", 63, 1, "replicate", 8, pytest.approx(0.1102292))
    table = st.bootstrap_stages_table(stages)
    assert table.columns == ["devices", "default_bs_ms", "tuned_ms", "speedup"]
    assert table.title == "CoeffToSlot + SlotToCoeff as sparse BSGS stages (slots 2^15, level budget (3, 3))"
    detail = st.bootstrap_stage_detail_table(stages)
    assert detail.key_columns == 2 and detail.rows[0] == [1, "CoeffToSlot 0", 63, 1, "replicate", 8,
                                                          pytest.approx(0.1102292)]


def test_openfhe_rows_read_missing_parts_as_none() -> None:
    full = {"level_budget": [2, 2], "dim1": [0, 0], "ring_dim": 4096, "bootstrap_s": {"median": 1.5},
            "measured": {"available": True, "bsgs_share": 0.4, "stage_ms": {"total": 600.0}},
            "predicted_ms": {"model": {"total": 550.0}}, "model_error_pct": {"model": {"total": -8.3}},
            "rotation_keys": {"model_matches_openfhe": True}}
    assert st.openfhe_row(full) == st.OpenfheRow("(2, 2)", "(0, 0)", 4096, 1.5, 0.4, 600.0, 550.0, -8.3, True, "")
    bare = {"bootstrap_s": 2.0, "measured": {"available": False, "bsgs_share": 0.4}, "dim1_complete": False}
    assert st.openfhe_row(bare) == st.OpenfheRow("()", "()", None, 2.0, None, None, None, None, None,
                                                 "OpenFHE leaves diagonals out")
    table = st.openfhe_table({"configs": [full, bare], "machine": {"cpu": "CPU X", "cores": 4}, "date": "2026-01-02"})
    with pytest.raises(ValueError, match="names its machine and date"):  # a stored figure says whose and when
        st.openfhe_table({"configs": [full], "machine": {"cpu": "CPU X"}})
    assert table.rows[1] == ["()", "()", None, 2.0, None, None, None, None, None, "OpenFHE leaves diagonals out"]
    assert "measured on CPU X, 4 cores, ?, Python ?" in table.title and table.provenance == "stored"


def test_missing_openfhe_result_is_none(tmp_path: Path) -> None:
    assert st.load_openfhe(str(tmp_path / "none.json")) is None
    (tmp_path / "bad.json").write_text("{not json")
    assert st.load_openfhe(str(tmp_path / "bad.json")) is None
    assert st.load_openfhe(None)["configs"]          # the copy shipped with the package
