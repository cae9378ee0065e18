"""Fit the three QAT model values no source gives (card latency, driver cost, QHCS coroutines).

Prints the fitted values for ``profiles/qat_dh8970.toml`` (sources "fitted") and what the model
then gives for the figures they were fitted to; writes ``benchmarks/results/qat_fit.json`` with
the machine. See ``src/cryptoffload/sim/qat/fit.py`` for why these three and to what.

    .venv/bin/python benchmarks/fit_qat_unsourced.py [--encryptions 6000]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rich.console import Console

from cryptoffload.bench import save_results
from cryptoffload.machine import machine_info
from cryptoffload.sim.qat.fit import FIT_TARGETS, fit_unsourced
from cryptoffload.sim.qat.params import load_qat_params


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--encryptions", type=int, default=6000)
    args = ap.parse_args()
    console = Console()
    t0 = time.perf_counter()
    p = load_qat_params()
    fit = fit_unsourced(p, args.encryptions, progress=console.print)
    console.print(f"card.modexp_latency_s = {fit.modexp_latency_s:.4e}")
    console.print(f"cpu.request_s = {fit.request_s:.4e}")
    console.print(f"workload.qhcs_coroutines = {fit.qhcs_coroutines}")
    for k, v in fit.achieved.items():
        console.print(f"{k}: model {v:.5g}, paper {FIT_TARGETS[k]:.5g}")
    out = Path(__file__).parent / "results" / "qat_fit.json"
    save_results({"benchmark": "qat unsourced values fit", "machine": machine_info(),
                  "encryptions": args.encryptions, "elapsed_s": time.perf_counter() - t0,
                  "modexp_latency_s": fit.modexp_latency_s, "request_s": fit.request_s,
                  "qhcs_coroutines": fit.qhcs_coroutines, "achieved": fit.achieved,
                  "targets": FIT_TARGETS}, out, console.print)


if __name__ == "__main__":
    main()
