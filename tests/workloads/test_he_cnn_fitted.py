"""The paper-calibrated HE CNN program: the in-storage paper's totals (Suzuki and Yamana,
section 4.4) reproduced, and a profile whose phases do not add up refused."""

from __future__ import annotations

import pytest

from cryptoffload.errors import ProfileError
from cryptoffload.profiles import builtin_profile_path
from cryptoffload.sim.isc.fpga_cost import FpgaCostModel
from cryptoffload.workloads.he_cnn_fitted import PAPER_PROFILE, paper_calibrated_program


@pytest.fixture(scope="module")
def cost() -> FpgaCostModel:
    return FpgaCostModel.from_profile()


def test_paper_calibrated_program_reproduces_the_papers_inputs(cost) -> None:
    prog = paper_calibrated_program(cost)
    s = prog.summary(cost)
    assert s["weight_bytes"] / 1e9 == pytest.approx(3.3, rel=0.01)
    assert s["key_bytes"] / 1e9 == pytest.approx(0.5, rel=0.03)
    assert s["compute_s"] == pytest.approx(1.05, rel=0.01)
    assert s["touched_bytes"] / 1e9 == pytest.approx(17.3, rel=0.10)
    assert s["min_dram_bytes"] < 8e9  # 8 GB is enough with eviction (Suzuki and Yamana, section 4.4)


@pytest.mark.parametrize(("old", "new", "needle"), [
    # the value moved with its range (else the range check refuses it first)
    ('value = 0.0176, source = "assumed: 0.058 GB of conv weights, what p1\'s 11 ms of compute builds beside its '
     'keys on the HEAX op times (55 plaintexts at level 7)", provenance = "assumed", range = [0.0, 0.04758]',
     'value = 0.1176, source = "assumed: 0.058 GB of conv weights, what p1\'s 11 ms of compute builds beside its '
     'keys on the HEAX op times (55 plaintexts at level 7)", provenance = "assumed", range = [0.0, 0.12]',
     "the phases' weights_share add up to 1.1000, not 1; change them"),
    ('level = { value = 7, source = "derived: the first layer', 'level = { value = 9, source = "derived: the first layer',
     "phase p1_conv: level must be 0..7 and width >= 1 (got level 9, width 4)"),
])
def test_a_profile_whose_phases_do_not_fit_is_refused(tmp_path, cost, old, new, needle) -> None:
    text = builtin_profile_path(PAPER_PROFILE).read_text(encoding="utf-8")
    assert text.count(old) == 1
    path = tmp_path / "he_cnn.toml"
    path.write_text(text.replace(old, new), encoding="utf-8")
    with pytest.raises(ProfileError) as exc:
        paper_calibrated_program(cost, str(path))
    assert needle in str(exc.value) and str(path) in str(exc.value)
