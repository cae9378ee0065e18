"""Benchmark: one seed of the full fpga-reconfig study (10 rates x every policy x 610,000 requests,
intervals chosen on the history), and the whole multi-seed study.

Target (issue 2): under 5 minutes on the 2-core development machine. Prints a table and writes
benchmarks/results/fpga_reconfig.json. Also times the SimPy reference model against the numba
fast path on the same small run, side by side, so the ratio is measured in one process.

    .venv/bin/python benchmarks/bench_fpga_reconfig.py [--requests N]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from cryptoffload.bench import save_results
from cryptoffload.machine import machine_info
from cryptoffload.policies.reconfig import POLICIES
from cryptoffload.sim.reconfig.platform import load_reconfig_platform
from cryptoffload.studies.fpga_reconfig import study as st
from cryptoffload.studies.fpga_reconfig.sweep import traces_for_seed
from cryptoffload.workloads.web_trace import generate_trace


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=st.FULL_REQUESTS)
    ap.add_argument("--simpy-requests", type=int, default=20_000)
    ap.add_argument("--seeds", type=int, default=None, help="Seeds of the whole-study run (default: the study's)")
    args = ap.parse_args()
    console = Console()
    plat = load_reconfig_platform()

    # warm the numba cache so compile time is not counted as simulation time
    warm = st.FpgaReconfigConfig(requests=2000, rates=[100.0])
    wt, wh, _ = traces_for_seed(warm, warm.seed)
    st.sweep(warm, wt, wh, plat, [100.0])

    t0 = time.perf_counter()
    cfg = st.FpgaReconfigConfig(requests=args.requests)
    trace, history, _ = traces_for_seed(cfg, cfg.seed)
    t_gen = time.perf_counter() - t0
    t1 = time.perf_counter()
    runs, _ = st.sweep(cfg, trace, history, plat, [float(r) for r in st.PAPER_RATES])
    t_sim = time.perf_counter() - t1
    total_requests = len(runs) * len(trace)
    with tempfile.TemporaryDirectory() as tmp:
        full = st.run(st.FpgaReconfigConfig(requests=args.requests, seeds=args.seeds), tmp)

    # SimPy vs fast path, same trace, same policy, one rate
    small = generate_trace(args.simpy_requests, seed=1)
    shist = generate_trace(args.simpy_requests, seed=2)
    scfg = st.FpgaReconfigConfig(requests=args.simpy_requests, rates=[500.0], policies=["predict"], interval="fixed")
    timings = {}
    for engine in ("fast", "simpy"):
        scfg.engine = engine
        t = time.perf_counter()
        st.sweep(scfg, small, shist, plat, [500.0])
        timings[engine] = time.perf_counter() - t

    info = machine_info()
    result = {
        "benchmark": "fpga-reconfig full study", "machine": info,
        "requests_per_run": len(trace), "rates": len(st.PAPER_RATES), "policies": len(POLICIES),
        "trace_generation_s": t_gen, "simulation_s": t_sim, "total_s": t_gen + t_sim,
        "simulated_requests": total_requests, "simulated_requests_per_s": total_requests / t_sim,
        "target_s": 300.0,
        "study_seeds": len(full.extra["config"]["seeds"]), "study_total_s": full.elapsed_s,
        "simpy_vs_fast": {"requests": args.simpy_requests, "fast_s": timings["fast"], "simpy_s": timings["simpy"],
                          "speedup": timings["simpy"] / timings["fast"]},
    }
    tab = Table(title=f"fpga-reconfig benchmark on {info.get('cpu')} ({info.get('cores')} cores)")
    tab.add_column("what")
    tab.add_column("value", justify="right")
    tab.add_row("requests per run", f"{len(trace):,}")
    tab.add_row("runs (rates x policies)", f"{len(runs)}")
    tab.add_row("trace + history generation", f"{t_gen:.2f} s")
    tab.add_row("one seed's simulation (all runs, intervals, predictions)", f"{t_sim:.2f} s")
    tab.add_row("simulated requests / s", f"{total_requests / t_sim:,.0f}")
    tab.add_row(f"whole study ({len(full.extra['config']['seeds'])} seeds, readings, processes)", f"{full.elapsed_s:.1f} s")
    tab.add_row("target (issue 2)", "< 300 s")
    tab.add_row(f"SimPy model, {args.simpy_requests:,} req, predict", f"{timings['simpy']:.2f} s")
    tab.add_row(f"fast path, same run (incl. predictions)", f"{timings['fast']:.3f} s")
    tab.add_row("fast path speed-up", f"{timings['simpy'] / timings['fast']:.0f}x")
    console.print(tab)
    save_results(result, Path(__file__).parent / "results" / "fpga_reconfig.json", console.print)


if __name__ == "__main__":
    main()
