"""A bootstrap plan: OpenFHE's knobs, checked once where a plan is made."""

from __future__ import annotations

import pytest

from cryptoffload.crypto.ckks.bootstrap import BootstrapPlan
from cryptoffload.crypto.ckks.errors import CkksError


def test_a_plan_holds_the_knobs_and_the_slot_count() -> None:
    plan = BootstrapPlan((3, 2), (8, 0), 0)
    assert plan.slots_for(1 << 12) == 2048
    assert BootstrapPlan(slots=64).slots_for(1 << 12) == 64
    assert plan.to_dict() == {"level_budget": [3, 2], "dim1": [8, 0], "slots": 0}


@pytest.mark.parametrize("kw", [dict(level_budget=(0, 3)), dict(level_budget=(3,)), dict(level_budget=(3, 99)),
                                dict(dim1=(3, 0)), dict(dim1=(-1, 0)), dict(slots=3), dict(slots=-2),
                                dict(level_budget=(True, 2)), dict(dim1=(2.0, 0))])
def test_a_bad_plan_is_refused_naming_the_knob(kw: dict) -> None:
    with pytest.raises(CkksError, match="bootstrap plan"):
        BootstrapPlan(**kw)


def test_more_slots_than_the_ring_holds_is_refused() -> None:
    with pytest.raises(CkksError, match="does not fit N = 1024"):
        BootstrapPlan(slots=1024).slots_for(1024)
