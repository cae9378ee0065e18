"""Bootstrapping in the bsgs-multidevice study: CoeffToSlot and SlotToCoeff as the sparse BSGS
stages they are (modelled on N devices, OpenFHE's default baby step against a tuned one),
OpenFHE's real bootstrapping timing from our stored benchmark, and the bootstrap plan our
planner chooses (level budget and baby steps) against OpenFHE's default: predicted, and as the
stored benchmark ran both on OpenFHE.

Why apart from the study: the paper's Table 1 prices one dense product; these two tables say
what the same model and tuner do for the stages bootstrapping actually runs, and how that model
compared with OpenFHE when the benchmark ran (``make bench-bootstrap``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from cryptoffload.checks import strict_json
from cryptoffload.crypto.ckks.bootstrap.plan import BootstrapPlan
from cryptoffload.errors import InputError
from cryptoffload.io import read_input_text
from cryptoffload.policies import bsgs_tuner as tuner
from cryptoffload.policies.bootstrap_costs import load_costs
from cryptoffload.policies.bootstrap_model import BootstrapSetting, StagePricer
from cryptoffload.policies.bootstrap_plan import plan_bootstrap
from cryptoffload.report.result import Table
from cryptoffload.report.provenance import provenance_word, stored_from
from cryptoffload.report.rows import column, table_of
from cryptoffload.sim.op_dag import DagCosts
from cryptoffload.studies._bsgs_paper import PaperSetup
from cryptoffload.workloads.bsgs import bootstrap_stages

#: the stored OpenFHE bootstrapping benchmark, shipped as package data (benchmarks/results/ holds
#: the benchmark's own output, which a test keeps identical)
OPENFHE_RESULT = "bootstrap_openfhe.json"


@dataclass(frozen=True)
class StageCost:
    """One stage on ``n`` devices: its diagonals and the configuration that prices it."""

    name: str
    diagonals: int
    devices_used: int
    strategy: str
    bs: int
    seconds: float


@dataclass(frozen=True)
class StagesCost:
    total_s: float
    stages: list[StageCost]


def stage_totals(costs: DagCosts, slots: int, budget: tuple[int, int], n: int, *, tuned: bool,
                 hoisted: bool = True) -> StagesCost:
    """CoeffToSlot + SlotToCoeff on ``n`` devices, each stage a sparse BSGS product: with
    OpenFHE's default baby step (replicated on all ``n``), or tuned per stage (strategy, bs and
    how many of the ``n`` devices to use)."""
    total, stages = 0.0, []
    for st in bootstrap_stages(slots, budget):
        if tuned:
            cfg = tuner.tune_up_to(st.shape, n, costs, hoisted=hoisted, space="pow2")  # OpenFHE: dim1 a power of two
        else:
            cfg = tuner.evaluate(st.shape, n, "replicate", st.shape.baby, costs, hoisted=hoisted)[0]
        total += cfg.predicted_s
        stages.append(StageCost(f"{st.transform} {st.index}", st.shape.diagonals, cfg.devices, cfg.strategy,
                                cfg.baby, cfg.predicted_s))
    return StagesCost(total, stages)


@dataclass(frozen=True)
class BootstrapRow:
    devices: int = column()
    default_bs_ms: float = column()
    tuned_ms: float = column()
    speedup: float = column()


@dataclass(frozen=True)
class StageDetailRow:
    devices: int = column()
    stage: str = column()
    diagonals: int = column()
    devices_used: int = column()
    strategy: str = column()
    bs: int = column()
    ms: float = column()


@dataclass(frozen=True)
class BootstrapStages:
    """Both stage tables' rows, and the ring they were priced for."""

    slots: int
    budget: tuple[int, int]
    totals: list[BootstrapRow]
    detail: list[StageDetailRow]


def bootstrap_stage_rows(setup: PaperSetup, budget: tuple[int, int], say: Callable[[str], None]) -> BootstrapStages:
    """Per N: both stages' total with OpenFHE's default bs and tuned, and each tuned stage."""
    say("bootstrapping stages")
    slots = int(setup.profile.get("shape.poly_modulus_degree") or 65536) // 2
    totals: list[BootstrapRow] = []
    detail: list[StageDetailRow] = []
    for n in setup.devices:
        default = stage_totals(setup.costs, slots, budget, n, tuned=False)
        tuned = stage_totals(setup.costs, slots, budget, n, tuned=True)
        totals.append(BootstrapRow(n, default.total_s * 1e3, tuned.total_s * 1e3, default.total_s / tuned.total_s))
        detail.extend(StageDetailRow(n, s.name, s.diagonals, s.devices_used, s.strategy, s.bs, s.seconds * 1e3)
                      for s in tuned.stages)
    return BootstrapStages(slots, budget, totals, detail)


def bootstrap_stages_table(st: BootstrapStages) -> Table:
    return table_of(BootstrapRow, st.totals, id="bootstrap_stages",
                    title=f"CoeffToSlot + SlotToCoeff as sparse BSGS stages (slots 2^{st.slots.bit_length() - 1}, "
                          f"level budget {st.budget})", provenance="simulated",
                    note="Each stage collapses several FFT layers into one level (OpenFHE's rule); "
                         "default = OpenFHE's bs per stage on all N devices; tuned = strategy, bs and devices used per "
                         "stage (a 63-diagonal stage gains nothing from 100 us reduction rounds); "
                         "baby steps hoisted where the profile prices hoisting; same op costs as above.")


def bootstrap_stage_detail_table(st: BootstrapStages) -> Table:
    return table_of(StageDetailRow, st.detail, id="bootstrap_stage_detail",
                    title="Per stage: diagonals and the tuned configuration", provenance="simulated", key_columns=2)


def load_openfhe(path: str | None) -> dict[str, Any] | None:
    """The stored OpenFHE benchmark: ``path`` if given, else the copy shipped with the package
    (``cryptoffload/studies/data``), so the table does not depend on where the study runs;
    ``None`` for one that cannot be read or does not name its machine and date."""
    from importlib import resources

    try:
        text = (read_input_text(path, "OpenFHE result", max_bytes=64 * 1024 * 1024) if path else
                resources.files("cryptoffload.studies.data").joinpath(OPENFHE_RESULT).read_text(encoding="utf-8"))
        data = strict_json(text)  # a JsonRefused is a ValueError
    except (OSError, ValueError, InputError):
        return None
    # a stored run is shown as stored only with the machine and date it ran on (report/provenance.stored_from)
    return data if isinstance(data, dict) and data.get("machine") and data.get("date") else None


@dataclass(frozen=True)
class OpenfheRow:
    level_budget: str = column()
    dim1: str = column()
    ring_dim: int | None = column()
    bootstrap_s: float | None = column()
    bsgs_share: float | None = column()
    measured_stage_ms: float | None = column()
    model_stage_ms: float | None = column()
    model_error_pct: float | None = column()
    model_keys_match_openfhe: bool | None = column()
    note: str = column()


def openfhe_row(c: dict[str, Any]) -> OpenfheRow:
    """One configuration of the benchmark's JSON (missing parts read as ``None``)."""
    meas = c.get("measured") or {}
    boot = c.get("bootstrap_s")
    available = meas.get("available")
    return OpenfheRow(
        level_budget=str(tuple(c.get("level_budget", ()))), dim1=str(tuple(c.get("dim1", ()))),
        ring_dim=c.get("ring_dim"), bootstrap_s=boot.get("median") if isinstance(boot, dict) else boot,
        bsgs_share=meas.get("bsgs_share") if available else None,
        measured_stage_ms=(meas.get("stage_ms") or {}).get("total") if available else None,
        model_stage_ms=((c.get("predicted_ms") or {}).get("model") or {}).get("total"),
        model_error_pct=((c.get("model_error_pct") or {}).get("model") or {}).get("total"),
        model_keys_match_openfhe=(c.get("rotation_keys") or {}).get("model_matches_openfhe"),
        note=c.get("model_refused") or ("" if c.get("dim1_complete", True) else "OpenFHE leaves diagonals out"))


def openfhe_table(of: dict[str, Any]) -> Table:
    """The stored OpenFHE benchmark (benchmarks/bench_bootstrap_openfhe.py's JSON)."""
    m = of.get("machine") or {}
    where = (f"{m.get('cpu', 'an unnamed CPU')}, {m.get('cores', '?')} cores, {m.get('os', '?')}, Python "
             f"{m.get('python', of.get('python', '?'))}")
    return table_of(OpenfheRow, [openfhe_row(c) for c in of.get("configs", [])], id="openfhe_bootstrap",
                    title=f"OpenFHE {of.get('openfhe', '')} bootstrapping, stored: measured on {where}, "
                          f"{of.get('date', '?')} (`make bench-bootstrap`), not in this run",
                    provenance=provenance_word(stored_from(of, "OpenFHE's bootstrapping benchmark")), key_columns=2,
                    note=f"Stored from our own benchmark (not measured in this run; the machine and date are in the "
                         f"title). {of.get('security', '')} Measured then: bootstrap wall time (median), and the share "
                         "of perf samples inside EvalCoeffsToSlots/EvalSlotsToCoeffs (x the median = "
                         "measured_stage_ms). Predicted: model_stage_ms = the stage structure of workloads/bsgs.py (its "
                         "key set checked against OpenFHE's) x OpenFHE op costs timed in isolation, in that run.")


OPENFHE_MISSING = ("OpenFHE bootstrapping: no stored benchmark result (cryptoffload/studies/data/bootstrap_openfhe.json "
                   "or --openfhe-result); run `make bench-bootstrap` (needs Python 3.10 for OpenFHE's wheel)")


# ---- the planner's plan vs OpenFHE's default (issue 33, phase 2b) --------------------------------
#: the stored benchmark of the planner's plan against OpenFHE's default on OpenFHE
#: (benchmarks/bootstrap_plan.py), shipped as package data like OPENFHE_RESULT
PLAN_RESULT = "bootstrap_plan.json"
PLAN_MISSING = ("bootstrap planner vs OpenFHE's default: no stored benchmark result (cryptoffload/studies/data/"
                "bootstrap_plan.json); run benchmarks/bootstrap_plan.py with .venv-openfhe (Python 3.10)")


def load_plan_result() -> dict[str, Any] | None:
    """The stored planner benchmark shipped with the package, or ``None``."""
    from importlib import resources

    try:
        data = strict_json(resources.files("cryptoffload.studies.data").joinpath(PLAN_RESULT).read_text(encoding="utf-8"))
    except (OSError, ValueError):   # JsonRefused is a ValueError
        return None
    # shown as stored only with the machine and date it ran on (report/provenance.stored_from)
    return data if isinstance(data, dict) and data.get("machine") and data.get("date") else None


@dataclass(frozen=True)
class PlanVsDefaultRow:
    ring_dim: int = column()
    plan: str = column()
    level_budget: str = column()
    dim1: str = column()
    levels_after: int = column()
    rotation_keys: int = column()
    predicted_ms: float = column()
    bootstrap_s: float | None = column()
    cpu_s: float | None = column()
    precision_bits_mean: float | None = column()
    precision_bits_worst: float | None = column()
    default_over_planner: float | None = column()
    default_over_planner_cpu: float | None = column()
    load_1min: str = column()


def _stored_plan(entry: dict[str, Any]) -> BootstrapPlan:
    p = entry["plan"]
    return BootstrapPlan(tuple(p["level_budget"]), tuple(p["dim1"]), p["slots"])


def plan_vs_default_rows(stored: dict[str, Any]) -> tuple[list[PlanVsDefaultRow], list[str]]:
    """Per stored ring: the plan the benchmark ran for each side, priced here by the model with
    the shipped profile of that ring (simulated), beside what the benchmark measured (stored);
    notes where this run's planner would now choose differently."""
    rows, notes = [], []
    for ring in stored.get("rings", []):
        n, m = ring["ring_dim"], ring["measured"]
        setting = BootstrapSetting(n, depth=ring["depth"], levels_after=ring["levels_after_required"])
        costs = load_costs(None, n)
        pricer = StagePricer(setting, costs)
        plans = {"planner": _stored_plan(ring["planner"]["chosen"]),
                 "OpenFHE default": _stored_plan(ring["planner"]["openfhe_default"])}
        now = plan_bootstrap(setting, costs).chosen_one.plan
        if now != plans["planner"]:
            notes.append(f"N = {n}: with the shipped profile ({costs.describe()}) the planner now chooses "
                         f"{now.level_budget} dim1 {now.dim1}, not the {plans['planner'].level_budget} dim1 "
                         f"{plans['planner'].dim1} the benchmark ran")
        load = m["load_average_1min"]
        for label, key in (("planner", "planner"), ("OpenFHE default", "default")):
            price = pricer.plan(plans[label], 1)
            ratio, cpu = ((m["ratio_default_over_planner"]["median"], m["cpu_ratio_default_over_planner"]["median"])
                          if key == "planner" else (None, None))
            rows.append(PlanVsDefaultRow(n, label, str(plans[label].level_budget), str(plans[label].dim1),
                                         price.levels_after, ring["setup"][key]["rotation_keys"], price.total_s * 1e3,
                                         m[key]["bootstrap_s_median"], m[key]["bootstrap_cpu_s_median"],
                                         m[key]["precision_bits_mean"], m[key]["precision_bits_worst"], ratio, cpu,
                                         f"{load['min']:.1f}-{load['max']:.1f}"))
    return rows, notes


#: the columns of the plan-vs-default table read from the stored OpenFHE run
STORED_PLAN_COLUMNS = ("rotation_keys", "bootstrap_s", "cpu_s", "precision_bits_mean", "precision_bits_worst",
                       "default_over_planner", "default_over_planner_cpu", "load_1min")


def plan_vs_default_table(stored: dict[str, Any]) -> Table:
    """The planner's plan and OpenFHE's default: predicted here, measured on OpenFHE (stored)."""
    rows, notes = plan_vs_default_rows(stored)
    m = stored.get("machine") or {}
    where = f"{m.get('cpu', 'an unnamed CPU')}, {m.get('cores', '?')} cores, OpenFHE {stored.get('openfhe', '?')}"
    kept = provenance_word(stored_from(stored, f"benchmarks/bootstrap_plan.py on {where}"))
    return table_of(
        PlanVsDefaultRow, rows, id="bootstrap_plan_openfhe", provenance="mixed", key_columns=2,
        title=f"Bootstrap plans: our planner's vs OpenFHE's default, predicted in this run (simulated), run on OpenFHE "
              f"by benchmarks/bootstrap_plan.py on {where}, {stored.get('date', '?')} (stored, not in this run)",
        column_provenance={"predicted_ms": "simulated", **{c: kept for c in STORED_PLAN_COLUMNS}},
        note="predicted_ms: simulated in this run -- the op-DAG model of the stages plus EvalMod (the parts a plan "
             "changes) priced with the shipped per-level OpenFHE profile of that ring (profiles/openfhe_bootstrap_n<N>"
             ".toml, measured by the same benchmark). rotation_keys (the keys EvalBootstrapKeyGen made), bootstrap_s "
             "(wall, median), cpu_s (the process's CPU time, median: what a neighbour on the shared machine does not "
             "inflate), precision bits (-log2 of the mean / largest absolute error), default_over_planner(_cpu) "
             "(median of the per-round ratios; > 1: the planner's plan is faster) and the 1-minute load average over "
             "the rounds: stored, measured when the benchmark ran, both plans "
             f"interleaved on one core at the same ring, modulus and slots. {stored.get('security', '')}"
             + "".join(f" {n}." for n in notes))


@dataclass(frozen=True)
class PlanDevicesRow:
    devices: int = column()
    level_budget: str = column()
    dim1: str = column()
    predicted_ms: float = column()
    default_ms: float | None = column()
    speedup: float | None = column()


def plan_devices_table(stored: dict[str, Any], devices: tuple[int, ...]) -> Table | None:
    """At the largest stored ring: the plan the planner chooses for each device count, beside
    OpenFHE's default split the same way (simulated)."""
    rings = stored.get("rings", [])
    if not rings:
        return None
    ring = max(rings, key=lambda r: r["ring_dim"])
    costs = load_costs(None, ring["ring_dim"])
    rows = []
    for n in devices:
        setting = BootstrapSetting(ring["ring_dim"], depth=ring["depth"], levels_after=ring["levels_after_required"],
                                   devices=n)
        c = plan_bootstrap(setting, costs)
        rows.append(PlanDevicesRow(n, str(c.chosen.plan.level_budget), str(c.chosen.plan.dim1), c.chosen.total_s * 1e3,
                                   c.default.total_s * 1e3 if c.default else None, c.speedup()))
    return table_of(PlanDevicesRow, rows, id="bootstrap_plan_devices", provenance="simulated",
                    title=f"The planner per device count at N = {ring['ring_dim']} (depth {ring['depth']}): each stage "
                          "split over up to N devices, baby steps re-tuned per N",
                    note=f"Simulated: the op-DAG model with {costs.describe()}; links of 100 Gb/s and 1 us (the paper's). "
                         "default_ms: OpenFHE's default plan split by the same model; EvalMod on one device.")


def bootstrap_plan_part(devices: tuple[int, ...] | list[int]) -> tuple[list[Table], list[str]]:
    """The planner's tables, or the note saying how to make the stored result they need."""
    stored = load_plan_result()
    if stored is None:
        return [], [PLAN_MISSING]
    per_n = plan_devices_table(stored, tuple(devices))
    return [plan_vs_default_table(stored)] + ([per_n] if per_n is not None else []), []
