"""The planner's answer as tables and as plain data: what ``cryptoffload plan bootstrap`` prints
and what ``benchmarks/bootstrap_plan.py`` reads back (``--json``) to run the same plan on OpenFHE.

Why apart from the search: the search returns values; how they are shown (which columns, which
words say that every time here is a prediction) is one decision, made once for the terminal
and the scripts.
"""

from __future__ import annotations

from typing import Iterable

from cryptoffload.checks import JsonDict
from cryptoffload.policies.bootstrap_model import PlanPrice
from cryptoffload.policies.bootstrap_plan import PlanChoice
from cryptoffload.report.result import Table

PROVENANCE_WORDS = ("predicted by the op-DAG model (simulated) from per-op costs; not a measurement: "
                    "benchmarks/bootstrap_plan.py runs the plan on OpenFHE")


def stage_rows(price: PlanPrice) -> Iterable[JsonDict]:
    """A plan's stages as plain rows (the CLI's and the study's tables)."""
    for s in price.stages:
        yield {"transform": s.transform, "stage": s.index, "layers": s.layers, "diagonals": s.diagonals,
               "stride": s.stride, "level": s.level, "bs": s.baby, "gs": s.giant, "strategy": s.strategy,
               "devices_used": s.devices_used, "predicted_ms": s.predicted_s * 1e3}


def _ms(price: PlanPrice) -> list[float]:
    p = price.parts_s
    return [p["CoeffToSlot"] * 1e3, p["EvalMod"] * 1e3, p["SlotToCoeff"] * 1e3, price.total_s * 1e3]


def summary_table(choice: PlanChoice) -> Table:
    """The chosen plan beside OpenFHE's default, on one device and (if more) on N."""
    s = choice.setting
    rows = []
    pairs = [(1, choice.chosen_one, choice.default_one)]
    if s.devices > 1:
        pairs.append((s.devices, choice.chosen, choice.default))
    for n, chosen, default in pairs:
        for label, price in (("planner", chosen), ("OpenFHE default", default)):
            if price is not None:
                rows.append([n, label, str(price.plan.level_budget), str(price.plan.dim1), price.levels_after,
                             price.rotation_keys, *_ms(price)])
    title = (f"CKKS bootstrap plan: N = {s.ring_degree}, {s.slot_count} slots, depth {s.depth}, at least "
             f"{s.levels_after} levels after")
    missing = choice.default_note()
    return Table("bootstrap_plan", title,
                 ["devices", "plan", "level budget", "dim1", "levels after", "rotation keys", "CoeffToSlot ms", "EvalMod ms",
                  "SlotToCoeff ms", "total ms"], rows, provenance="simulated", key_columns=2,
                 note=f"Times {PROVENANCE_WORDS}. Op costs: {choice.costs}. EvalMod runs on one device; the parts a "
                      "plan does not change (mod-raise, scaling) are left out of the total. Rotation keys: the steps "
                      "the stages need (OpenFHE makes the same set; a conjugation key besides), each a key-switching "
                      "key in memory: the planner minimises time, not keys."
                      + (f" {missing}." if missing else ""))


def stages_table(price: PlanPrice) -> Table:
    """The chosen plan's stages: size, level, baby/giant steps, split and predicted time."""
    rows = [list(r.values()) for r in stage_rows(price)]
    cols = ["transform", "stage", "layers", "diagonals", "stride", "level", "bs", "gs", "strategy", "devices used",
            "predicted ms"]
    return Table("bootstrap_plan_stages", f"Stages of the chosen plan on {price.devices} device(s)", cols, rows,
                 provenance="simulated", key_columns=2)


def _price_data(price: PlanPrice | None) -> JsonDict | None:
    if price is None:
        return None
    return {"plan": price.plan.to_dict(), "devices": price.devices, "levels_after": price.levels_after,
            "rotation_keys": price.rotation_keys, "predicted_ms": {k: v * 1e3 for k, v in price.parts_s.items()} | {"total": price.total_s * 1e3},
            "stages": list(stage_rows(price))}


def choice_data(choice: PlanChoice) -> JsonDict:
    """Everything the tables show, as plain JSON values (times in ms, all simulated;
    ``openfhe_default`` is null, with ``openfhe_default_note``, where it does not fit)."""
    s = choice.setting
    out: JsonDict = {
        "setting": {"ring_degree": s.ring_degree, "slots": s.slot_count, "depth": s.depth,
                    "levels_after_required": s.levels_after, "devices": s.devices,
                    "link_bandwidth_Bps": s.bandwidth_Bps, "link_latency_s": s.latency_s},
        "costs": choice.costs, "provenance": "simulated", "provenance_note": PROVENANCE_WORDS,
        "chosen": _price_data(choice.chosen_one), "openfhe_default": _price_data(choice.default_one),
        "openfhe_default_note": choice.default_note(), "predicted_speedup": choice.speedup(1),
        "plans_priced": choice.searched}
    if s.devices > 1:
        out["on_devices"] = {"chosen": _price_data(choice.chosen), "openfhe_default": _price_data(choice.default),
                             "predicted_speedup": choice.speedup()}
    return out
