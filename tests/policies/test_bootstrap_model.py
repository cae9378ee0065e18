"""The bootstrap pricing model against closed forms: a one-stage budget is one dense product,
EvalMod is its stated count of products, levels follow OpenFHE's depth rule, and a split over N
devices never prices above one device."""

from __future__ import annotations

import pytest

from cryptoffload.crypto.ckks.bootstrap.plan import BootstrapPlan
from cryptoffload.errors import ConfigError
from cryptoffload.policies.bootstrap_costs import uniform_costs
from cryptoffload.policies import bsgs_tuner as tuner
from cryptoffload.policies.bootstrap_model import (CHEBYSHEV_PRODUCTS, DOUBLE_ANGLE, EVALMOD_DEPTH, OPENFHE_DEFAULT,
                                                   BootstrapSetting, StagePricer, bootstrap_depth, explicit_dim1,
                                                   stage_levels, stage_splits)
from cryptoffload.workloads.bsgs import BsgsShape

FREE = 1e-12   # the cost of the ops a closed form leaves out


def test_openfhe_depth_rule_and_levels_left() -> None:
    assert bootstrap_depth((5, 4)) == 23 == EVALMOD_DEPTH + 9        # GetBootstrapDepth, uniform ternary
    s = BootstrapSetting(4096, depth=25, levels_after=2)
    assert s.levels_left(OPENFHE_DEFAULT) == 2 and s.levels_left(BootstrapPlan((3, 3))) == 5
    with pytest.raises(ConfigError, match="needs depth 23"):
        stage_levels(BootstrapSetting(4096, depth=20, levels_after=0), OPENFHE_DEFAULT)


def test_stages_run_at_openfhes_levels() -> None:
    s = BootstrapSetting(4096, depth=25, levels_after=2)
    stages = stage_levels(s, BootstrapPlan((3, 2)))
    cts = [st.shape.level for st in stages if st.transform == "CoeffToSlot"]
    stc = [st.shape.level for st in stages if st.transform == "SlotToCoeff"]
    left = 25 - bootstrap_depth((3, 2))
    assert cts == [24, 23, 22] and stc == [left + 2, left + 1]


@pytest.mark.parametrize("log_slots", [6, 8, 10])
@pytest.mark.parametrize("g", [2, 8, 32])
def test_a_one_stage_budget_prices_one_dense_products_rotations(log_slots: int, g: int) -> None:
    slots = 1 << log_slots
    s = BootstrapSetting(2 * slots, depth=16, levels_after=0)
    pricer = StagePricer(s, uniform_costs(2 * slots, 16, rotate_s=1.0, pmul_s=FREE, add_s=FREE, mul_s=FREE))
    price = pricer.plan(BootstrapPlan((1, 1), (g, g)))
    dense = BsgsShape(slots, g, slots=slots, rescale_each_giant=False, horner=True).op_counts()
    per_transform = dense["baby_rotations"] + dense["giant_rotations"]
    assert per_transform == (g - 1) + (slots // g - 1)
    assert [st.diagonals for st in price.stages] == [slots, slots]
    assert price.parts_s["CoeffToSlot"] == pytest.approx(per_transform, rel=1e-6)
    assert price.parts_s["SlotToCoeff"] == pytest.approx(per_transform, rel=1e-6)


@pytest.mark.parametrize("slots, runs", [(0, 2), (256, 1)])
def test_evalmod_is_its_count_of_products(slots: int, runs: int) -> None:
    s = BootstrapSetting(4096, depth=25, levels_after=2, slots=slots)
    pricer = StagePricer(s, uniform_costs(4096, 25, rotate_s=5.0, mul_s=1.0, pmul_s=FREE, add_s=FREE))
    conjugation = 5.0 if runs == 2 else 0.0
    assert pricer.evalmod(18) == pytest.approx(conjugation + runs * (CHEBYSHEV_PRODUCTS + DOUBLE_ANGLE))


def test_evalmod_is_cheaper_lower_in_the_chain() -> None:
    s = BootstrapSetting(4096, depth=25, levels_after=2)
    pricer = StagePricer(s, uniform_costs(4096, 0, mul_s=1.0))   # one level: costs scale with the limbs
    assert pricer.evalmod(17) < pricer.evalmod(18)
    assert pricer.plan(BootstrapPlan((6, 3))).evalmod_s < pricer.plan(BootstrapPlan((5, 4))).evalmod_s


@pytest.mark.parametrize("devices", [2, 3, 4, 8])
def test_n_devices_never_price_above_one_and_the_bound_holds(devices: int) -> None:
    s = BootstrapSetting(4096, depth=25, levels_after=2, devices=devices, bandwidth_Bps=1e9, latency_s=1e-4)
    pricer = StagePricer(s, uniform_costs(4096, 25, rotate_s=1e-2, hoisted_rotate_s=3e-3, pmul_s=1e-4, add_s=1e-5))
    for st in stage_levels(s, BootstrapPlan((3, 3), (8, 4))):
        one, _, _ = pricer.price(st.shape, 1)
        many, strategy, used = pricer.price(st.shape, devices)
        assert many <= one and 1 <= used <= devices and pricer.lower_bound(st.shape, devices) <= many
        assert (strategy, used) == ("replicate", 1) or many < one


def test_default_dim1_is_made_explicit_as_openfhe_picks_it() -> None:
    s = BootstrapSetting(4096, depth=25, levels_after=2)
    plan = explicit_dim1(s, OPENFHE_DEFAULT)
    assert plan.level_budget == (5, 4) and all(d > 0 for d in plan.dim1)
    assert stage_levels(s, plan) == stage_levels(s, OPENFHE_DEFAULT)
    assert explicit_dim1(s, BootstrapPlan((5, 4), (2, 0))).dim1[0] == 2


@pytest.mark.parametrize("kwargs, words", [
    (dict(ring_degree=1000, depth=25), "power of two"), (dict(ring_degree=1 << 18, depth=25), "power of two"),
    (dict(ring_degree=4096, depth=25, slots=3), "slots"), (dict(ring_degree=4096, depth=25, slots=4096), "slots"),
    (dict(ring_degree=4096, depth=0), "depth"), (dict(ring_degree=4096, depth=25, devices=0), "devices"),
    (dict(ring_degree=4096, depth=25, levels_after=-1), "levels after"),
    (dict(ring_degree=4096, depth=25, bandwidth_Bps=0.0), "bandwidth")])
def test_a_setting_out_of_range_is_one_line(kwargs: dict, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        BootstrapSetting(**kwargs)


def test_a_priced_plans_splits_are_the_ones_it_was_priced_with() -> None:
    s = BootstrapSetting(4096, depth=25, levels_after=2, devices=4, bandwidth_Bps=1e10, latency_s=1e-6)
    costs = uniform_costs(4096, 25, rotate_s=1e-2, hoisted_rotate_s=2e-3, pmul_s=1e-4, add_s=1e-5)
    pricer = StagePricer(s, costs)
    price = pricer.plan(BootstrapPlan((4, 3), (4, 8)))
    pairs = stage_splits(s, price)
    assert len(pairs) == len(price.stages) == 7
    for (stage, sp), priced in zip(pairs, price.stages):
        assert (sp.devices, sp.strategy, stage.shape.baby) == (priced.devices_used, priced.strategy, priced.baby)
        again = tuner.evaluate(stage.shape, sp.devices, sp.strategy, stage.shape.baby,
                               pricer.costs.dag_costs(stage.shape.level, bandwidth_Bps=1e10, latency_s=1e-6),
                               hoisted=True)[0]
        assert again.predicted_s == pytest.approx(priced.predicted_s)
