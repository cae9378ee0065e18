"""Benchmark: private ridge regression on 1,000,000 records (d = 20, per record, 1024-bit
upload key as in Zhou and Hua 2021) on this machine, phase by phase, against the paper's Table 2,
and its peak memory at several record counts; with ``--solve`` and ``--pipeline``, the masked
solve and the per-record pipeline on each arithmetic path (issue 34).

Target (issue 4): encryption + aggregation + solve below the paper's 10.6 min + 116 s + 20 s
(772 s); bytes on the wire reported; peak memory (driver plus Dask workers, sampled) below
8 GB; per-provider mode for the same data reported. Target (issue 22, item 8): peak memory
bounded by the work in flight, not by the data: flat (within 20 %) from the smallest record
count to the largest. Targets (issue 34, on the AVX2 + ADX path): the masked solve at d = 20
(2048-bit solve key) <= 12 s on two cores (the old route: 56 s), beside the paper's 20 s
garbled-circuit solve; the per-record pipeline at 1,000,000 records <= 1,200 s on two cores,
constant time, and the IFMA path not slower than before.

    .venv/bin/python benchmarks/ridge.py [--records 200000 2000000] [--workers 2] [--variable-time]
    .venv/bin/python benchmarks/ridge.py --solve [--rounds 3] [--old-gmp-rows 4]
    .venv/bin/python benchmarks/ridge.py --pipeline [--rounds 3] [--study-rounds 2]

Without ``--solve``/``--pipeline``: runs the `ridge` study (cryptoffload.studies.ridge.study) in full
mode once per record count and samples, every 0.2 s, the resident memory of this process (the
driver) and of its descendants (the Dask nanny and worker processes), phase by phase (the
study's progress steps). Each record count runs in a fresh process (a driver keeps an earlier
count's heap). ``--solve``: old route vs multi-exponentiation, 1 and 2 workers, on the IFMA
path and the forced AVX2 + ADX path (``COPL_DISABLE_IFMA=1``), interleaved rounds, wall clock
and CPU seconds (benchmarks/ridge_solve.py). ``--pipeline``: the per-record upload's CPU cost
per path scaled to 1,000,000 records on two cores, and the study's quick mode per path (its own
wall-clock extrapolation). Writes benchmarks/results/ridge.json: the full run's figures at the
top level, ``masked_solve`` and ``pipeline_per_path`` beside them, each with its machine; a run
replaces only its own part.
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
from cryptoffload.crypto._native import core as native
from cryptoffload.machine import machine_info
from cryptoffload.report.tables import render_result
from cryptoffload.studies.ridge import study as st

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ridge_solve as rs  # noqa: E402

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
    ap.add_argument("--solve", action="store_true", help="the masked solve per path and route (issue 34)")
    ap.add_argument("--pipeline", action="store_true", help="the per-record pipeline per path (issue 34)")
    ap.add_argument("--paths", nargs="+", choices=sorted(rs.PATH_ENV), default=None,
                    help="paths for --solve/--pipeline (default: ifma and adx where this CPU has them)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds of --solve and --pipeline")
    ap.add_argument("--old-gmp-rows", type=int, default=4,
                    help="rows of A (of 20) the old GMP route times, scaled to 20 (it takes minutes)")
    ap.add_argument("--study-rounds", type=int, default=2, help="quick studies per path for --pipeline (0: none)")
    ap.add_argument("--upload-records", type=int, default=2000, help="records per --pipeline CPU round")
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


def save_merged(updates: dict, path: Path, console: Console) -> None:
    """``updates`` written over the JSON at ``path``, keeping its other parts: the full run and
    each ``--solve``/``--pipeline`` section replace only themselves."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    keep = {k: data[k] for k in rs.SECTIONS if k in data and k not in updates}
    base = data if set(updates) <= set(rs.SECTIONS) else {}
    save_results(dict(base, **keep, **updates), path, console.print)


def solve_table(sec: dict) -> Table:
    table = Table(title=f"Masked solve, d = {sec['d']}, {sec['solve_key_bits']}-bit solve key "
                        f"({sec['d'] ** 3 + sec['d'] ** 2:,} powers mod a {sec['nsquare_bits']}-bit n^2), medians of "
                        f"{sec['rounds']} interleaved rounds; paper (garbled circuit): {sec['paper_solve_s']:.0f} s")
    for col in ("case", "kernel", "wall s", "best wall s", "CPU s", "CPU s / worker", "old / this (wall)",
                "old / this (CPU)", "paper / this (wall)"):
        table.add_column(col, justify="left" if col in ("case", "kernel") else "right")
    old = {(c["path"], c["workers"]): c for c in sec["cases"] if c["route"] == "batch"}
    for c in sec["cases"]:
        o = old.get((c["path"], c["workers"]))
        scaled = f" (scaled from {c['rows_timed']} rows)" if c["scaled_from_rows"] else ""
        table.add_row(c["case"], c["kernel"] + scaled, f"{c['wall_s']:.1f}", f"{c['wall_best_s']:.1f}", f"{c['cpu_s']:.1f}",
                      f"{c['cpu_s_per_worker']:.1f}",
                      f"{o['wall_s'] / c['wall_s']:.2f}x" if o else "", f"{o['cpu_s'] / c['cpu_s']:.2f}x" if o else "",
                      f"{sec['paper_solve_s'] / c['wall_s']:.2f}x")
    return table


def pipeline_table(sec: dict) -> Table:
    table = Table(title="Per-record pipeline (encode + pack + encrypt 20 plaintexts, 1024-bit key, constant time; "
                        "column products), 1,000,000 records on two cores")
    for col in ("path", "encrypt CPU ms / record", "aggregate CPU ms / record", "at 1M, 2 cores (CPU s / 2)",
                "quick study's own total at 1M (wall, loaded)"):
        table.add_column(col, justify="left" if col == "path" else "right")
    for path, c in sec["cpu"].items():
        q = sec["quick_study"].get(path)
        table.add_row(path, f"{c['encode_encrypt_cpu_s_per_record'] * 1e3:.3f}",
                      f"{c['aggregate_cpu_s_per_record'] * 1e3:.4f}", f"{c['pipeline_at_1m_two_cores_s']:,.0f}",
                      f"{q['total_at_1m_s']:,.0f}" if q else "not run")
    return table


def issue34(args: argparse.Namespace, console: Console, info: dict) -> int:
    """``--solve`` and ``--pipeline``: the sections of issue 34, merged into ridge.json."""
    paths = args.paths or [p for p in ("ifma", "adx") if rs.path_runs(p)]
    def say(msg: str) -> None:
        console.print(f"[dim]{msg}[/]")
    stamp = {"machine": info, "date": time.strftime("%Y-%m-%d"), "paths": paths,
             "note": "shared machine: cases interleaved round by round; wall clock and this process's CPU seconds"}
    updates = {}
    if args.solve:
        sec = rs.solve_section(paths, args.rounds, args.old_gmp_rows, say)
        console.print(solve_table(sec))
        for path, p in sec["proof_one_worker"].items():
            console.print(f"{path} path, one worker: the CSP's solve mod n + proof {p['csp_solve_and_proof_wall_s']:.2f} s "
                          f"({p['csp_solve_and_proof_cpu_s']:.2f} s CPU), the buyer's check {p['buyer_check_wall_s']:.2f} s "
                          f"({p['buyer_check_cpu_s']:.2f} s CPU)")
        if not sec["same_products"]:
            console.print("[red]the routes gave different products[/]")
        updates["masked_solve"] = dict(stamp, **sec)
    if args.pipeline:
        sec = {"cpu": rs.pipeline_cpu_section(paths, args.rounds, args.upload_records, say),
               "quick_study": rs.quick_study_section(paths, args.study_rounds, say) if args.study_rounds else {},
               "target_adx_s": 1200.0}
        console.print(pipeline_table(sec))
        updates["pipeline_per_path"] = dict(stamp, **sec)
    save_merged(updates, args.out or RESULTS / "ridge.json", console)
    return 0 if all(u.get("same_products", True) for u in updates.values()) else 1


def main() -> int:
    args = parse_args()
    console = Console(width=160) if not sys.stdout.isatty() else Console()
    info = dict(machine_info(), cpu_signature=native.cpu_signature(), default_path=native.cpu_path())
    console.print(f"[dim]{info['cpu']}, {info['cores']} cores, default path {info['default_path']}[/]")
    if args.solve or args.pipeline:
        return issue34(args, console, info)
    counts = sorted(args.records)
    if len(counts) == 1:
        data = one_count(counts[0], args, console, info)
    else:
        runs = []
        for records in counts:
            runs.append(in_fresh_process(records, args))
            # the counts done so far, in case a later (larger) one is cut short; replaced below
            save_merged({"machine": info, "partial": True, "memory": [r["memory"][0] for r in runs]},
                        args.out or RESULTS / "ridge.json", console)
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
    save_merged(data, args.out or RESULTS / "ridge.json", console)
    return 0


if __name__ == "__main__":
    sys.exit(main())
