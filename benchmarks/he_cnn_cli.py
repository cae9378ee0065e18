"""Benchmark: `cryptoffload he-cnn infer` as a user runs it, call after call, with the key folder.

What it times (issue 37): the wall-clock time of whole commands -- the interpreter's start, the
imports, the MNIST image, the keys (made by the first call, read back by the later ones), the
weights (encoded by the first call, read back by the later ones), the encrypted inference --
and, for comparison, the same images through the Python API's ``he_cnn.Classifier``, which
keeps keys and encoded weights in memory. Each call's breakdown: the phases the command
reports (``--json``'s ``seconds``), the interpreter's start and the imports alone (timed
apart, ``python -c "import ..."`` of what the command imports), and the rest (wall clock minus
both: the model, the plan, the image, the plaintext forward pass, the output, the exit). Every
call records the 1-minute load average before it; the figures quoted in the docs come from a
run alone on the machine (``--conditions`` says how it was held).

    .venv/bin/python benchmarks/he_cnn_cli.py [--calls 5] [--images 3] [--backend seal]

Writes benchmarks/results/he_cnn_cli.json (with the machine and the date).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
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


#: what `he-cnn infer` imports before it computes (the command line and its he-cnn group, the he-cnn
#: program, SEAL)
IMPORTS = "import cryptoffload.cli, cryptoffload.cli.he_cnn, cryptoffload.apps.he_cnn.infer, tenseal.sealapi"


def _run(argv: list[str]) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """A child process: its result, wall seconds and CPU seconds (it and its children)."""
    before = os.times()
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    after = os.times()
    return proc, wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def _call(key_dir: Path, image: int, backend: str) -> dict[str, Any]:
    """One `he-cnn infer --json` call: its wall time, CPU time, the load before it, its phases."""
    load = os.getloadavg()[0]
    proc, wall, cpu = _run([sys.executable, "-m", "cryptoffload.cli", "he-cnn", "infer", "--image", str(image),
                            "--backend", backend, "--key-dir", str(key_dir), "--json"])
    doc = json.loads(proc.stdout)
    return {"wall_s": wall, "cpu_s": cpu, "load_1min": load, "keys": doc["keys"], "weights": doc.get("weights"),
            "seconds": doc["seconds"], "prediction": doc["prediction"], "label": doc["label"]}


def _imports(rounds: int) -> dict[str, float]:
    """The interpreter's start and the imports alone: the median of ``rounds`` runs."""
    runs = [_run([sys.executable, "-c", IMPORTS])[1:] for _ in range(rounds)]
    return {"wall_s": statistics.median(w for w, _ in runs), "cpu_s": statistics.median(c for _, c in runs)}


def _breakdown(later: list[dict[str, Any]], start_s: float) -> dict[str, float]:
    """The median later call cut into its parts (seconds): start + imports (timed apart), each
    reported phase, and the rest of the wall clock."""
    parts = {"start_and_imports": start_s}
    for key in ("load_keys", "prepare_weights", "encrypt", "evaluate", "decrypt"):
        parts[key] = statistics.median(c["seconds"].get(key, 0.0) for c in later)
    wall = statistics.median(c["wall_s"] for c in later)
    parts["rest"] = wall - sum(parts.values())
    parts["wall"] = wall
    return parts


def _api(images: int, key_dir: Path, backend: str) -> dict[str, Any]:
    """The Python API: a Classifier (keys read from ``key_dir``), then ``images`` images."""
    from cryptoffload import he_cnn

    start = time.perf_counter()
    clf = he_cnn.Classifier(backend=backend, key_dir=key_dir)
    setup = time.perf_counter() - start
    per_image = []
    for i in range(images):
        load = os.getloadavg()[0]
        t = time.perf_counter()
        p = clf.classify(i)
        per_image.append({"wall_s": time.perf_counter() - t, "load_1min": load, "digit": p.digit, "label": p.label})
    return {"setup_s": setup, "keys_reused": clf.keys_reused, "per_image": per_image}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=5, help="calls after the first (which makes the keys)")
    ap.add_argument("--images", type=int, default=3, help="images through the Python API's Classifier")
    ap.add_argument("--backend", default="seal")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--conditions", default="not stated",
                    help="how the machine was held while measuring (recorded with the figures)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="he-cnn-cli-bench-") as tmp:
        key_dir = Path(tmp) / "keys"
        first = _call(key_dir, 3, args.backend)
        later = [_call(key_dir, 3, args.backend) for _ in range(args.calls)]
        imports = _imports(max(3, args.calls))
        api = _api(args.images, key_dir, args.backend)
    walls = [c["wall_s"] for c in later]
    loads = [c["load_1min"] for c in later]
    images = [p["wall_s"] for p in api["per_image"]]
    summary = {"first_call_s": first["wall_s"], "later_calls_median_s": statistics.median(walls),
               "later_calls_min_s": min(walls), "later_calls_max_s": max(walls),
               "later_calls_cpu_median_s": statistics.median(c["cpu_s"] for c in later),
               "load_1min_median": statistics.median(loads), "load_1min_range": [min(loads), max(loads)],
               "api_image_median_s": statistics.median(images) if images else None,
               "start_and_imports_s": imports["wall_s"], "start_and_imports_cpu_s": imports["cpu_s"],
               "later_call_breakdown_s": _breakdown(later, imports["wall_s"])}
    print(f"he-cnn infer ({args.backend}), {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores")
    print(f"  first call (makes the keys):  {first['wall_s']:6.2f} s wall, load {first['load_1min']:.1f}; keys "
          f"{first['seconds'].get('keygen', 0):.2f} s, weights {first['seconds']['prepare_weights']:.2f} s")
    for i, c in enumerate(later, 2):
        print(f"  call {i} (keys {c['keys']}):      {c['wall_s']:6.2f} s wall, {c['cpu_s']:5.2f} s CPU, load "
              f"{c['load_1min']:.1f}; read keys {c['seconds'].get('load_keys', 0):.2f} s, weights {c['weights']} "
              f"{c['seconds']['prepare_weights']:.2f} s, evaluate {c['seconds']['evaluate']:.2f} s")
    print(f"  later calls: median {summary['later_calls_median_s']:.2f} s (min {min(walls):.2f}, max {max(walls):.2f}), "
          f"median CPU {summary['later_calls_cpu_median_s']:.2f} s, load {min(loads):.1f}..{max(loads):.1f}")
    parts = summary["later_call_breakdown_s"]
    print("  a later call, median: " + ", ".join(f"{k.replace('_', ' ')} {v:.2f}" for k, v in parts.items()) + " s")
    if images:
        print(f"  Python API Classifier: setup {api['setup_s']:.2f} s, then per image median "
              f"{statistics.median(images):.2f} s over {len(images)} images")
    out = {"machine": machine_info(), "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
           "backend": args.backend, "command": "cryptoffload he-cnn infer --image 3 --key-dir DIR --json",
           "conditions": args.conditions, "imports": imports,
           "first": first, "later": later, "api": api, "summary": summary}
    bench.save_results(out, args.out or RESULTS / "he_cnn_cli.json", print)
    return 0


if __name__ == "__main__":
    sys.exit(main())
