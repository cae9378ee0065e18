"""Bootstrapping in bsgs-multidevice: the stage tables on the U280 profile (the values the
study's report shows at N = 1) and the stored OpenFHE benchmark read into typed rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from cryptoffload.profiles.loader import load_profile
from cryptoffload.studies.bsgs_multidevice import bootstrap as st
from cryptoffload.studies.bsgs_multidevice.paper import paper_inputs


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


def _stored_ring(chosen: dict, ring: int = 4096) -> dict:
    side = {"bootstrap_s_median": 1.0, "bootstrap_cpu_s_median": 0.9, "precision_bits_mean": 14.0,
            "precision_bits_worst": 12.0}
    return {"ring_dim": ring, "depth": 25, "levels_after_required": 2,
            "planner": {"chosen": {"plan": chosen}, "openfhe_default": {"plan": {"level_budget": [5, 4],
                                                                               "dim1": [4, 8], "slots": 0}}},
            "setup": {"default": {"rotation_keys": 25}, "planner": {"rotation_keys": 30}},
            "measured": {"default": dict(side, bootstrap_s_median=1.1), "planner": side,
                         "ratio_default_over_planner": {"median": 1.1}, "cpu_ratio_default_over_planner": {"median": 1.05},
                         "load_average_1min": {"min": 1.0, "max": 2.5}}}


def test_plan_rows_price_the_stored_plans_here_and_say_when_the_planner_now_differs() -> None:
    from cryptoffload.policies.bootstrap_costs import builtin_rings

    if 4096 not in builtin_rings():
        pytest.skip("no shipped OpenFHE profile at N = 4096")
    stored = {"machine": {"cpu": "CPU Y", "cores": 2}, "date": "2026-12-06", "openfhe": "1.6.1.0",
              "rings": [_stored_ring({"level_budget": [3, 3], "dim1": [2, 2], "slots": 0})]}
    rows, notes = st.plan_vs_default_rows(stored)
    planner, default = rows
    assert (planner.plan, planner.level_budget, planner.dim1, planner.levels_after) == ("planner", "(3, 3)", "(2, 2)", 5)
    assert (planner.bootstrap_s, planner.cpu_s, planner.default_over_planner, planner.load_1min) == (1.0, 0.9, 1.1,
                                                                                                  "1.0-2.5")
    assert default.default_over_planner is None and default.rotation_keys == 25 and default.predicted_ms > 0
    assert len(notes) == 1 and "not the (3, 3) dim1 (2, 2) the benchmark ran" in notes[0]
    table = st.plan_vs_default_table(stored)
    assert "CPU Y, 2 cores" in table.title and "not in this run" in table.title and table.provenance == "mixed"
    assert notes[0] in table.note
    part, missing = st.bootstrap_plan_part((1, 2))
    assert missing == [] and [t.id for t in part] == ["bootstrap_plan_openfhe", "bootstrap_plan_devices"]
