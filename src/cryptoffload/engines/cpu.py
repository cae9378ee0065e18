"""CPU engine: the request ring served by worker threads or pinned worker processes.

Why both: the native core releases the GIL, so threads already run modexps in parallel and
start in microseconds (the tests use them). Processes cost a start-up (an interpreter per
worker) but keep every Python-side step — packing integers, grouping a batch, unpacking —
off the client's interpreter, so a Python client and N workers never contend for one GIL;
pinned, each worker owns a core like a QAT engine owns its accelerator.

What a worker computes is :func:`.compute.compute_batch` (shared with the IFMA and GPU
engines); the worker process is :mod:`.cpu_worker`, the choice of cores :mod:`.pinning`.
"""

from __future__ import annotations

import multiprocessing
import threading
from multiprocessing.connection import Connection
from multiprocessing.context import ForkServerContext, SpawnContext
from typing import Sequence

from cryptoffload.crypto import native
from cryptoffload.engines.base import BatchEngine, EngineError, Outcome, Request
from cryptoffload.engines.compute import ServiceEncryptors, compute_batch, gmp_powm
from cryptoffload.engines.cpu_worker import worker_main
from cryptoffload.engines.pinning import choose_cores, pin
from cryptoffload.errors import ConfigError


def cpu_reason() -> str | None:
    """None when the CPU engines can run here (the native GMP core is built), else why not."""
    if native.native_available():
        return None
    return "the native Paillier core is not built (reinstall the package with libgmp-dev present)"


class CpuEngine(BatchEngine):
    """Modexp/encryption jobs on CPU cores with the native GMP core.

    ``workers`` processes (``processes=True``, default) or threads; ``pin`` binds worker i to
    a core (``cores`` or the i-th allowed core) when it exists; ``start_method`` is
    ``"spawn"`` or ``"forkserver"`` (never fork: the client may hold threads and locks).
    Other options as :class:`~cryptoffload.engines.base.BatchEngine`.

    ``max_batch`` defaults to 16: a GMP modexp costs the same alone or in a batch, so large
    batches only delay responses and make them arrive in bursts a Python client (holding
    the GIL while it resumes dozens of coroutines) serves late; 16 jobs still make the
    per-call (and per-IPC) overhead negligible. Measured here, coroutine modes went from
    ~290 to ~390 enc/s on one worker when going from 64 to 8-16.
    """

    def __init__(self, workers: int = 1, *, processes: bool = True, pin: bool = True,
                 cores: Sequence[int] | None = None, start_method: str = "spawn",
                 backend: str = "gmp", constant_time: bool = True, max_batch: int = 16,
                 ring_capacity: int = 1024, in_order: bool = False, block_when_full: bool = True,
                 start_timeout: float = 60.0) -> None:
        self.name = "cpu" if processes else "cpu-threads"
        super().__init__(workers=workers, max_batch=max_batch, ring_capacity=ring_capacity,
                         in_order=in_order, block_when_full=block_when_full)
        native.require_native()
        if start_method not in ("spawn", "forkserver"):
            raise ConfigError(f"start_method must be 'spawn' or 'forkserver', got {start_method!r}")
        self.processes = processes
        self.backend = backend
        self.cores = choose_cores(workers, pin, cores)
        self.pinned: list[int | None] = [None] * workers
        self._encryptors = ServiceEncryptors(backend, constant_time)
        self._conns: list[Connection] = []
        self._procs: list[multiprocessing.process.BaseProcess] = []
        if processes:
            self._start_processes(start_method, constant_time, start_timeout)
        self._start_dispatchers()

    def _start_processes(self, start_method: str, constant_time: bool, timeout: float) -> None:
        # each method spelled as a literal: the context's type (spawn or forkserver) has ``Process``
        ctx: SpawnContext | ForkServerContext
        if start_method == "forkserver":
            ctx = multiprocessing.get_context("forkserver")
        else:
            ctx = multiprocessing.get_context("spawn")
        for i in range(self.workers):
            parent, child = ctx.Pipe()
            p = ctx.Process(target=worker_main, args=(child, self.cores[i], self.backend, constant_time),
                            name=f"cryptoffload-cpu-{i}", daemon=True)
            p.start()
            child.close()
            self._conns.append(parent)
            self._procs.append(p)
        for i, conn in enumerate(self._conns):
            if not conn.poll(timeout):
                self._shutdown_backend()
                raise EngineError(f"cpu worker {i} did not start within {timeout} s")
            try:
                _, _, pinned = conn.recv()
            except (EOFError, OSError):
                code = self._procs[i].exitcode
                self._shutdown_backend()
                raise EngineError(f"cpu worker {i} died while starting (exit code {code})") from None
            self.pinned[i] = pinned

    def _worker_started(self, worker: int) -> None:
        if not self.processes:
            self.pinned[worker] = pin(threading.get_native_id(), self.cores[worker])

    def _run_batch(self, worker: int, batch: list[Request]) -> list[Outcome]:
        work = [(kind, payload) for _, kind, payload in batch]
        if not self.processes:
            return compute_batch(work, gmp_powm, self._encryptors)
        conn = self._conns[worker]
        try:
            conn.send(work)
            return conn.recv()
        except (EOFError, OSError, BrokenPipeError):
            code = self._procs[worker].exitcode
            raise EngineError(f"cpu worker process {worker} died (exit code {code})") from None

    def _shutdown_backend(self) -> None:
        for conn in self._conns:
            try:
                conn.send(None)
            except (OSError, ValueError):
                pass
        for p in self._procs:
            p.join(2.0)
            if p.is_alive():
                p.terminate()
                p.join(2.0)
        for conn in self._conns:
            conn.close()
        self._conns.clear()
        self._procs.clear()

    def describe(self) -> str:
        kind = "processes" if self.processes else "threads"
        pins = ",".join("-" if c is None else str(c) for c in self.pinned)
        return f"{self.name}: {self.workers} {kind} (cores {pins}), max batch {self.max_batch}"
