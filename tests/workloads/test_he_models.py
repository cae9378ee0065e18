"""``--model`` names: each chooses its program, and anything else is read as a trace file."""

from __future__ import annotations

import pytest

from cryptoffload.errors import ConfigError
from cryptoffload.sim.isc.fpga_cost import FpgaCostModel
from cryptoffload.workloads.he_cnn_fitted import paper_calibrated_program
from cryptoffload.workloads.he_cnn_generated import generate_cnn
from cryptoffload.workloads.he_models import MODELS, load_model


def test_model_names_choose_their_program() -> None:
    cost = FpgaCostModel.from_profile()
    prog = paper_calibrated_program(cost)
    assert load_model("fitted", cost).name == prog.name
    assert load_model("paper", cost).source == "paper-inputs"
    assert load_model(None, cost).source == "paper-inputs"
    assert load_model("generated", cost).source == "generated"
    assert MODELS == ("paper", "fitted", "generated")


def test_any_other_name_is_a_trace_file(tmp_path) -> None:
    cost = FpgaCostModel.uniform(0.0)
    path = generate_cnn().save_trace(tmp_path / "cnn.json")
    assert load_model(str(path), cost).op_counts() == generate_cnn().op_counts()
    with pytest.raises(ConfigError, match="trace file not found"):
        load_model(str(tmp_path / "fited"), cost)
