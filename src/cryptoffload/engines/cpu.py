"""CPU engine: the request ring served by worker threads or pinned worker processes.

Why both: the native core releases the GIL, so threads already run modexps in parallel and
start in microseconds (the tests use them). Processes cost a start-up (an interpreter per
worker) but keep every Python-side step — packing integers, grouping a batch, unpacking —
off the client's interpreter, so a Python client and N workers never contend for one GIL;
pinned, each worker owns a core like a QAT engine owns its accelerator.

Batches cross to a process as lists of (kind, payload) integer tuples, never key objects; a
worker rebuilds an ``Encryptor`` (fixed-base table) the first time it sees a public key,
keyed by (n, h_s), and keeps it.

``compute_batch`` is shared with the IFMA engine: it groups a batch by job kind and key so one
native call covers each group, and isolates a failing job (the rest of its batch succeeds).
"""

from __future__ import annotations

import math
import multiprocessing
import os
import secrets
import threading
from collections import defaultdict
from multiprocessing.connection import Connection
from typing import Any, Callable, Sequence

from cryptoffload.crypto._native import core as native
from cryptoffload.engines.base import BatchEngine, EngineError, JobFailed, Outcome, Request
from cryptoffload.errors import ConfigError

#: ``powm(bases, exps, modulus, exp_bits)``: ``exp_bits`` is a public bound on the exponents'
#: bit length where the caller knows one (the exponents may be secret), else None. Kernels that
#: process a fixed number of exponent bits (the GPU's) use it instead of the longest exponent;
#: GMP ignores it (``mpz_powm``'s time depends on the exponent anyway).
PowmFn = Callable[[Sequence[int], Sequence[int], int, "int | None"], list[int]]
Work = tuple[str, tuple[int | None, ...]]


def gmp_powm(bases: Sequence[int], exps: Sequence[int], modulus: int, exp_bits: int | None = None) -> list[int]:
    return native.powm_batch(bases, exps, modulus)


class EncryptorCache:
    """Encryptors per public key (n, h_s); tables are built once per worker."""

    def __init__(self, backend: str = "gmp", constant_time: bool = True) -> None:
        self.backend = backend
        self.constant_time = constant_time
        self._cache: dict[tuple[int, int], Any] = {}
        self._lock = threading.Lock()

    def get(self, n: int, hs: int) -> Any:
        from cryptoffload.crypto.paillier import PublicKey

        with self._lock:
            enc = self._cache.get((n, hs))
            if enc is None:
                enc = PublicKey(n, hs).encryptor(self.backend, self.constant_time)
                self._cache[(n, hs)] = enc
        return enc


def _random_unit(n: int) -> int:
    while True:
        r = secrets.randbelow(n - 1) + 1
        if math.gcd(r, n) == 1:
            return r


def _check_message(m: Any, n: int) -> int:
    if isinstance(m, bool) or not isinstance(m, int) or not 0 <= m < n:
        raise ConfigError("plaintext must be an int in [0, n)")
    return m


def _run_group(kind: str, key: Any, payloads: list[tuple[int | None, ...]], powm: PowmFn,
               encryptors: EncryptorCache) -> list[int]:
    if kind == "modexp":
        exps = [p[1] for p in payloads]
        if not all(isinstance(e, int) and e >= 0 for e in exps):
            raise ConfigError("a modexp exponent must be a non-negative int")
        return powm([p[0] for p in payloads], exps, key, None)
    if kind == "paillier.encrypt":
        n, hs = key
        enc = encryptors.get(n, hs)
        ms = [_check_message(p[2], n) for p in payloads]
        exps = [p[3] if p[3] is not None else secrets.randbits(enc.public_key.exp_bits) for p in payloads]
        return enc.encrypt_raw(ms, exps)
    if kind == "paillier.encrypt_classic":
        n = key
        n2 = n * n
        ms = [_check_message(p[1], n) for p in payloads]
        rs = [p[2] if p[2] is not None else _random_unit(n) for p in payloads]
        bound = n.bit_length()   # m < n is secret: every exponent is processed over n's length
        gm = powm([n + 1] * len(ms), ms, n2, bound)
        rn = powm(rs, [n] * len(rs), n2, bound)
        return [a * b % n2 for a, b in zip(gm, rn)]
    raise ConfigError(f"unknown job kind {kind!r}")


def _group_key(kind: str, payload: tuple[int | None, ...]) -> Any:
    if kind == "modexp":
        return payload[2]
    if kind == "paillier.encrypt":
        return (payload[0], payload[1])
    return payload[0]


def _failure(kind: str, exc: BaseException) -> JobFailed:
    return JobFailed(f"{kind} job failed: {type(exc).__name__}: {exc}")


def compute_batch(batch: Sequence[Work], powm: PowmFn = gmp_powm,
                  encryptors: EncryptorCache | None = None) -> list[Outcome]:
    """(ok, value) per job: one native call per (kind, key) group; a group that raises is
    retried job by job so only the bad job fails."""
    encryptors = encryptors or EncryptorCache()
    groups: dict[tuple[str, Any], list[int]] = defaultdict(list)
    out: list[Outcome] = [(False, None)] * len(batch)
    for i, (kind, payload) in enumerate(batch):
        try:
            groups[(kind, _group_key(kind, payload))].append(i)
        except (IndexError, TypeError):
            out[i] = (False, _failure(kind, ConfigError("malformed payload")))
    for (kind, key), idx in groups.items():
        try:
            values = _run_group(kind, key, [batch[i][1] for i in idx], powm, encryptors)
            for i, v in zip(idx, values):
                out[i] = (True, v)
        except Exception:  # noqa: BLE001 - isolate the bad job(s)
            for i in idx:
                try:
                    out[i] = (True, _run_group(kind, key, [batch[i][1]], powm, encryptors)[0])
                except Exception as exc:  # noqa: BLE001
                    out[i] = (False, _failure(kind, exc))
    return out


# ------------------------------------------------------------------------------------------
# pinning


def choose_cores(workers: int, pin: bool, cores: Sequence[int] | None = None) -> list[int | None]:
    """The core for each worker: ``cores`` if given, else worker i on the i-th core this
    process may run on; None (not pinned) when ``pin`` is off or that core does not exist."""
    if not pin or not hasattr(os, "sched_getaffinity"):
        return [None] * workers
    allowed = sorted(os.sched_getaffinity(0))
    wanted = list(cores) if cores is not None else allowed
    return [wanted[i] if i < len(wanted) and wanted[i] in allowed else None for i in range(workers)]


def _pin(target: int, core: int | None) -> int | None:
    if core is None:
        return None
    try:
        os.sched_setaffinity(target, {core})
    except OSError:
        return None
    return core


# ------------------------------------------------------------------------------------------
# worker process


def _worker_main(conn: Connection, core: int | None, backend: str, constant_time: bool) -> None:
    """Loop of one worker process: receive a batch of (kind, payload), send back outcomes."""
    pinned = _pin(0, core)
    encryptors = EncryptorCache(backend, constant_time)
    conn.send(("ready", os.getpid(), pinned))
    while True:
        try:
            batch = conn.recv()
        except (EOFError, OSError):
            return
        if batch is None:
            return
        conn.send(compute_batch(batch, gmp_powm, encryptors))


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
        self._encryptors = EncryptorCache(backend, constant_time)
        self._conns: list[Connection] = []
        self._procs: list[multiprocessing.process.BaseProcess] = []
        if processes:
            self._start_processes(start_method, constant_time, start_timeout)
        self._start_dispatchers()

    def _start_processes(self, start_method: str, constant_time: bool, timeout: float) -> None:
        ctx = multiprocessing.get_context(start_method)
        for i in range(self.workers):
            parent, child = ctx.Pipe()
            p = ctx.Process(target=_worker_main, args=(child, self.cores[i], self.backend, constant_time),
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
            self.pinned[worker] = _pin(threading.get_native_id(), self.cores[worker])

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
