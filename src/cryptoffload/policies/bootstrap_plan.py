"""Choose a CKKS bootstrap's split: the level budget of CoeffToSlot and SlotToCoeff and the
baby-step count (OpenFHE's ``dim1``) of each, for a ring, a modulus, the levels the application
needs after bootstrapping, N devices and measured op costs.

Why a search over the model and not OpenFHE's defaults: OpenFHE's ``EvalBootstrapSetup``
defaults (level budget (5, 4), ``dim1`` chosen per stage by a fixed rule) ignore the machine's
op costs and the modulus; the multi-device paper (Ha, Jung and Paek) re-tunes the baby step
per device count. The model (:mod:`.bootstrap_model`) prices a plan's stages on the BSGS op
DAG at the levels they run at, and EvalMod where the budget puts it; this module finds the
cheapest plan that leaves the application its levels.

Two searches, the same answer (tested):

* :func:`plan_bootstrap` -- the planner. The price separates: CoeffToSlot's stages and
  EvalMod depend only on ``(a, dim1[0])``, SlotToCoeff's on ``(a, b, dim1[1])`` (its levels
  hang on what the plan leaves). So for each ``a`` it picks CoeffToSlot's best baby-step count,
  for each feasible ``(a, b)`` SlotToCoeff's, and takes the cheapest sum.
* :func:`exhaustive` -- every ``(a, b, dim1[0], dim1[1])`` priced whole.

Candidates: level budgets ``1 <= a, b <= log2(slots)`` with ``14 + a + b + levels_after <=
depth`` (OpenFHE's depth rule); baby-step counts the powers of two up to a full stage's
``2^layers`` (``dim1`` must be a power of two, or OpenFHE leaves diagonals out). Ties go to
the plan that leaves more levels, then to OpenFHE's default baby steps.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cmp_to_key

from cryptoffload.crypto.ckks.bootstrap.plan import MAX_STAGE_LEVELS, BootstrapPlan
from cryptoffload.errors import ConfigError
from cryptoffload.policies.bootstrap_costs import OpCostTable
from cryptoffload.policies.bootstrap_model import (
    EVALMOD_DEPTH,
    OPENFHE_DEFAULT,
    BootstrapSetting,
    PlanPrice,
    StagePricer,
    bootstrap_depth,
    explicit_dim1,
    stage_levels,
)
from cryptoffload.workloads.bsgs import select_layers

TRANSFORMS = ("CoeffToSlot", "SlotToCoeff")
#: prices closer than this (relative) are a tie
TIE = 1e-9


@dataclass(frozen=True)
class PlanChoice:
    """The planner's answer: the chosen plan and OpenFHE's default, each priced on one device
    and on the setting's ``devices`` (the same on one device), all simulated."""

    setting: BootstrapSetting
    costs: str                     # where the op costs come from (OpCostTable.describe)
    chosen: PlanPrice              # chosen for setting.devices
    default: PlanPrice | None      # OpenFHE's default, explicit dim1, on setting.devices (None: does not fit)
    chosen_one: PlanPrice          # chosen for one device
    default_one: PlanPrice | None
    searched: int                  # transform families the search priced (by parts)

    def speedup(self, devices: int | None = None) -> float | None:
        """OpenFHE's default time over the chosen plan's (predicted), on one device or on
        the setting's; ``None`` when the default does not fit."""
        one = devices == 1
        default, chosen = (self.default_one, self.chosen_one) if one else (self.default, self.chosen)
        return None if default is None else default.total_s / chosen.total_s

    def default_note(self) -> str:
        """Why OpenFHE's default is missing, or ``""``."""
        if self.default is not None:
            return ""
        return (f"OpenFHE's default level budget {OPENFHE_DEFAULT.level_budget} does not fit: it needs depth "
                f"{bootstrap_depth(OPENFHE_DEFAULT.level_budget) + self.setting.levels_after} to leave "
                f"{self.setting.levels_after} levels (and {max(OPENFHE_DEFAULT.level_budget)} FFT layers); "
                f"the depth is {self.setting.depth}")


def budgets(setting: BootstrapSetting) -> list[tuple[int, int]]:
    """Level budgets that fit the modulus and leave ``levels_after`` levels."""
    log_slots = setting.slot_count.bit_length() - 1
    top = min(log_slots, MAX_STAGE_LEVELS)
    room = setting.depth - setting.levels_after - EVALMOD_DEPTH
    return [(a, b) for a in range(1, top + 1) for b in range(1, top + 1) if a + b <= room]


def babies(log_slots: int, budget: int) -> list[int]:
    """Baby-step counts for a transform's full stages: powers of two up to ``2^layers`` (a
    stage of ``layers`` collapsed FFT layers has ``2^(layers+1) - 1`` diagonals; a dense
    transform, ``2^log_slots``)."""
    layers = select_layers(log_slots, budget)[0]
    return [1 << k for k in range(layers + 1)]


def check_fits(setting: BootstrapSetting) -> list[tuple[int, int]]:
    """The level budgets that fit, or a one-line :class:`ConfigError` when none does (checked
    before any op cost is read)."""
    options = budgets(setting)
    if not options:
        need = EVALMOD_DEPTH + 2 + setting.levels_after
        raise ConfigError(f"no bootstrap fits depth {setting.depth} with {setting.levels_after} levels left after it: "
                          f"the smallest level budget (1, 1) needs depth {need}; raise the depth or lower the levels "
                          "after bootstrapping")
    return options


def _family_cost(pricer: StagePricer, plan: BootstrapPlan, transform: str, devices: int) -> float:
    return sum(pricer.stage(st, devices).predicted_s for st in stage_levels(pricer.setting, plan)
               if st.transform == transform)


def _family_bound(pricer: StagePricer, plan: BootstrapPlan, transform: str, devices: int) -> float:
    """A time the plan's stages of ``transform`` cannot beat on ``devices``: the sum of their
    one-device times / devices (exact on one device)."""
    return sum(pricer.lower_bound(st.shape, devices) for st in stage_levels(pricer.setting, plan)
               if st.transform == transform)


def _best_family(pricer: StagePricer, plans: list[BootstrapPlan], transform: str, devices: int) -> BootstrapPlan:
    """The plan of ``plans`` (which differ in one transform's baby steps) whose stages of
    ``transform`` price cheapest on ``devices`` (ties: OpenFHE's own count, then the smaller).
    Candidates go cheapest lower bound first and stop when the bound passes the best."""
    t = TRANSFORMS.index(transform)
    default = explicit_dim1(pricer.setting, replace(plans[0], dim1=(0, 0))).dim1[t]
    best: tuple[float, bool, int, BootstrapPlan] | None = None
    bounds = sorted((_family_bound(pricer, p, transform, devices), k, p) for k, p in enumerate(plans))
    for lb, _, plan in bounds:
        if best is not None and lb > best[0] * (1 + TIE):
            break
        here = (_family_cost(pricer, plan, transform, devices), plan.dim1[t] != default, plan.dim1[t], plan)
        if best is None or here[0] < best[0] * (1 - TIE) or (here[0] <= best[0] * (1 + TIE) and here[1:3] < best[1:3]):
            best = here
    assert best is not None
    return best[3]


def _nondefault(setting: BootstrapSetting, price: PlanPrice) -> int:
    """How many of the plan's baby-step counts differ from what OpenFHE would pick."""
    default = explicit_dim1(setting, BootstrapPlan(price.plan.level_budget, (0, 0), price.plan.slots)).dim1
    return sum(d != e for d, e in zip(price.plan.dim1, default))


def _compare(setting: BootstrapSetting, p: PlanPrice, q: PlanPrice) -> int:
    """Cheaper first; on a tie (:data:`TIE`), more levels left, then fewer baby-step counts
    that differ from OpenFHE's, then the smaller budget and baby steps (a total order)."""
    if abs(p.total_s - q.total_s) > TIE * max(p.total_s, q.total_s):
        return -1 if p.total_s < q.total_s else 1
    kp = (-p.levels_after, _nondefault(setting, p), p.plan.level_budget, p.plan.dim1)
    kq = (-q.levels_after, _nondefault(setting, q), q.plan.level_budget, q.plan.dim1)
    return (kp > kq) - (kp < kq)


def plan_for(setting: BootstrapSetting, costs: OpCostTable, devices: int, pricer: StagePricer | None = None
             ) -> tuple[PlanPrice, int]:
    """The cheapest plan on ``devices`` devices and how many transform families (a budget and
    its baby-step candidates) it priced on them.

    By parts (see the module doc), branch and bound: every budget ``(a, b)`` gets a lower bound
    -- the cheapest bound of CoeffToSlot's candidates at ``a``, EvalMod at ``a``, the cheapest
    bound of SlotToCoeff's at ``(a, b)`` -- and budgets are priced cheapest bound first until
    the bound passes the best plan found (a dense transform of 2^15 diagonals on 16 devices is
    never built when sparse stages already beat its bound)."""
    pricer = pricer or StagePricer(setting, costs)
    options = check_fits(setting)
    log_slots = setting.slot_count.bit_length() - 1
    slots = setting.slots
    cts = {a: [BootstrapPlan((a, min(bb for aa, bb in options if aa == a)), (g, 0), slots)
               for g in babies(log_slots, a)] for a in {a for a, _ in options}}
    cts_lb = {a: min(_family_bound(pricer, p, "CoeffToSlot", devices) for p in plans) for a, plans in cts.items()}
    stc = {(a, b): [BootstrapPlan((a, b), (1, g), slots) for g in babies(log_slots, b)] for a, b in options}
    order = sorted((cts_lb[a] + pricer.evalmod(setting.depth - 1 - a)
                    + min(_family_bound(pricer, p, "SlotToCoeff", devices) for p in stc[(a, b)]), a, b)
                   for a, b in options)
    best_cts: dict[int, int] = {}
    best: PlanPrice | None = None
    priced = 0
    for lb, a, b in order:
        if best is not None and lb > best.total_s * (1 + TIE):
            break
        if a not in best_cts:
            best_cts[a] = _best_family(pricer, cts[a], "CoeffToSlot", devices).dim1[0]
            priced += 1
        cands = [BootstrapPlan((a, b), (best_cts[a], p.dim1[1]), slots) for p in stc[(a, b)]]
        price = pricer.plan(_best_family(pricer, cands, "SlotToCoeff", devices), devices)
        priced += 1
        if best is None or _compare(setting, price, best) < 0:
            best = price
    assert best is not None
    return best, priced


def plan_bootstrap(setting: BootstrapSetting, costs: OpCostTable) -> PlanChoice:
    """Choose the plan for ``setting.devices`` devices (and for one), and price OpenFHE's
    default beside it when it fits the depth (it needs ``levels_after + 23``; else ``None``)."""
    pricer = StagePricer(setting, costs)
    chosen_one, n_one = plan_for(setting, costs, 1, pricer)
    chosen, n_many = (chosen_one, 0) if setting.devices == 1 else plan_for(setting, costs, setting.devices, pricer)
    default = default_one = None
    if setting.levels_left(OPENFHE_DEFAULT) >= setting.levels_after and \
            max(OPENFHE_DEFAULT.level_budget) <= setting.slot_count.bit_length() - 1:
        plan = explicit_dim1(setting, BootstrapPlan(OPENFHE_DEFAULT.level_budget, (0, 0), setting.slots))
        default, default_one = pricer.plan(plan), pricer.plan(plan, 1)
    return PlanChoice(setting, pricer.costs.describe(), chosen, default, chosen_one, default_one, n_one + n_many)


def exhaustive(setting: BootstrapSetting, costs: OpCostTable, devices: int | None = None) -> list[PlanPrice]:
    """Every plan priced whole, cheapest first (ties as :func:`plan_for` breaks them)."""
    pricer = StagePricer(setting, costs)
    n = setting.devices if devices is None else devices
    options = check_fits(setting)
    log_slots = setting.slot_count.bit_length() - 1
    out = [pricer.plan(BootstrapPlan((a, b), (gc, gs), setting.slots), n)
           for a, b in options for gc in babies(log_slots, a) for gs in babies(log_slots, b)]
    out.sort(key=cmp_to_key(lambda p, q: _compare(setting, p, q)))
    return out
