"""Benchmark: what securing the local Dask cluster costs (issue 32) -- start-up, a task's round
trip and a worker-to-worker transfer, secured beside unsecured, on the same machine in one run.

*Secured* is ``DaskRunner(workers=2)`` as every command starts it: a fresh CA and leaf (ECDSA
P-256) written to a 0700 folder, mutual TLS 1.3 on every listener, no HTTP routes, scratch in
the private folder. *Unsecured* is the same ``LocalCluster`` as the runner started it before
(2 worker processes of one thread, ``tcp://127.0.0.1``, no security). Rounds alternate the two
(the machine's speed drifts over minutes). Per round and kind:

* ``start_s`` -- from the constructor's call until the client is connected and both workers
  have joined (``LocalCluster`` returns once its workers run), credentials included;
* ``first_task_s`` -- the first task's round trip after that (connections opened lazily);
* ``task_s`` -- the median round trip of ``TASKS`` tiny tasks submitted one after another;
* ``transfer_s`` -- the median client-side round trip of a task on worker B that takes
  ``TRANSFER_BYTES`` a task on worker A has already made: the bytes cross between the worker
  processes over the cluster's comm (TLS-encrypted when secured), plus a task's round trip;
* ``close_s`` -- closing the client and the cluster (and removing the folder).

    PYTHONPATH=src .venv/bin/python benchmarks/dask_tls.py [--rounds 5]

Writes benchmarks/results/dask_tls.json (with the machine) and prints a table of medians.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import time
from pathlib import Path
from typing import Any, Callable

from rich.console import Console
from rich.table import Table

from cryptoffload.bench import save_results
from cryptoffload.engines.dask import DaskRunner
from cryptoffload.machine import machine_info

RESULTS = Path(__file__).resolve().parent / "results"
TASKS = 30
TRANSFERS = 10
TRANSFER_BYTES = 4 * 2**20


def make_bytes(n: int, tag: int) -> bytes:
    return os.urandom(n - 8) + tag.to_bytes(8, "little")


def size_of(data: bytes) -> int:
    return len(data)


def noop(i: int) -> int:
    return i


class Unsecured:
    """The cluster DaskRunner started before issue 32: same workers and options, no security."""

    def __init__(self) -> None:
        from distributed import Client, LocalCluster

        self.cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit="auto",
                                    host="127.0.0.1", dashboard_address=None,
                                    scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                                    silence_logs=logging.WARNING)
        self.client = Client(self.cluster, set_as_default=False, timeout=5)

    def close(self) -> None:
        self.client.close()
        self.cluster.close()


class Secured:
    def __init__(self) -> None:
        self.runner = DaskRunner(workers=2)
        self.client = self.runner.client

    def close(self) -> None:
        self.runner.close()


def one_round(make: Callable[[], Any]) -> dict[str, float]:
    t0 = time.perf_counter()
    c = make()
    start = time.perf_counter() - t0
    client = c.client
    assert len(client.nthreads()) == 2
    t0 = time.perf_counter()
    client.submit(noop, -1, pure=False).result()
    first = time.perf_counter() - t0
    rts = []
    for i in range(TASKS):
        t0 = time.perf_counter()
        client.submit(noop, i, pure=False).result()
        rts.append(time.perf_counter() - t0)
    a, b = sorted(client.nthreads())
    moves = []
    for i in range(TRANSFERS):
        src = client.submit(make_bytes, TRANSFER_BYTES, i, workers=[a], allow_other_workers=False, pure=False)
        src.result()                                        # the bytes exist on A (not sent here)
        t0 = time.perf_counter()
        got = client.submit(size_of, src, workers=[b], allow_other_workers=False, pure=False).result()
        moves.append(time.perf_counter() - t0)
        assert got == TRANSFER_BYTES
        del src
    t0 = time.perf_counter()
    c.close()
    return {"start_s": start, "first_task_s": first, "task_s": statistics.median(rts),
            "transfer_s": statistics.median(moves), "close_s": time.perf_counter() - t0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", type=Path, default=RESULTS / "dask_tls.json")
    args = ap.parse_args()
    load_before = os.getloadavg()
    kinds = {"unsecured": Unsecured, "secured": Secured}
    rounds: dict[str, list[dict[str, float]]] = {k: [] for k in kinds}
    one_round(Secured)      # warm-up, unreported: imports, the first spawn's page cache
    one_round(Unsecured)
    for r in range(args.rounds):
        for kind in (list(kinds) if r % 2 == 0 else list(reversed(kinds))):
            rounds[kind].append(one_round(kinds[kind]))
    fields = list(rounds["secured"][0])
    med = {k: {f: statistics.median(x[f] for x in v) for f in fields} for k, v in rounds.items()}
    table = Table(title=f"Local Dask cluster, 2 workers: medians of {args.rounds} rounds (ms)")
    for col in ("", *kinds, "secured - unsecured"):
        table.add_column(col, justify="right")
    for f in fields:
        u, s = med["unsecured"][f], med["secured"][f]
        table.add_row(f, f"{u * 1e3:.1f}", f"{s * 1e3:.1f}", f"{(s - u) * 1e3:+.1f}")
    Console().print(table)
    load = {"before": load_before, "after": os.getloadavg()}   # 1, 5, 15 min: the machine is shared
    print(f"load average (1, 5, 15 min) before {load_before}, after {load['after']}")
    save_results({"machine": machine_info(), "load_average": load, "rounds": args.rounds, "tasks": TASKS,
                  "transfers": TRANSFERS, "transfer_bytes": TRANSFER_BYTES, "median": med, "all": rounds,
                  "command": "PYTHONPATH=src .venv/bin/python benchmarks/dask_tls.py"
                             + (f" --rounds {args.rounds}" if args.rounds != 5 else "")},
                 args.out, say=print)


if __name__ == "__main__":
    main()
