"""Benchmark: private ridge regression on 1,000,000 records (d = 20, per record, 1024-bit
upload key as in Zhou and Hua 2021) on this machine, phase by phase, against the paper's Table 2,
and its peak memory at several record counts.

Target (issue 4): encryption + aggregation + solve below the paper's 10.6 min + 116 s + 20 s
(772 s); bytes on the wire reported; peak memory (driver plus Dask workers, sampled) below
8 GB; per-provider mode for the same data reported. Target (issue 22, item 8): peak memory
bounded by the work in flight, not by the data: flat (within 20 %) from the smallest record
count to the largest.

    .venv/bin/python benchmarks/ridge.py [--records 200000 2000000] [--workers 2] [--variable-time]

Runs the `ridge` study (cryptoffload.studies.ridge) in full mode once per record count and
samples, every 0.2 s, the resident memory of this process (the driver) and of its descendants
(the Dask nanny and worker processes), phase by phase (the study's progress steps). Each record
count runs in a fresh process (a driver keeps an earlier count's heap). Writes
benchmarks/results/ridge.json (the largest count's phases, and ``memory`` for every count).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
from rich.console import Console
from rich.table import Table

from cryptoffload.bench import save_results
from cryptoffload.machine import machine_info
from cryptoffload.report.tables import render_result
from cryptoffload.studies import ridge as st

RESULTS = Path(__file__).resolve().parent / "results"
PAPER_TOTAL_S = sum(st.PAPER_PHASES_S.values())
MEMORY_LIMIT = 8 * 2**30


class MemorySampler:
    """Peak resident memory of this process (the driver) plus its descendants (Dask nannies and
    workers), sampled every ``period`` s: overall, per phase (:meth:`phase` names the current
    one), and per process (``worker_peaks``: the peak of each descendant pid)."""

    def __init__(self, period: float = 0.2) -> None:
        self.period = period
        self.peak = 0
        self.driver_peak = 0
        self.phases: dict[str, dict[str, int]] = {}
        self.worker_peaks: dict[int, int] = {}
        self._phase = "start"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def phase(self, name: str) -> None:
        self._phase = name

    def _sample(self) -> None:
        me = psutil.Process(os.getpid())
        driver = me.memory_info().rss
        workers = 0
        for p in me.children(recursive=True):
            try:
                rss = p.memory_info().rss
            except psutil.Error:
                continue
            workers += rss
            self.worker_peaks[p.pid] = max(self.worker_peaks.get(p.pid, 0), rss)
        self.peak = max(self.peak, driver + workers)
        self.driver_peak = max(self.driver_peak, driver)
        ph = self.phases.setdefault(self._phase, {"driver": 0, "workers": 0, "total": 0})
        ph["driver"], ph["workers"] = max(ph["driver"], driver), max(ph["workers"], workers)
        ph["total"] = max(ph["total"], driver + workers)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.period)

    def __enter__(self) -> "MemorySampler":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()


def run_one(records: int, args: argparse.Namespace) -> tuple[object, dict, float]:
    """The study at ``records``; its result, the memory figures, and its wall time."""
    cfg = st.RidgeConfig(quick=False, records=records, workers=args.workers, chunk=args.chunk,
                         constant_time=not args.variable_time, stat_bits=args.stat_bits, gpu=args.gpu)
    with tempfile.TemporaryDirectory() as tmp, MemorySampler() as mem:
        t0 = time.perf_counter()
        result = st.run(cfg, tmp, progress=lambda total: mem.phase)
        wall = time.perf_counter() - t0
    memory = {"records": records, "peak_bytes": mem.peak, "driver_peak_bytes": mem.driver_peak,
              "sum_of_process_peaks_bytes": mem.driver_peak + sum(mem.worker_peaks.values()),
              "processes": 1 + len(mem.worker_peaks), "phases": mem.phases, "study_wall_s": wall}
    return result, memory, wall


def memory_table(memories: list[dict]) -> Table:
    table = Table(title="Peak resident memory (driver + Dask workers, sampled every 0.2 s), GiB")
    for col in ("records", "phase", "driver", "workers", "total"):
        table.add_column(col, justify="left" if col == "phase" else "right")
    for m in memories:
        for name, ph in m["phases"].items():
            table.add_row(f"{m['records']:,}", name[:70], *(f"{ph[k] / 2**30:.2f}" for k in ("driver", "workers", "total")))
        table.add_row(f"{m['records']:,}", "[b]whole run[/]", f"{m['driver_peak_bytes'] / 2**30:.2f}", "",
                      f"[b]{m['peak_bytes'] / 2**30:.2f}[/]")
    return table


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--records", type=int, nargs="+", default=[200_000, st.PAPER_RECORDS])
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--chunk", type=int, default=20_000)
    ap.add_argument("--variable-time", action="store_true")
    ap.add_argument("--stat-bits", type=int, default=40)
    ap.add_argument("--gpu", action="store_true",
                    help="also the study's GPU rows (they hold every record's plaintexts: memory grows with records)")
    ap.add_argument("--out", type=Path, default=None)
    return ap.parse_args()


def one_count(records: int, args: argparse.Namespace, console: Console, info: dict) -> dict:
    """The study at one record count in this process: its phases, timings and memory."""
    result, memory, wall = run_one(records, args)
    console.print(f"{records:,} records: peak memory {memory['peak_bytes'] / 2**30:.2f} GiB, {wall:,.0f} s")
    render_result(result, console)
    phases = {row[0]: {"time_s": row[2], "bytes": row[3], "time_s_at_1m_records": row[4]}
              for row in result.tables["table2_phases"].rows}
    total = result.extra["bulk"]["wall_s"] + sum(result.extra["timings"].values())
    return {
        "machine": info, "records": records, "constant_time": not args.variable_time,
        "stat_bits": args.stat_bits, "phases": phases, "timings": result.extra["timings"],
        "bulk": result.extra["bulk"], "per_provider": result.extra["per_provider"],
        "encrypt_aggregate_solve_s": total, "paper_total_s": PAPER_TOTAL_S,
        "below_paper": total < PAPER_TOTAL_S, "peak_memory_bytes": memory["peak_bytes"],
        "study_wall_s": memory["study_wall_s"], "accuracy": result.tables["accuracy"].rows, "memory": [memory],
    }


def in_fresh_process(records: int, args: argparse.Namespace) -> dict:
    """One count in a process of its own. Why: a driver that ran a smaller count first keeps
    that run's heap (CPython seldom hands freed memory back to the OS), so the larger count
    would be charged for the smaller one's accuracy phase -- 2,000,000 records after 200,000
    in one process started at 227 MiB of driver where a fresh one starts at ~100 MiB."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "one.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--records", str(records), "--chunk", str(args.chunk),
               "--stat-bits", str(args.stat_bits), "--out", str(out)]
        cmd += (["--workers", str(args.workers)] if args.workers else []) + (
            ["--variable-time"] if args.variable_time else []) + (["--gpu"] if args.gpu else [])
        subprocess.run(cmd, check=True)
        return json.loads(out.read_text(encoding="utf-8"))


def main() -> int:
    args = parse_args()
    console = Console(width=160) if not sys.stdout.isatty() else Console()
    info = machine_info()
    console.print(f"[dim]{info['cpu']}, {info['cores']} cores[/]")
    counts = sorted(args.records)
    if len(counts) == 1:
        data = one_count(counts[0], args, console, info)
    else:
        runs = []
        for records in counts:
            runs.append(in_fresh_process(records, args))
            # the counts done so far, in case a later (larger) one is cut short; replaced below
            save_results({"machine": info, "partial": True, "memory": [r["memory"][0] for r in runs]},
                         args.out or RESULTS / "ridge.json", console.print)
        data = dict(runs[-1], memory=[r["memory"][0] for r in runs])
    memories = data["memory"]
    console.print(memory_table(memories))
    peaks = [m["peak_bytes"] for m in memories]
    flat = max(peaks) <= 1.2 * min(peaks)
    data.update(memory_below_8gb=max(peaks) < MEMORY_LIMIT, memory_ratio_largest_to_smallest=peaks[-1] / peaks[0],
                memory_flat_within_20pct=flat, fresh_process_per_count=True)
    total = data["encrypt_aggregate_solve_s"]
    console.print(f"encrypt + aggregate + solve at {data['records']:,} records: {total:,.1f} s (paper "
                  f"{PAPER_TOTAL_S:,.0f} s at 1,000,000) -> {'below' if total < PAPER_TOTAL_S else 'NOT below'}; "
                  f"wire {data['bulk']['wire_bytes'] / 1e9:.2f} GB; peak memory "
                  + ", ".join(f"{m['records']:,}: {m['peak_bytes'] / 2**30:.2f} GiB" for m in memories)
                  + f" -> {'flat' if flat else 'NOT flat'} within 20 % (limit 8 GiB)")
    save_results(data, args.out or RESULTS / "ridge.json", console.print)
    return 0


if __name__ == "__main__":
    sys.exit(main())
