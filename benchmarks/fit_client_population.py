"""Fit the fpga-reconfig client population (clients, activity tail) to the paper's inputs.

Reproduces ``FITTED_CLIENTS`` and ``FITTED_SHAPE`` of ``workloads/client_population.py``: a grid
over the population size and the Pareto shape of client activity, each point scored by the
distance of the realised return times to the paper's Fc and of the sorted cipher mix to its
Table 7 (``workloads/population_fit.py``), averaged over seeds. Prints the grid and writes
``benchmarks/results/client_population_fit.json`` with the machine. Not a speed benchmark; it
lives here because it is a slow, reproducible computation whose output feeds a constant.

    .venv/bin/python benchmarks/fit_client_population.py [--seeds 8] [--requests 200000]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import asdict
from pathlib import Path

from rich.console import Console
from rich.table import Table

from cryptoffload.bench import save_results
from cryptoffload.machine import machine_info
from cryptoffload.studies.fpga_reconfig.study import PAPER_TABLE7
from cryptoffload.workloads.client_population import FITTED_CLIENTS, FITTED_SHAPE
from cryptoffload.workloads.population_fit import fit_population


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--requests", type=int, default=200_000)
    args = ap.parse_args()
    console = Console()
    t0 = time.perf_counter()
    with console.status("fitting") as status:
        fit = fit_population(list(PAPER_TABLE7.values()), seeds=args.seeds, n_requests=args.requests,
                             progress=lambda s: status.update(f"fitting: {s}"))
    tab = Table(title=f"Client population fit ({args.seeds} seeds x {args.requests:,} requests)")
    for col in ("clients", "alpha", "Fc KS (mean +- se)", "Table 7 L1 (mean +- se)", "chosen"):
        tab.add_column(col, justify="right")
    for g in fit.grid:
        chosen = "<-" if (g.n_clients, g.activity_shape) == (fit.n_clients, fit.activity_shape) else ""
        tab.add_row(f"{g.n_clients:,}", f"{g.activity_shape:g}", f"{g.fc_mean:.3f} +- {g.fc_sem:.3f}",
                    f"{g.mix_mean:.3f} +- {g.mix_sem:.3f}", chosen)
    console.print(tab)
    same = (fit.n_clients, fit.activity_shape) == (FITTED_CLIENTS, FITTED_SHAPE)
    console.print(f"fitted: {fit.n_clients:,} clients, activity shape {fit.activity_shape:g} "
                  f"({'matches' if same else 'DIFFERS FROM'} the constants in client_population.py)")
    out = Path(__file__).parent / "results" / "client_population_fit.json"
    save_results({"benchmark": "client population fit", "machine": machine_info(),
                  "seeds": args.seeds, "requests": args.requests, "elapsed_s": time.perf_counter() - t0,
                  "n_clients": fit.n_clients, "activity_shape": fit.activity_shape,
                  "grid": [asdict(g) for g in fit.grid]}, out, console.print)


if __name__ == "__main__":
    main()
