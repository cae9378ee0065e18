"""Benchmark: the multi-device BSGS model against real distributed runs on this machine.

Target (issue 7): for every measured configuration -- real BSGS matrix-vector products with SEAL
ciphertexts on 1 and 2 Dask worker processes, several baby-step sizes, all three strategies --
the model's prediction (the same op DAG priced with the profile `calibrate ckks` measures just
before) within 20 % of the measured median wall time.

    .venv/bin/python benchmarks/bsgs.py [--diagonals 64] [--babies 2,4,8,16] [--repeats 5]

Writes benchmarks/results/bsgs.json (and the measured profile next to it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from cryptoffload.machine import machine_info
from cryptoffload.studies.bsgs_multidevice import BsgsMultideviceConfig, measure

RESULTS = Path(__file__).resolve().parent / "results"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--diagonals", type=int, default=64)
    ap.add_argument("--babies", default="2,4,8,16")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", type=Path, default=RESULTS / "bsgs.json")
    args = ap.parse_args()
    console = Console(width=160) if not sys.stdout.isatty() else Console()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    cfg = BsgsMultideviceConfig(quick=False, measured_diagonals=args.diagonals, repeats=args.repeats,
                                measured_babies=tuple(int(b) for b in args.babies.split(",")),
                                measured_devices=tuple(int(w) for w in args.workers.split(",")))
    cfg.validate()
    rows, profile, prof_path, used = measure(cfg, args.out.parent / "bsgs_calibration", lambda m: console.print(m))
    t = Table(title=f"BSGS on Dask workers (SEAL N={int(profile.value('ring.poly_modulus_degree'))}, "
                    f"C={args.diagonals}): model vs measured")
    for col in ("workers", "strategy", "bs", "predicted ms", "measured ms", "error %", "max |err|"):
        t.add_column(col, justify="right")
    for r in rows:
        t.add_row(str(r.devices), r.strategy, str(r.baby), f"{r.predicted_s * 1e3:.1f}", f"{r.measured_s * 1e3:.1f}",
                  f"{r.error * 100:+.1f}", f"{r.max_error:.1e}")
    console.print(t)
    worst = max(abs(r.error) for r in rows)
    console.print(f"max |model error| {worst * 100:.1f} % over {len(rows)} configurations (target 20 %)")
    out = {"machine": machine_info(), "profile": str(prof_path),
           "profile_values": {k: v.value for k, v in profile.values.items()},
           "op_costs_used": {f: getattr(used, f) for f in ("rotate_s", "rotate_low_s", "pmul_s", "add_s", "add_low_s",
                                                           "rescale_s", "serialize_s", "deserialize_s")},
           "config": {"diagonals": args.diagonals, "babies": list(cfg.measured_babies),
                      "workers": list(cfg.measured_devices), "repeats": args.repeats},
           "rows": [{"workers": r.devices, "strategy": r.strategy, "bs": r.baby, "predicted_s": r.predicted_s,
                     "measured_s": r.measured_s, "span_s": r.span_s, "error": r.error, "max_abs_error": r.max_error}
                    for r in rows],
           "max_abs_model_error": worst}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(out, indent=2, default=str))
    os.replace(tmp, args.out)
    console.print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
