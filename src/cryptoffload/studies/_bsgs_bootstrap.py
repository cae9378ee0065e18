"""Bootstrapping in the bsgs-multidevice study: CoeffToSlot and SlotToCoeff as the sparse BSGS
stages they are (modelled on N devices, OpenFHE's default baby step against a tuned one), and
OpenFHE's real bootstrapping timing from our stored benchmark.

Why apart from the study: the paper's Table 1 prices one dense product; these two tables say
what the same model and tuner do for the stages bootstrapping actually runs, and how that model
compared with OpenFHE when the benchmark ran (``make bench-bootstrap``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from cryptoffload.errors import InputError
from cryptoffload.io import read_input_text
from cryptoffload.policies import bsgs_tuner as tuner
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
        data = json.loads(text)
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
