"""Benchmark: encrypted MNIST inference (CKKS via SEAL) on this machine, one thread.

Targets (issue 5): single-image latency with per-channel packing far below the paper's
11,359 ms (Xeon Gold 5122, EVA/SEAL) and below LoLa's 2.2 s; per-layer and per-op-kind
breakdown; memory of keys and weights; throughput of the per-pixel batched mode.

    .venv/bin/python benchmarks/he_cnn.py [--images 10] [--batch-images 1000] [--no-batch]

Pins itself to one core. Writes benchmarks/results/he_cnn.json.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from rich.console import Console

from cryptoffload import bench as pin
from cryptoffload.apps.he_cnn.benchmark import bench
from cryptoffload.machine import machine_info

RESULTS = Path(__file__).resolve().parent / "results"
PAPER_MS = 11_359.0
LOLA_MS = 2_200.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--images", type=int, default=10)
    ap.add_argument("--batch-images", type=int, default=1000)
    ap.add_argument("--no-batch", action="store_true")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    console = Console(width=160) if not sys.stdout.isatty() else Console()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    cpu = pin.pin_to_one_core()
    log = lambda m: console.print(m, markup=False)  # noqa: E731
    single = bench(args.images, log=log)
    out = {"machine": machine_info(), "pinned_cpu": cpu, "per_channel": single.as_dict()}
    med = single.latency_s.get("median", float("nan")) * 1e3
    console.print(f"per-channel, one thread: median {med:,.0f} ms per image "
                  f"({PAPER_MS / med:.1f}x below the paper's {PAPER_MS:,.0f} ms, LoLa {LOLA_MS:,.0f} ms)")
    console.print(f"layers (s): {single.layers}")
    console.print(f"keys {single.key_bytes}, weights {single.weight_bytes}")
    if not args.no_batch:
        batch = bench(args.batch_images, batch=True, log=log)
        out["batch"] = batch.as_dict()
        console.print(f"batched: {batch.images_per_s:.2f} images/s for {args.batch_images} images, "
                      f"{batch.capacity_images_per_s:.1f} images/s at a full batch")
    out["targets"] = {"below_paper": med < PAPER_MS, "below_lola": med < LOLA_MS}
    pin.save_results(out, args.out or RESULTS / "he_cnn.json", console.print)
    return 0


if __name__ == "__main__":
    sys.exit(main())
