"""The bootstrap planner: closed forms first (a dense transform's baby step at sqrt(C), or where
cheaper hoisted baby steps move it), then against the exhaustive search of every plan, and the
depth it must leave."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cryptoffload.crypto.ckks.bootstrap.plan import BootstrapPlan
from cryptoffload.errors import ConfigError
from cryptoffload.policies.bootstrap_costs import LevelCosts, OpCostTable, uniform_costs
from cryptoffload.policies.bootstrap_model import BootstrapSetting, bootstrap_depth
from cryptoffload.policies.bootstrap_plan import babies, budgets, exhaustive, plan_bootstrap, plan_for

FREE = 1e-12


def rotations_only(ring: int, depth: int, hoisted: float = 1.0) -> OpCostTable:
    return uniform_costs(ring, depth, rotate_s=1.0, hoisted_rotate_s=hoisted, pmul_s=FREE, add_s=FREE, mul_s=FREE)


@pytest.mark.parametrize("log_slots", [6, 8, 10, 12])
def test_a_dense_transform_takes_sqrt_c_baby_steps_under_uniform_costs(log_slots: int) -> None:
    """Budget (1, 1) only (depth 16): rotations (g - 1) + (C/g - 1) are least at g = sqrt(C)."""
    ring = 2 << log_slots
    s = BootstrapSetting(ring, depth=16, levels_after=0)
    assert budgets(s) == [(1, 1)]
    price, _ = plan_for(s, rotations_only(ring, 16), 1)
    root = 1 << (log_slots // 2)
    assert price.plan.dim1 == (root, root)
    stages = price.parts_s["CoeffToSlot"] + price.parts_s["SlotToCoeff"]   # EvalMod adds its conjugation
    assert stages == pytest.approx(2 * (2 * root - 2), rel=1e-6)


def test_cheaper_hoisted_baby_steps_move_the_optimum_to_more_baby_steps() -> None:
    """Hoisted baby steps at 1/4 of a rotation: r + (g - 2) r/4 + (C/g - 1) r is least at
    g = 2 sqrt(C) (C = 1024: g = 64 costs 31.5 rotations, 32 and 128 cost 39.5)."""
    s = BootstrapSetting(2048, depth=16, levels_after=0)
    price, _ = plan_for(s, rotations_only(2048, 16, hoisted=0.25), 1)
    stages = price.parts_s["CoeffToSlot"] + price.parts_s["SlotToCoeff"]
    assert price.plan.dim1 == (64, 64) and stages == pytest.approx(2 * 31.5, rel=1e-6)


def test_the_plan_leaves_the_levels_asked_for_and_fits_the_modulus() -> None:
    for depth, after in ((18, 0), (22, 3), (25, 2), (30, 10)):
        s = BootstrapSetting(4096, depth=depth, levels_after=after)
        choice = plan_bootstrap(s, rotations_only(4096, depth))
        assert choice.chosen.levels_after >= after
        assert bootstrap_depth(choice.chosen.plan.level_budget) + choice.chosen.levels_after == depth
    with pytest.raises(ConfigError, match="needs depth 18"):
        plan_bootstrap(BootstrapSetting(4096, depth=17, levels_after=2), rotations_only(4096, 17))


def test_openfhes_default_is_priced_beside_when_it_fits_and_said_missing_when_not() -> None:
    fits = plan_bootstrap(BootstrapSetting(4096, depth=25, levels_after=2), rotations_only(4096, 25))
    assert fits.default is not None and fits.default.plan.level_budget == (5, 4) and fits.default_note() == ""
    assert fits.chosen.total_s <= fits.default.total_s and fits.speedup(1) >= 1
    short = plan_bootstrap(BootstrapSetting(4096, depth=22, levels_after=2), rotations_only(4096, 22))
    assert short.default is None and short.speedup() is None and "needs depth 25" in short.default_note()


def test_more_depth_never_makes_the_chosen_plan_slower_under_level_free_costs() -> None:
    costs = uniform_costs(4096, 40, rotate_s=1e-2, hoisted_rotate_s=3e-3, pmul_s=2e-4, add_s=5e-5, mul_s=1e-2)
    totals = [plan_for(BootstrapSetting(4096, depth=d, levels_after=2), costs, 1)[0].total_s for d in range(18, 30)]
    assert all(b <= a * (1 + 1e-12) for a, b in zip(totals, totals[1:]))


def test_n_devices_never_plan_slower_than_one() -> None:
    costs = uniform_costs(4096, 25, rotate_s=1e-2, hoisted_rotate_s=3e-3, pmul_s=2e-4, add_s=5e-5, mul_s=1e-2)
    choice = plan_bootstrap(BootstrapSetting(4096, depth=25, levels_after=2, devices=4), costs)
    assert choice.chosen.devices == 4 and choice.chosen.total_s <= choice.chosen_one.total_s
    assert choice.default is not None and choice.default.total_s <= choice.default_one.total_s


def test_baby_step_candidates_are_the_powers_of_two_up_to_a_full_stage() -> None:
    assert babies(11, 1) == [1 << k for k in range(12)]          # dense: up to the slot count
    assert babies(11, 4) == [1, 2, 4, 8]                          # 3 layers per stage: 15 diagonals
    assert all(d & (d - 1) == 0 for d in babies(15, 5))


def _random_costs(ring: int, depth: int, draw) -> OpCostTable:
    levels = {}
    for lv in sorted(set(draw(st.lists(st.integers(0, depth), min_size=1, max_size=4)))):
        r = draw(st.floats(1e-3, 1e-1))
        levels[lv] = LevelCosts(r, r * draw(st.floats(0.05, 1.0)), r * draw(st.floats(1e-3, 0.2)),
                                r * draw(st.floats(1e-4, 0.05)), r * draw(st.floats(0, 0.3)), r * draw(st.floats(0.3, 3)))
    return OpCostTable(ring, levels, name="random")


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_the_planner_finds_the_exhaustive_searchs_plan(data) -> None:
    log_ring = data.draw(st.integers(7, 10))
    after = data.draw(st.integers(0, 3))
    depth = data.draw(st.integers(16 + after, 16 + after + 9))
    devices = data.draw(st.sampled_from([1, 1, 2, 4]))
    s = BootstrapSetting(1 << log_ring, depth=depth, levels_after=after, devices=devices,
                         bandwidth_Bps=data.draw(st.floats(1e8, 1e11)), latency_s=data.draw(st.floats(0, 1e-3)))
    costs = _random_costs(1 << log_ring, depth, data.draw)
    chosen, priced = plan_for(s, costs, devices)
    best = exhaustive(s, costs, devices)
    assert chosen.total_s == pytest.approx(best[0].total_s, rel=1e-9)
    assert chosen.plan == best[0].plan
    assert priced <= len(best) and chosen.plan in {p.plan for p in best}


def test_exhaustive_covers_every_budget_and_baby_step_pair() -> None:
    s = BootstrapSetting(512, depth=20, levels_after=0)
    plans = exhaustive(s, rotations_only(512, 20))
    log_slots = 8
    expected = sum(len(babies(log_slots, a)) * len(babies(log_slots, b)) for a, b in budgets(s))
    assert len(plans) == expected == len({p.plan for p in plans})
    assert all(p.total_s <= q.total_s * (1 + 1e-9) for p, q in zip(plans, plans[1:]))
    assert isinstance(plans[0].plan, BootstrapPlan)
