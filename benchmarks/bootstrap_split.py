"""Benchmark: a CKKS bootstrap's CoeffToSlot/SlotToCoeff stages split over Dask workers, naive and
tuned baby-step counts, beside the multi-device model's prediction for the same split (issue 33).

Our RNS-CKKS backend (``gpu-twin``) at an insecure study ring (``--ring``, default N = 2^11: on
a 2-core machine shared by several people, two workers beside the client, five rounds of every
stage with its part costs re-timed each round, fit in one short exclusive hold of the machine
only at a small ring; our bootstrap at N = 2^16 takes 81 s in one process), the plan's stages (``--plan``, default level budget (2, 2)), each
stage's input ciphertext kept on the workers of the project's TLS LocalCluster
(``engines/dask.py``; never plain TCP). Per stage and worker count (``--workers``, default 1,2:
this machine has 2 cores, so 4 workers would share them and is not run): the plan's baby-step
count (naive) and the one the model prices fastest on that many workers (tuned), every round
re-timing the stage's part costs on the workers and the link, then running each configuration
once, decrypted against the stage computed in one process. The method is
``studies/bsgs_multidevice/bootstrap_split.py``'s docstring; the bsgs-multidevice study's quick run shows
this record (copy it to ``src/cryptoffload/studies/data/bootstrap_split.json``).

    flock -x /work/notes/cpu.lock env PYTHONPATH=src .venv/bin/python benchmarks/bootstrap_split.py \\
        [--ring 2048] [--rounds 5] [--workers 1,2] [--stages "CoeffToSlot 0,SlotToCoeff 0"]

Writes ``benchmarks/results/bootstrap_split.json`` (``--out``) with the machine and date, and
prints per configuration the measured and the predicted seconds and the model's error.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptoffload.studies.bsgs_multidevice.bootstrap_split import SplitRecord

RESULTS = Path(__file__).resolve().parent / "results"


def table(record: SplitRecord) -> str:
    from cryptoffload.studies.bsgs_multidevice.bootstrap_split import speedup_rows, split_rows

    lines = [f"{'stage':15} {'workers':>7} {'kind':>6} {'bs':>4} {'measured s':>11} {'model s':>9} {'error %':>8} "
             f"{'band ms':>17}"]
    for r in split_rows(record):
        band = f"[{r.band_low_ms:.1f}, {r.band_high_ms:.1f}]" if r.band_low_ms is not None else "-"
        lines.append(f"{r.stage:15} {r.workers:>7} {r.kind:>6} {r.bs:>4} {r.measured_ms / 1e3:>11.4f} "
                     f"{r.predicted_ms / 1e3:>9.4f} {r.error_pct:>+8.1f} {band:>17}")
    lines.append("")
    for s in speedup_rows(record):
        if s.speedup is None:
            lines.append(f"{s.workers} workers: {s.note}")
            continue
        band = f"[{s.speedup_low:.3f}, {s.speedup_high:.3f}]" if s.speedup_low is not None else s.note
        lines.append(f"{s.workers} worker(s): naive {s.naive_ms / 1e3:.4f} s, tuned {s.tuned_ms / 1e3:.4f} s "
                     f"(bs {s.tuned_bs}); speedup {s.speedup:.3f} {band}, model {s.predicted_speedup:.3f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from cryptoffload.bench import save_results
    from cryptoffload.crypto.ckks.bootstrap.plan import BootstrapPlan
    from cryptoffload.studies.bsgs_multidevice.bootstrap_split import SplitSettings, measure_record

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ring", type=int, default=2048, help="ring degree, 1024 to 8192 (insecure study rings)")
    ap.add_argument("--levels", type=int, default=17)
    ap.add_argument("--plan", default="2,2", help="level budget: CoeffToSlot,SlotToCoeff")
    ap.add_argument("--stages", default="", help='comma-separated stage names ("CoeffToSlot 0"); empty: all')
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--passes", type=int, default=1, help="timed passes of the part costs per round")
    ap.add_argument("--out", type=Path, default=RESULTS / "bootstrap_split.json")
    args = ap.parse_args(argv)
    budget = tuple(int(v) for v in args.plan.split(","))
    settings = SplitSettings(ring=args.ring, levels=args.levels, plan=BootstrapPlan((budget[0], budget[1])),
                             stages=tuple(s.strip() for s in args.stages.split(",") if s.strip()),
                             workers=tuple(int(v) for v in args.workers.split(",")), rounds=args.rounds,
                             passes=args.passes)
    record = measure_record(settings, lambda m: print(m, flush=True))
    record = dataclasses.replace(
        record, command="benchmarks/bootstrap_split.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        load_average_median=statistics.median(record.load_average_1min))
    print(table(record))
    save_results(record.to_json(), args.out, print)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
