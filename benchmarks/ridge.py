"""Benchmark: private ridge regression on 1,000,000 records (d = 20, per record, 1024-bit
upload key as in Zhou and Hua 2021) on this machine, phase by phase, against the paper's Table 2.

Target (issue 4): encryption + aggregation + solve below the paper's 10.6 min + 116 s + 20 s
(772 s); bytes on the wire reported; peak memory (driver plus Dask workers, sampled) below
8 GB; per-provider mode for the same data reported.

    .venv/bin/python benchmarks/ridge.py [--records 1000000] [--workers 2] [--variable-time]

Runs the `ridge` study (cryptoffload.studies.ridge) in full mode and samples the resident
memory of this process and all its children every 0.2 s. Writes benchmarks/results/ridge.json.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
from rich.console import Console

from cryptoffload.bench import save_results
from cryptoffload.machine import machine_info
from cryptoffload.report.tables import render_result
from cryptoffload.studies import ridge as st

RESULTS = Path(__file__).resolve().parent / "results"
PAPER_TOTAL_S = sum(st.PAPER_PHASES_S.values())
MEMORY_LIMIT = 8 * 2**30


class MemorySampler:
    """Peak of the summed RSS of this process and its descendants (Dask workers included)."""

    def __init__(self, period: float = 0.2) -> None:
        self.period = period
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> int:
        me = psutil.Process(os.getpid())
        total = 0
        for p in [me] + me.children(recursive=True):
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._sample())
            self._stop.wait(self.period)

    def __enter__(self) -> "MemorySampler":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--records", type=int, default=st.PAPER_RECORDS)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--chunk", type=int, default=20_000)
    ap.add_argument("--variable-time", action="store_true")
    ap.add_argument("--stat-bits", type=int, default=40)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    console = Console(width=160) if not sys.stdout.isatty() else Console()
    info = machine_info()
    console.print(f"[dim]{info['cpu']}, {info['cores']} cores[/]")
    cfg = st.RidgeConfig(quick=False, records=args.records, workers=args.workers, chunk=args.chunk,
                         constant_time=not args.variable_time, stat_bits=args.stat_bits)
    with tempfile.TemporaryDirectory() as tmp, MemorySampler() as mem:
        t0 = time.perf_counter()
        result = st.run(cfg, tmp)
        wall = time.perf_counter() - t0
    render_result(result, console)
    phases = {row[0]: {"time_s": row[2], "bytes": row[3], "time_s_at_1m_records": row[4]}
              for row in result.tables["table2_phases"].rows}
    total = result.extra["bulk"]["wall_s"] + sum(result.extra["timings"].values())
    data = {
        "machine": info, "records": args.records, "constant_time": not args.variable_time,
        "stat_bits": args.stat_bits, "phases": phases, "timings": result.extra["timings"],
        "bulk": result.extra["bulk"], "per_provider": result.extra["per_provider"],
        "encrypt_aggregate_solve_s": total, "paper_total_s": PAPER_TOTAL_S,
        "below_paper": total < PAPER_TOTAL_S, "peak_memory_bytes": mem.peak,
        "memory_below_8gb": mem.peak < MEMORY_LIMIT, "study_wall_s": wall,
        "accuracy": result.tables["accuracy"].rows,
    }
    console.print(f"encrypt + aggregate + solve: {total:,.1f} s (paper {PAPER_TOTAL_S:,.0f} s) -> "
                  f"{'below' if total < PAPER_TOTAL_S else 'NOT below'} the paper; "
                  f"peak memory {mem.peak / 2**30:.2f} GiB (limit 8 GiB); wire {result.extra['bulk']['wire_bytes'] / 1e9:.2f} GB")
    save_results(data, args.out or RESULTS / "ridge.json", console.print)
    return 0


if __name__ == "__main__":
    sys.exit(main())
