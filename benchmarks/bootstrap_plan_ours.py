"""``benchmarks/bootstrap_plan.py --library ours``: the planner's bootstrap split, OpenFHE's default
and our default, all run on our RNS-CKKS backend (the method is in bootstrap_plan.py's docstring).

Kept beside bootstrap_plan.py (which imports it) because that script's OpenFHE half runs on the
Python 3.10 venv, this half on the package's own Python.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

#: the depth the OpenFHE runs were planned for (bootstrap_plan.json: 25 at every ring), 2 levels left
DEPTH, LEVELS_AFTER, DNUM = 25, 2, 3
Q0_BITS, LEVEL_BITS = 60, 59
SECURITY = ("INSECURE study setting below N = 2^16: Q = 60 + 25 x 59 bits plus a 60-bit special prime is above the "
            "128-bit bound at these rings (insecure_study); timings only, never use these parameters for data")


def params(n: int) -> Any:
    from cryptoffload.crypto.ckks import CkksParams
    from cryptoffload.crypto.ckks.gpu.dnum import params_for_dnum

    return params_for_dnum(CkksParams(n, (Q0_BITS,) + (LEVEL_BITS,) * DEPTH + (60,), LEVEL_BITS), DNUM)


def plans(n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """``{label: BootstrapPlan}`` (planner, OpenFHE's default, ours) and the planner's answer."""
    from cryptoffload.crypto.ckks.bootstrap.plan import BootstrapPlan
    from cryptoffload.policies.bootstrap_costs import load_costs
    from cryptoffload.policies.bootstrap_model import BootstrapSetting
    from cryptoffload.policies.bootstrap_plan import plan_bootstrap

    costs = load_costs(None, n)
    choice = plan_bootstrap(BootstrapSetting(n, depth=DEPTH, levels_after=LEVELS_AFTER), costs)
    out = {"planner": choice.chosen.plan, "ours_default": BootstrapPlan()}
    if choice.default is not None:
        out["openfhe_default"] = choice.default.plan
    info = {"costs": choice.costs, "predicted_ms": {"planner": choice.chosen.total_s * 1e3,
                                                    "openfhe_default": choice.default.total_s * 1e3
                                                    if choice.default else None},
            "predicted_speedup_over_openfhe_default": choice.speedup(1)}
    return out, info


def one(be: Any, x: np.ndarray) -> dict[str, Any]:
    """Encrypt ``x`` at level 1, bootstrap, decrypt: seconds (wall, CPU), precision, levels left."""
    from cryptoffload.crypto.ckks.bootstrap.precision import precision

    ct = be.encrypt(x, level=1)
    c, t = time.process_time(), time.perf_counter()
    out = be.bootstrap(ct)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    p = precision(be.decrypt(out), x)
    return {"s": wall, "cpu_s": cpu, "mean_bits": p.mean_bits, "worst_bits": p.worst_bits, "level_after": be.level(out),
            "phases": dict(be.last_bootstrap.seconds)}


def run_ring(n: int, rounds: int, log: Any) -> dict[str, Any]:
    from cryptoffload.crypto.ckks import make_backend

    chosen, info = plans(n)
    log(f"  N = {n}: " + ", ".join(f"{k} {p.level_budget} dim1 {p.dim1}" for k, p in chosen.items()))
    backends, setup = {}, {}
    for k, plan in chosen.items():
        be = make_backend("gpu-twin", params(n), insecure_study=True)
        t0 = time.perf_counter()
        be.keygen([])
        took = be.bootstrap_setup(plan)
        setup[k] = {"plan": plan.to_dict(), **took, "keys_s": time.perf_counter() - t0,
                    "key_bytes": int(sum(be.key_bytes().values())), "levels_after": be.bootstrapper.schedule.after}
        one(be, np.zeros(be.slots))                      # warm-up: first-use tables, not recorded
        backends[k] = be
    names = list(backends)
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in names}
    loads = []
    rng = np.random.default_rng()
    for r in range(rounds):
        x = rng.uniform(-1.0, 1.0, n // 2)
        order = names[r % len(names):] + names[:r % len(names)]
        for k in order:
            runs[k].append(one(backends[k], x))
        loads.append(os.getloadavg()[0])
        log(f"    round {r + 1}/{rounds}: " + ", ".join(f"{k} {runs[k][-1]['s']:.2f} s" for k in names)
            + f" (load {loads[-1]:.1f})")
    return {"ring_dim": n, "depth": DEPTH, "levels_after_required": LEVELS_AFTER, "planner": info, "setup": setup,
            "runs": runs, "load_average_1min": loads, "summary": summarise(runs)}


def summarise(runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, rs in runs.items():
        out[k] = {"bootstrap_s_median": statistics.median(r["s"] for r in rs),
                  "bootstrap_cpu_s_median": statistics.median(r["cpu_s"] for r in rs),
                  "precision_bits_mean": statistics.median(r["mean_bits"] for r in rs),
                  "precision_bits_worst": min(r["worst_bits"] for r in rs),
                  "levels_after": sorted({r["level_after"] for r in rs})}
        if k != "planner":
            for what, key in (("s", "ratio_over_planner"), ("cpu_s", "cpu_ratio_over_planner")):
                ratios = [a[what] / b[what] for a, b in zip(rs, runs["planner"])]
                out[k][key] = {"median": statistics.median(ratios), "min": min(ratios), "max": max(ratios),
                               "per_round": ratios}
    return out


def table(rings: list[dict[str, Any]]) -> str:
    head = (f"{'N':>6} {'plan':>16} {'budget':>7} {'dim1':>8} {'wall s':>7} {'cpu s':>7} {'bits mean':>9} "
            f"{'bits worst':>10} {'left':>4} | {'over planner (wall, cpu)':>26}")
    lines = [head, "-" * len(head)]
    for r in rings:
        for k, s in r["summary"].items():
            pl = r["setup"][k]["plan"]
            ratio = (f"{s['ratio_over_planner']['median']:.3f} {s['cpu_ratio_over_planner']['median']:.3f}"
                     if "ratio_over_planner" in s else "")
            lines.append(f"{r['ring_dim']:>6} {k:>16} {str(tuple(pl['level_budget'])):>7} {str(tuple(pl['dim1'])):>8} "
                         f"{s['bootstrap_s_median']:>7.3f} {s['bootstrap_cpu_s_median']:>7.3f} "
                         f"{s['precision_bits_mean']:>9.1f} {s['precision_bits_worst']:>10.1f} "
                         f"{s['levels_after'][0]:>4} | {ratio:>26}")
    lines.append("MEASURED on our backend (gpu-twin, one pinned core), medians of interleaved rounds; over planner: "
                 "median of per-round ratios (> 1: the planner's plan is faster)")
    return "\n".join(lines)


def main_ours(args: Any, results: Path) -> int:
    from cryptoffload import bench as pin
    from cryptoffload.machine import machine_info

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    cpu = pin.pin_to_one_core()
    log = lambda m: print(m, flush=True)  # noqa: E731
    log(SECURITY)
    date = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    out: dict[str, Any] = {
        "benchmark": "bootstrap_plan_ours", "issue": "33: the planner's bootstrap split on our library too",
        "security": SECURITY, "machine": dict(machine_info(), pinned_cpu=cpu), "python": platform.python_version(),
        "date": date, "load_average_before": os.getloadavg(),
        "params": {"q0_bits": Q0_BITS, "level_bits": LEVEL_BITS, "depth": DEPTH, "special_bits": 60, "dnum": DNUM,
                   "secret": "uniform ternary, sparse-secret encapsulation (weight 32) for the mod-raise",
                   "packing": "full (N/2 slots)", "rounds": args.rounds},
        "method": "benchmarks/bootstrap_plan.py --library ours (its docstring)", "rings": []}
    for n in (int(v) for v in args.rings.split(",")):
        out["rings"].append(run_ring(n, args.rounds, log))
    out["load_average_after"] = os.getloadavg()
    log("")
    log(table(out["rings"]))
    pin.save_results(out, args.out or results / "bootstrap_plan_ours.json", log)
    return 0
