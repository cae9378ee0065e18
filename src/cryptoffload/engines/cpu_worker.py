"""The CPU engine's worker process: pinned to its core, it receives batches of (kind, payload)
tuples over a pipe and sends back their outcomes until told to stop.

Why a process per worker: every Python-side step (packing integers, grouping a batch,
unpacking) then runs off the client's interpreter, so a Python client and N workers never
contend for one GIL; pinned, each worker owns a core like a QAT engine owns its accelerator.
The worker is started with ``spawn`` or ``forkserver`` and imports only this module's
dependencies.
"""

from __future__ import annotations

import os
from multiprocessing.connection import Connection

from cryptoffload.engines.compute import ServiceEncryptors, compute_batch, gmp_powm
from cryptoffload.engines.pinning import pin


def worker_main(conn: Connection, core: int | None, backend: str, constant_time: bool) -> None:
    """Loop of one worker process: receive a batch of (kind, payload), send back outcomes."""
    pinned = pin(0, core)
    encryptors = ServiceEncryptors(backend, constant_time)
    conn.send(("ready", os.getpid(), pinned))
    while True:
        try:
            batch = conn.recv()
        except (EOFError, OSError):
            return
        if batch is None:
            return
        conn.send(compute_batch(batch, gmp_powm, encryptors))
