"""The worker loop over a pipe (run in a thread here, as a process by the CPU engine): it says
it is ready, answers each batch with its outcomes, and stops on None or a closed pipe."""

from __future__ import annotations

import os
import threading
from multiprocessing import Pipe

from cryptoffload.engines.cpu_worker import worker_main

MOD = (1 << 127) - 1


def test_ready_batches_and_stop() -> None:
    parent, child = Pipe()
    t = threading.Thread(target=worker_main, args=(child, None, "gmp", True), daemon=True)
    t.start()
    assert parent.recv() == ("ready", os.getpid(), None)
    parent.send([("modexp", (3, 5, MOD)), ("modexp", (3, -5, MOD))])
    out = parent.recv()
    assert out[0] == (True, 243) and out[1][0] is False
    parent.send(None)
    t.join(10)
    assert not t.is_alive()


def test_closed_pipe_stops_the_worker() -> None:
    parent, child = Pipe()
    t = threading.Thread(target=worker_main, args=(child, None, "gmp", True), daemon=True)
    t.start()
    parent.recv()
    parent.close()
    t.join(10)
    assert not t.is_alive()
