"""The BSGS capacity plan: for each device count, the strategy and baby-step size the tuner
picks, its predicted time, and the speed-up over a single-device baby-step size kept as is.

Why here and not in the CLI: it is a planner built on the tuner (:mod:`.bsgs_tuner`) and the
op-DAG cost model, and ``cryptoffload plan bsgs`` only prints the table it returns.
"""

from __future__ import annotations

from typing import Optional, Sequence

from cryptoffload.policies import bsgs_tuner as tuner
from cryptoffload.profiles.loader import load_profile
from cryptoffload.report.result import Table
from cryptoffload.sim.op_dag import DagCosts
from cryptoffload.workloads.bsgs import STRATEGIES, BsgsShape, check_positive_int


def plan_bsgs(profile: str, devices: Sequence[int], *, diagonals: Optional[int] = None,
              strategy: Optional[str] = None, space: str = "all", naive_baby: Optional[int] = None,
              exhaustive: bool = False) -> Table:
    """One row per device count in ``devices``. ``profile`` is a profile name or TOML path
    (``calibrate ckks`` writes one); ``diagonals`` defaults to the profile's shape, else 32768;
    ``naive_baby`` defaults to the best single-device size; ``exhaustive`` adds the tuner's gap
    to the exhaustive search."""
    prof = load_profile(profile)
    costs = DagCosts.from_profile(prof)
    c = diagonals if diagonals is not None else int(prof.get("shape.diagonals") or 32768)
    check_positive_int("--diagonals", c)
    strategies = (strategy,) if strategy else STRATEGIES
    level = int(prof.get("ring.limbs") or 2) - 1
    base = BsgsShape(c, 1, level=max(1, level))
    nb = naive_baby if naive_baby is not None else tuner.exhaustive(base, 1, costs, strategies=("replicate",),
                                                                    space=space)[0].baby
    columns = ["N", "strategy", "bs", "gs", "predicted ms", f"naive (bs={nb}) ms", "speedup"]
    if exhaustive:
        columns.append("exhaustive gap %")
    rows = []
    for n in devices:
        cfg = tuner.tune(base, n, costs, strategies=strategies, space=space)
        nv = tuner.naive(base, n, costs, baby=nb)
        row = [n, cfg.strategy, cfg.baby, cfg.giant, cfg.predicted_s * 1e3, nv.predicted_s * 1e3,
               nv.predicted_s / cfg.predicted_s]
        if exhaustive:
            best = tuner.exhaustive(base, n, costs, strategies=strategies, space=space)[0]
            row.append((cfg.predicted_s / best.predicted_s - 1) * 100)
        rows.append(row)
    return Table("bsgs_plan", f"BSGS plan: C = {c}, profile {prof.name} ({prof.kind})", columns, rows,
                 provenance="simulated")
