"""CPU-side costs of the QAT Paillier client designs, measured on one pinned core of this machine.

The QAT model (``sim/qat/model.py``) needs what each client design costs the host CPU: a thread switch
among 1,000 synchronous callers (QAT+S2), a coroutine resume-and-pause (QHCS, OpenSSL ASYNC_JOB),
the Paillier work around the two modexps, and a software modexp. They are measured here by a small
C program (``benchmarks/qat_cpu_costs.c``, built with the system compiler against GMP and OpenSSL,
as libhcs and QHCS are) in process CPU time, so the other jobs sharing the cores do not inflate
them, and written with the machine to ``benchmarks/results/qat_cpu_costs.json``. The profile
``profiles/qat_dh8970.toml`` carries these values with that file as their source; the model scales
them to the paper's Xeon D-1541 by the ratio of the paper's software encryption time to ours.

    .venv/bin/python benchmarks/qat_cpu_costs.py [--seconds 1.0] [--threads 1000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from cryptoffload.bench import save_results
from cryptoffload.machine import machine_info

HERE = Path(__file__).resolve().parent


def build(tmp: Path) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise SystemExit("error: no C compiler on PATH; install the Debian package 'gcc'")
    exe = tmp / "qat_cpu_costs"
    proc = subprocess.run([cc, "-O2", "-pthread", "-o", str(exe), str(HERE / "qat_cpu_costs.c"), "-lgmp", "-lcrypto"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit("error: building qat_cpu_costs.c failed (needs libgmp-dev and libssl-dev): "
                         + " ".join(proc.stderr.split())[:300])
    return exe


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--threads", type=int, default=1000)
    ap.add_argument("--touch", type=int, default=2048, help="bytes each thread or coroutine touches per run")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    console = Console()
    with tempfile.TemporaryDirectory() as tmp:
        exe = build(Path(tmp))
        rounds = []
        for i in range(args.rounds):
            out = subprocess.run([str(exe), str(args.seconds), str(args.threads), str(args.touch)],
                                 capture_output=True, text=True, check=True, timeout=600).stdout
            rounds.append(json.loads(out))
            console.print(f"round {i + 1}/{args.rounds} done")
    keys = [k for k in rounds[0] if k.endswith("_s") or "_s_" in k]
    med = {k: statistics.median(r[k] for r in rounds) for k in keys}
    tab = Table(title=f"QAT client CPU costs on one core, median of {args.rounds} rounds (process CPU time)")
    tab.add_column("cost")
    tab.add_column("median", justify="right")
    tab.add_column("spread", justify="right")
    for k in keys:
        vals = [r[k] for r in rounds]
        tab.add_row(k, f"{med[k] * 1e6:.3f} us", f"{(max(vals) - min(vals)) / 2 / med[k]:.1%}")
    console.print(tab)
    result = {"benchmark": "qat client cpu costs", "machine": machine_info(), "seconds": args.seconds,
              "threads": args.threads, "touch_bytes": args.touch, "rounds": rounds, "median": med}
    save_results(result, HERE / "results" / "qat_cpu_costs.json", console.print)


if __name__ == "__main__":
    main()
