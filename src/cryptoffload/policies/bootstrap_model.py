"""Price one CKKS bootstrap plan: its BSGS stages on the op-DAG model, and EvalMod, at the levels
OpenFHE 1.6.1 runs them at.

Why a model of the whole bootstrap and not of its stages alone: a level budget moves more than
the stages. With the modulus fixed (``depth`` levels), a bootstrap with level budget ``(a, b)``
runs CoeffToSlot's ``a`` stages from level ``depth - 1`` down, then EvalMod below them, then
SlotToCoeff's ``b`` stages, and leaves ``depth - 14 - a - b`` levels to the application. One
more CoeffToSlot level makes the stages sparser and moves EvalMod -- the larger part of a
bootstrap at these sizes -- one level down, where it is cheaper; it also takes a level from the
application. So the planner prices all three parts, at their levels:

* **stages**: :func:`~cryptoffload.workloads.bsgs.bootstrap_stages` (OpenFHE's stage structure,
  checked against its rotation keys and call stacks) -> the BSGS op DAG -> the tuner's cost
  model (:func:`~cryptoffload.policies.bsgs_tuner.evaluate`, baby steps hoisted), each stage
  with the op costs of its own level (:meth:`OpCostTable.dag_costs`). On ``N`` devices each
  stage takes the strategy and the number of devices (``1, 2, 4, ..., N``) that price cheapest
  at the plan's baby-step count: a sparse stage may lose more to a reduction tree than it gains.
* **EvalMod**: the approximate modular reduction, on one device. OpenFHE 1.6.1 (uniform ternary
  secret, ``GetBootstrapDepth = 14 + a + b``; the benchmark checks it) spends one level on the
  scaling before CoeffToSlot and 13 in EvalMod: a Chebyshev series of degree 88 by
  Paterson-Stockmeyer (``ComputeDegreesPS(88)``: k = 6, m = 4, so 5 products for T_2..T_6, 3
  squarings and 3 products for the giant powers, 7 in the recursion: 18 products over 7 levels),
  then 6 double-angle squarings, one per level. With full packing it runs twice (the real and
  the imaginary part), after one conjugation (priced as one rotation). Each product is
  ``mul_s`` (with relinearisation and rescale) at its level; the 18 are spread evenly over the
  Chebyshev's 7 levels.
* Everything else (mod-raise, the scaling, the final additions) is the same for every plan
  and left out: the totals are for ranking plans and for reading beside a measurement of the
  parts, not a bootstrap's wall time.

All of it is *simulated*: a prediction from op costs, never a measurement.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Sequence

from cryptoffload.crypto.ckks.bootstrap.plan import BootstrapPlan
from cryptoffload.errors import ConfigError
from cryptoffload.policies import bsgs_tuner as tuner
from cryptoffload.policies.bootstrap_costs import OpCostTable
from cryptoffload.workloads.bsgs import STRATEGIES, BsgsShape, Split, Stage, bootstrap_stages, split

#: levels of EvalMod and the scaling before CoeffToSlot (OpenFHE 1.6.1, uniform ternary secret:
#: ``GetBootstrapDepth(budget) - budget[0] - budget[1]``)
EVALMOD_DEPTH = 14
CHEBYSHEV_LEVELS = 7      # the degree-88 Chebyshev series' levels (13 of EvalMod's, less 6 double angles)
CHEBYSHEV_PRODUCTS = 18   # its ciphertext products (Paterson-Stockmeyer, k = 6, m = 4; module docstring)
DOUBLE_ANGLE = 6          # OpenFHE's R_UNIFORM double-angle squarings, one level each
#: OpenFHE's ``EvalBootstrapSetup`` defaults: ``levelBudget = {5, 4}``, ``dim1 = {0, 0}``
OPENFHE_DEFAULT = BootstrapPlan((5, 4), (0, 0))
#: the multi-device paper's link (100 Gb/s, 1 us; profiles/bsgs_u280.toml), for N > 1
DEFAULT_BANDWIDTH_BPS = 1.25e10
DEFAULT_LATENCY_S = 1e-6
MAX_RING = 1 << 17
MAX_DEPTH = 120


def bootstrap_depth(level_budget: Sequence[int]) -> int:
    """Levels one bootstrap with ``level_budget`` consumes (OpenFHE's ``GetBootstrapDepth``)."""
    return EVALMOD_DEPTH + level_budget[0] + level_budget[1]


@dataclass(frozen=True)
class BootstrapSetting:
    """What the plan must fit: ring degree, slots (0: full packing, N/2), the modulus chain's
    ``depth`` (levels of a fresh ciphertext after mod-raise), the ``levels_after`` the
    application needs after bootstrapping, ``devices`` to split stages over, and the link
    between them."""

    ring_degree: int
    depth: int
    levels_after: int = 2
    slots: int = 0
    devices: int = 1
    bandwidth_Bps: float = DEFAULT_BANDWIDTH_BPS
    latency_s: float = DEFAULT_LATENCY_S

    def __post_init__(self) -> None:
        n = self.ring_degree
        if isinstance(n, bool) or not isinstance(n, int) or n < 8 or n > MAX_RING or n & (n - 1):
            raise ConfigError(f"the ring degree N must be a power of two from 8 to {MAX_RING}, got {n!r}")
        full = n // 2
        s = self.slots
        if isinstance(s, bool) or not isinstance(s, int) or s < 0 or s > full or (s and (s < 2 or s & (s - 1))):
            raise ConfigError(f"slots must be 0 (full packing) or a power of two from 2 to N/2 = {full}, got {s!r}")
        for what, v, low, high in (("the depth", self.depth, 1, MAX_DEPTH),
                                   ("the levels after bootstrapping", self.levels_after, 0, MAX_DEPTH),
                                   ("the number of devices", self.devices, 1, 1024)):
            if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
                raise ConfigError(f"{what} must be an integer from {low} to {high}, got {v!r}")
        if not (self.bandwidth_Bps > 0 and self.latency_s >= 0):
            raise ConfigError(f"the link needs a bandwidth above 0 and a latency of 0 or more, got "
                              f"{self.bandwidth_Bps!r} B/s and {self.latency_s!r} s")

    @property
    def slot_count(self) -> int:
        return self.slots or self.ring_degree // 2

    @property
    def full_packing(self) -> bool:
        return self.slot_count == self.ring_degree // 2

    def levels_left(self, plan: BootstrapPlan) -> int:
        """Levels a ciphertext has after a bootstrap with ``plan`` (negative: does not fit)."""
        return self.depth - bootstrap_depth(plan.level_budget)


@dataclass(frozen=True)
class StagePrice:
    """One BSGS stage of a plan, priced (simulated)."""

    transform: str
    index: int
    layers: int
    diagonals: int
    stride: int
    level: int
    baby: int
    giant: int
    strategy: str
    devices_used: int
    predicted_s: float


@dataclass(frozen=True)
class PlanPrice:
    """A plan priced on ``devices`` devices: its stages, EvalMod and the total (simulated)."""

    plan: BootstrapPlan
    devices: int
    levels_after: int
    stages: tuple[StagePrice, ...]
    evalmod_s: float
    parts_s: dict[str, float] = field(default_factory=dict)
    rotation_keys: int = 0         # distinct rotation steps the stages need (OpenFHE adds a conjugation key)

    @property
    def total_s(self) -> float:
        return sum(self.parts_s.values())


def stage_levels(setting: BootstrapSetting, plan: BootstrapPlan) -> list[Stage]:
    """The plan's stages at the levels they run at with this modulus (see the module doc)."""
    left = setting.levels_left(plan)
    if left < 0:
        raise ConfigError(f"level budget {plan.level_budget} needs depth {bootstrap_depth(plan.level_budget)}, "
                          f"more than the modulus's {setting.depth}")
    return bootstrap_stages(setting.slot_count, plan.level_budget, plan.dim1, top_level=setting.depth - 1,
                            levels_after=left)


class StagePricer:
    """Prices stages on 1..N devices, remembering each (shape, N) it priced (a shape holds its level): a search
    prices the same stage in many plans."""

    def __init__(self, setting: BootstrapSetting, costs: OpCostTable) -> None:
        self.setting, self.costs = setting, costs.for_ring(setting.ring_degree)
        self._memo: dict[tuple[BsgsShape, int], tuple[float, str, int]] = {}

    def price(self, shape: BsgsShape, devices: int) -> tuple[float, str, int]:
        """(seconds, strategy, devices used) of the cheapest split of ``shape`` on up to
        ``devices``. A split over ``n`` devices takes at least the one-device time / ``n``
        (every op of one device is done somewhere, the splits only add work), so an ``n`` whose
        bound is above the best found is not built."""
        key = (shape, devices)
        if key not in self._memo:
            s = self.setting
            costs = self.costs.dag_costs(shape.level, bandwidth_Bps=s.bandwidth_Bps, latency_s=s.latency_s)
            one = tuner.evaluate(shape, 1, STRATEGIES[0], shape.baby, costs, hoisted=True)[0].predicted_s
            best = (one, STRATEGIES[0], 1)
            counts = sorted({1 << k for k in range(1, devices.bit_length()) if (1 << k) <= devices} | {devices} - {1})
            for n in counts:
                if one / n >= best[0]:
                    continue
                for strategy in STRATEGIES:
                    cfg = tuner.evaluate(shape, n, strategy, shape.baby, costs, hoisted=True)[0]
                    if cfg.predicted_s < best[0]:
                        best = (cfg.predicted_s, strategy, n)
            self._memo[key] = best
        return self._memo[key]

    def lower_bound(self, shape: BsgsShape, devices: int) -> float:
        """A time no split of ``shape`` over up to ``devices`` devices beats: its one-device
        time / ``devices``."""
        return self.price(shape, 1)[0] / devices

    def stage(self, st: Stage, devices: int) -> StagePrice:
        secs, strategy, used = self.price(st.shape, devices)
        sh = st.shape
        return StagePrice(st.transform, st.index, st.layers, sh.diagonals, sh.stride, sh.level, sh.baby, sh.giant,
                          strategy, used, secs)

    def evalmod(self, start_level: int) -> float:
        """EvalMod from ``start_level`` down (see the module docstring), on one device."""
        c = self.costs
        cheb = sum(c.at(start_level - j).mul_s for j in range(CHEBYSHEV_LEVELS)) * CHEBYSHEV_PRODUCTS / CHEBYSHEV_LEVELS
        dbl = sum(c.at(start_level - CHEBYSHEV_LEVELS - j).mul_s for j in range(DOUBLE_ANGLE))
        if self.setting.full_packing:
            return c.at(start_level).rotate_s + 2 * (cheb + dbl)
        return cheb + dbl

    def plan(self, plan: BootstrapPlan, devices: int | None = None) -> PlanPrice:
        """``plan`` priced on ``devices`` (default: the setting's) devices."""
        n = self.setting.devices if devices is None else devices
        levels = stage_levels(self.setting, plan)
        stages = tuple(self.stage(st, n) for st in levels)
        keys = len(set().union(*(st.shape.rotation_steps() for st in levels)))
        evalmod = self.evalmod(self.setting.depth - 1 - plan.level_budget[0])
        parts = {t: sum(s.predicted_s for s in stages if s.transform == t) for t in ("CoeffToSlot", "SlotToCoeff")}
        parts = {"CoeffToSlot": parts["CoeffToSlot"], "EvalMod": evalmod, "SlotToCoeff": parts["SlotToCoeff"]}
        return PlanPrice(plan, n, self.setting.levels_left(plan), stages, evalmod, parts, keys)


def stage_splits(setting: BootstrapSetting, price: PlanPrice) -> list[tuple[Stage, Split]]:
    """Each stage of a priced plan with the split it was priced with (strategy and devices
    used): what :func:`cryptoffload.engines.bsgs_run.run_bsgs` executes on Dask workers, stage
    by stage, to check the model on the operation itself."""
    stages = stage_levels(setting, price.plan)
    return [(st, split(st.shape, sp.devices_used, sp.strategy)) for st, sp in zip(stages, price.stages)]


def explicit_dim1(setting: BootstrapSetting, plan: BootstrapPlan) -> BootstrapPlan:
    """``plan`` with each ``0`` in ``dim1`` replaced by the baby-step count OpenFHE uses for it
    (so two plans that run the same stages compare equal)."""
    stages = stage_levels(setting, plan)
    first = [next(st.shape.baby for st in stages if st.transform == t) for t in ("CoeffToSlot", "SlotToCoeff")]
    return replace(plan, dim1=(plan.dim1[0] or first[0], plan.dim1[1] or first[1]))
