"""The BSGS plan table: each row is the tuner's choice for that device count, the speed-up is
the naive time over the tuned one, and the tuner is never behind the exhaustive search."""

from __future__ import annotations

import pytest

from cryptoffload.errors import ConfigError
from cryptoffload.policies import bsgs_tuner as tuner
from cryptoffload.policies.bsgs_plan import plan_bsgs
from cryptoffload.profiles.loader import load_profile
from cryptoffload.sim.op_dag import DagCosts
from cryptoffload.workloads.bsgs import BsgsShape


def test_rows_are_the_tuners_choices() -> None:
    table = plan_bsgs("bsgs_u280", [1, 4], diagonals=256, naive_baby=16, exhaustive=True)
    assert table.provenance == "simulated" and "C = 256" in table.title
    assert table.columns[5] == "naive (bs=16) ms" and table.columns[-1] == "exhaustive gap %"
    prof = load_profile("bsgs_u280")
    costs = DagCosts.from_profile(prof)
    base = BsgsShape(256, 1, level=max(1, int(prof.get("ring.limbs") or 2) - 1))
    for n, row in zip([1, 4], table.rows):
        cfg = tuner.tune(base, n, costs)
        nv = tuner.naive(base, n, costs, baby=16)
        assert row[:4] == [n, cfg.strategy, cfg.baby, cfg.giant]
        assert row[4] == pytest.approx(cfg.predicted_s * 1e3)
        assert row[6] == pytest.approx(nv.predicted_s / cfg.predicted_s)
        assert row[7] >= -1e-9


def test_bad_input_is_a_user_error() -> None:
    with pytest.raises(ConfigError, match="--diagonals"):
        plan_bsgs("bsgs_u280", [1], diagonals=0)
    with pytest.raises(ConfigError, match="unknown BSGS strategy"):
        plan_bsgs("bsgs_u280", [2], diagonals=256, strategy="gather")
