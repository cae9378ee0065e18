"""Benchmark: nginx in each mode on this machine — single-fetch time (curl and wget), nginx
worker CPU per request and maximum requests/s under wrk — plus the modelled kTLS and NIC
offload rows, i.e. the tls-offload study's tables as JSON.

    .venv/bin/python benchmarks/tls.py            # full: 100 fetches per cell, wrk 1..64 connections
    .venv/bin/python benchmarks/tls.py --quick    # under a minute

Writes benchmarks/results/tls.json. Modes that fell back (kTLS without CONFIG_TLS) are
reported as what really ran.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from rich.console import Console

from cryptoffload.bench import save_results
from cryptoffload.machine import machine_info
from cryptoffload.report.tables import render_result
from cryptoffload.studies.tls_offload import study as st

RESULTS = Path(__file__).resolve().parent / "results"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--count", type=int, default=None)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    console = Console(width=160) if not sys.stdout.isatty() else Console()
    with tempfile.TemporaryDirectory() as tmp:
        result = st.run(st.TlsOffloadConfig(quick=args.quick, count=args.count), tmp)
    render_result(result, console)
    data = {"machine": machine_info(), "quick": args.quick,
            "tables": {k: t.to_contract() for k, t in result.tables.items()},
            "verified": result.extra["verified"], "headline": result.headline, "elapsed_s": result.elapsed_s}
    save_results(data, args.out or RESULTS / "tls.json", console.print, f" ({result.elapsed_s:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
