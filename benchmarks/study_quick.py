"""Benchmark: each study's quick run (`cryptoffload study NAME --quick`) as a user runs it.

What it times (issue 37, "times that are not what the docs say"): the wall-clock time of the
whole command -- interpreter, imports, the study, its tables, figures and result.json -- and
the CPU time of it and its children (Dask workers, servers), with the 1-minute load average
before and after. Every `--help` text and doc that quotes a quick run's time quotes this.

Run each study alone on a quiet machine (here: under the exclusive CPU lock, one study per
hold), e.g.::

    flock -x /work/notes/cpu.lock .venv/bin/python benchmarks/study_quick.py --study ridge

Each run merges its studies into benchmarks/results/study_quick.json (with the machine and
the date), so studies measured in separate holds share one file.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from cryptoffload import bench
from cryptoffload.machine import machine_info

RESULTS = Path(__file__).resolve().parent / "results"


def _names() -> list[str]:
    from cryptoffload.studies import all_studies

    return sorted(all_studies())


def time_quick(name: str, out: Path, quiet_note: str) -> dict[str, Any]:
    """One `study NAME --quick` run: wall and CPU seconds, the load around it, its result's
    own elapsed time and mode."""
    load_before = os.getloadavg()[0]
    before = os.times()
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "cryptoffload.cli", "study", name, "--quick", "--out", str(out)],
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = os.times()
    if proc.returncode != 0:
        raise SystemExit(f"study {name} --quick failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    result = json.loads((out / "result.json").read_text())
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "load_1min_before": round(load_before, 2),
            "load_1min_after": round(os.getloadavg()[0], 2), "study_elapsed_s": result.get("elapsed_s"),
            "mode": result.get("mode"), "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "command": f"cryptoffload study {name} --quick --out DIR", "conditions": quiet_note}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--study", action="append", help="a study to time (repeatable; default: every study)")
    ap.add_argument("--conditions", default="alone, under the exclusive CPU lock (no other locked job running)",
                    help="how the machine was held while measuring (recorded with each figure)")
    ap.add_argument("--out", type=Path, default=RESULTS / "study_quick.json")
    args = ap.parse_args()
    names = args.study or _names()
    doc: dict[str, Any] = json.loads(args.out.read_text()) if args.out.exists() else {"studies": {}}
    doc["machine"] = machine_info()
    with tempfile.TemporaryDirectory(prefix="study-quick-") as tmp:
        for name in names:
            run = time_quick(name, Path(tmp) / name, args.conditions)
            doc["studies"][name] = run
            print(f"{name:18s} {run['wall_s']:8.1f} s wall, {run['cpu_s']:8.1f} s CPU, load "
                  f"{run['load_1min_before']:.1f} -> {run['load_1min_after']:.1f}", flush=True)
    doc["date"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    bench.save_results(doc, args.out, print)
    return 0


if __name__ == "__main__":
    sys.exit(main())
