"""The Python API's planners (cryptoffload.api.plan): values, not printed tables, with the
command line's bounds; every planner in PLANNERS."""

from __future__ import annotations

import pytest

from cryptoffload import plan
from cryptoffload.errors import ConfigError


def test_isc_returns_the_plan() -> None:
    p = plan.isc(10_000, requests_per_client=0.01)
    assert isinstance(p, plan.IscPlan) and p.csds == max(p.csds_for_capacity or 1, p.csds_for_load or 1)
    assert plan.isc(10).csds_for_load is None  # no request rate: sized by capacity only


def test_bsgs_returns_a_table_row_per_device_count() -> None:
    table = plan.bsgs([1, 2], space="pow2", diagonals=1024)
    assert table.columns[:4] == ["N", "strategy", "bs", "gs"] and [r[0] for r in table.rows] == [1, 2]
    assert all(r[2] & (r[2] - 1) == 0 for r in table.rows)  # pow2 baby steps


@pytest.mark.parametrize("kwargs, message", [
    ({"devices": [0]}, "devices must be between 1 and 1,024"),
    ({"devices": 4}, "devices must be a list"),
    ({"devices": [1], "strategy": "nope"}, "unknown strategy 'nope'"),
    ({"devices": [1], "space": "odd"}, "unknown baby-step space 'odd'"),
    ({"devices": [1], "diagonals": 10**9}, "diagonals must be between"),
])
def test_bsgs_refusals(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        plan.bsgs(**kwargs)  # type: ignore[arg-type]


def test_isc_refusals_and_the_table_of_planners() -> None:
    with pytest.raises(ConfigError, match="clients must be between"):
        plan.isc(0)
    with pytest.raises(ConfigError, match="requests_per_client"):
        plan.isc(10, requests_per_client=-1.0)
    assert set(plan.PLANNERS) == {"bsgs", "isc", "bootstrap"}


def test_bootstrap_plans_a_bootstrap_plan_the_command_prints() -> None:
    """plan.bootstrap is what ``cryptoffload plan bootstrap`` runs: a BootstrapPlan that fits the
    depth, OpenFHE's default beside it, refusals as the command's."""
    from cryptoffload.crypto.ckks.bootstrap import BootstrapPlan
    from cryptoffload.errors import ConfigError

    choice = plan.bootstrap(1 << 12)
    assert isinstance(choice.chosen.plan, BootstrapPlan)
    assert choice.setting.levels_left(choice.chosen.plan) >= 2 and choice.default is not None
    with pytest.raises(ConfigError, match="--ring must be a power of two"):
        plan.bootstrap(5000)
    with pytest.raises(ConfigError, match="--devices must be between 1 and 64"):
        plan.bootstrap(1 << 12, devices=65)
