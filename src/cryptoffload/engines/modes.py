"""The client modes of the QAT Paillier paper (Zhou and Hua, Journal of Chinese Computer Systems 2021: QHCS), run for real against an Engine.

The work unit follows the paper: one textbook Paillier encryption is two offloaded modexps,
g^m mod n^2 and r^n mod n^2 (r a random unit drawn by the client), multiplied by the client
afterwards. The modes differ only in how the client keeps the engine busy:

``sync``     one caller: submit modexp 1, wait, submit modexp 2, wait, multiply (S1).
``threads``  T threads, each doing ``sync`` on its share (S2).
``coro1``    asyncio, one coroutine per encryption: submit 1, yield, resume, submit 2,
             yield, multiply (QHCS1); at most ``inflight`` encryptions in flight.
``coro2``    two coroutines per encryption, both modexps submitted back to back; the second
             multiplies once both are back (QHCS2).
``batch``    not from the paper: ``paillier.encrypt`` jobs (DJN, one fixed-base product per
             ciphertext) submitted in bulk, the throughput-optimal use of an engine.

How coroutines learn of completions: a poller task runs *in the event loop*; the engine calls
a listener (from its dispatcher thread) when responses are ready, the listener wakes the
poller with ``call_soon_threadsafe``, and the poller calls ``engine.poll()`` in the loop
thread, so job callbacks resolve asyncio futures directly, with no per-job thread hop (QAT's
event-driven polling, rather than a busy loop stealing a core from the workers). A callback
that runs in another thread (a submit that polled while waiting elsewhere) falls back to
``call_soon_threadsafe``.

Latency of an encryption: from submission of its first modexp to the end of its
post-processing, on the client's clock (``time.perf_counter``).
"""

from __future__ import annotations

import asyncio
import itertools
import math
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Awaitable, Callable, Iterable, Sequence

from cryptoffload.engines.base import Engine, EngineStats, Job, JobFuture
from cryptoffload.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np

    from cryptoffload.crypto.paillier.keys import PublicKey

CLIENT_MODES: tuple[str, ...] = ("sync", "threads", "coro1", "coro2", "batch")
PAPER_CLIENT_MODES: tuple[str, ...] = ("sync", "threads", "coro1", "coro2")
PROGRESS_THRESHOLD = 10_000


@dataclass(frozen=True)
class ModeResult:
    """Outcome of one run: throughput in encryptions per second, latencies in seconds, the
    ciphertext integers (so a caller can decrypt and check), and the engine's counters."""

    mode: str
    engine: str
    count: int
    seconds: float
    throughput: float
    mean_latency: float
    p99_latency: float
    threads: int
    inflight: int
    ciphertexts: list[int] = field(repr=False)
    stats: EngineStats | None = field(default=None, repr=False)

    def summary(self) -> str:
        return (f"{self.mode:8s} {self.engine:12s} {self.count:6d} enc  {self.throughput:9.1f} enc/s  "
                f"mean {self.mean_latency * 1e3:8.3f} ms  p99 {self.p99_latency * 1e3:8.3f} ms")


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    if not sorted_values:
        return 0.0
    return sorted_values[min(len(sorted_values) - 1, max(0, math.ceil(q * len(sorted_values)) - 1))]


class _Work:
    """Client-side state of one run: the two modexp jobs per message, results, latencies."""

    def __init__(self, pk: PublicKey, messages: list[int]) -> None:
        """``messages`` checked already (see :func:`run_mode`)."""
        self.n, self.n2, self.g = pk.n, pk.nsquare, pk.g
        self.pk = pk
        self.messages = messages
        self.ciphertexts: list[int] = [0] * len(self.messages)
        self.latencies: list[float] = [0.0] * len(self.messages)

    def jobs(self, i: int) -> tuple[Job, Job]:
        """Pre-processing: draw r, build g^m and r^n mod n^2 (payloads valid by construction)."""
        r = self.pk.random_unit()
        return (Job("modexp", (self.g, self.messages[i], self.n2)),
                Job("modexp", (r, self.n, self.n2)))

    def finish(self, i: int, gm: int, rn: int, t0: float) -> None:
        """Post-processing: the product is the ciphertext."""
        self.ciphertexts[i] = gm * rn % self.n2
        self.latencies[i] = time.perf_counter() - t0


def _run_sync(engine: Engine, work: _Work, indices: Iterable[int]) -> None:
    for i in indices:
        j1, j2 = work.jobs(i)
        f1 = engine.submit(j1)
        gm = f1.result()
        rn = engine.submit(j2).result()
        work.finish(i, gm, rn, f1.submitted_at)


def _run_threads(engine: Engine, work: _Work, threads: int) -> None:
    counter = itertools.count()
    total = len(work.messages)
    errors: list[BaseException] = []

    def indices() -> Iterable[int]:
        while not errors:
            i = next(counter)  # atomic under the GIL: each index goes to one thread
            if i >= total:
                return
            yield i

    def body() -> None:
        try:
            _run_sync(engine, work, indices())
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
            errors.append(exc)

    pool = [threading.Thread(target=body, name=f"mode-threads-{k}") for k in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    if errors:
        raise errors[0]


def _transfer(jf: JobFuture, af: asyncio.Future[int]) -> None:
    """Copy an engine job's outcome onto the event loop's future (unless it was cancelled)."""
    if af.cancelled():
        return
    exc = jf.exception()
    if exc is not None:
        af.set_exception(exc)
    else:
        af.set_result(jf.result())


class _Coroutines:
    """The coroutine modes' bridge to an engine: jobs submitted from the event loop come back
    as asyncio futures, and a poller task polls the engine whenever it signals a response."""

    def __init__(self, engine: Engine, work: _Work) -> None:
        self.engine = engine
        self.work = work
        self.loop = asyncio.get_running_loop()
        self.loop_thread = threading.get_ident()
        self.wake = asyncio.Event()

    def submit(self, job: Job) -> asyncio.Future[int]:
        af: asyncio.Future[int] = self.loop.create_future()

        def done(jf: JobFuture) -> None:
            if threading.get_ident() == self.loop_thread:
                _transfer(jf, af)
            else:
                self.loop.call_soon_threadsafe(_transfer, jf, af)

        self.engine.submit(job).add_done_callback(done)
        return af

    async def poller(self) -> None:
        while True:
            self.wake.clear()
            self.engine.poll(blocking=False)
            await self.wake.wait()

    async def one(self, i: int) -> None:
        """QHCS1: one coroutine per encryption, awaiting its two jobs in turn."""
        j1, j2 = self.work.jobs(i)
        t0 = time.perf_counter()
        gm = await self.submit(j1)
        rn = await self.submit(j2)
        self.work.finish(i, gm, rn, t0)

    async def two_coroutines(self, i: int) -> None:
        """QHCS2: two coroutines per encryption, one per job."""
        j1, j2 = self.work.jobs(i)
        t0 = time.perf_counter()

        async def first() -> int:
            return await self.submit(j1)

        async def second(other: asyncio.Task[int]) -> None:
            rn = await self.submit(j2)
            gm = await other
            self.work.finish(i, gm, rn, t0)

        t1 = asyncio.create_task(first())
        await asyncio.create_task(second(t1))


async def _launch_all(body: Callable[[int], Awaitable[None]], count: int, inflight: int) -> None:
    """Run ``body(i)`` for every message, at most ``inflight`` at once; stop launching at the
    first error and re-raise it once the running ones are done."""
    sem = asyncio.Semaphore(inflight)
    errors: list[BaseException] = []
    running: set[asyncio.Task[None]] = set()

    async def guarded(i: int) -> None:
        try:
            await body(i)
        except BaseException as exc:  # noqa: BLE001 - re-raised after the run
            errors.append(exc)
        finally:
            sem.release()

    for i in range(count):
        await sem.acquire()
        if errors:
            break
        task = asyncio.create_task(guarded(i))
        running.add(task)
        task.add_done_callback(running.discard)
    if running:
        await asyncio.gather(*running)
    if errors:
        raise errors[0]


async def _run_coroutines(engine: Engine, work: _Work, inflight: int, two: bool) -> None:
    run = _Coroutines(engine, work)

    def wake() -> None:
        run.loop.call_soon_threadsafe(run.wake.set)

    remove = engine.add_response_listener(wake)
    poll_task = asyncio.create_task(run.poller())
    try:
        await _launch_all(run.two_coroutines if two else run.one, len(work.messages), inflight)
    finally:
        remove()
        poll_task.cancel()
        try:
            await poll_task
        except asyncio.CancelledError:
            pass


def _run_batch(engine: Engine, work: _Work) -> None:
    pk = work.pk
    futures = engine.submit_many([Job("paillier.encrypt", (pk.n, pk.hs, m, None)) for m in work.messages])
    for i, f in enumerate(futures):
        work.ciphertexts[i] = f.result()
        work.latencies[i] = f.completed_at - f.submitted_at


def run_mode(mode: str, engine: Engine, pk: PublicKey, messages: Sequence[int], *, threads: int = 8,
             inflight: int = 64) -> ModeResult:
    """Encrypt ``messages`` under ``pk`` in client ``mode`` on ``engine`` and time it.

    ``threads`` applies to mode ``threads``; ``inflight`` (encryptions in flight) to
    ``coro1``/``coro2``. The ciphertexts decrypt to the messages with the private key.
    """
    if mode not in CLIENT_MODES:
        raise ConfigError(f"unknown client mode {mode!r}; choose one of {', '.join(CLIENT_MODES)}")
    if threads < 1 or inflight < 1:
        raise ConfigError("threads and inflight must be at least 1")
    # checked once: the paper's modes offload two modexps, which cannot know that m is a
    # plaintext, so m is checked here; batch mode's paillier.encrypt jobs check theirs when made
    work = _Work(pk, list(messages) if mode == "batch" else [pk.check_plaintext(m) for m in messages])
    start = time.perf_counter()
    if mode == "sync":
        _run_sync(engine, work, range(len(work.messages)))
    elif mode == "threads":
        _run_threads(engine, work, threads)
    elif mode in ("coro1", "coro2"):
        asyncio.run(_run_coroutines(engine, work, inflight, two=(mode == "coro2")))
    else:
        _run_batch(engine, work)
    seconds = time.perf_counter() - start
    lat = sorted(work.latencies)
    count = len(work.messages)
    return ModeResult(
        mode=mode, engine=engine.name, count=count, seconds=seconds,
        throughput=count / seconds if seconds > 0 else 0.0,
        mean_latency=sum(lat) / count if count else 0.0, p99_latency=_percentile(lat, 0.99),
        threads=threads if mode == "threads" else 1, inflight=inflight if mode in ("coro1", "coro2") else 1,
        ciphertexts=work.ciphertexts, stats=engine.stats())


def encrypt_array(engine: Engine, pk: PublicKey, values: Iterable[int] | np.ndarray, *, progress: bool = True,
                  chunk: int = 4096, threshold: int = PROGRESS_THRESHOLD) -> list[int]:
    """DJN ciphertext integers for a list or numpy array (object or integer dtype) of
    plaintexts, submitted in chunks with the next chunk queued while one is computed; a
    ``rich`` progress bar shows for ``threshold`` values or more when ``progress``."""
    if chunk < 1:
        raise ConfigError("chunk must be at least 1")
    if hasattr(values, "tolist") and hasattr(values, "dtype"):
        values = values.reshape(-1).tolist() if hasattr(values, "reshape") else values.tolist()
    jobs = [Job.encrypt(pk, m) for m in values]  # each plaintext checked as its job is made
    out: list[int] = []
    if not progress or len(jobs) < threshold:
        return [f.result() for f in engine.submit_many(jobs)]
    from rich.progress import Progress

    with Progress(transient=True) as bar:
        task = bar.add_task("encrypting", total=len(jobs))
        waiting: list[list[JobFuture]] = []
        for i in range(0, len(jobs), chunk):
            waiting.append(engine.submit_many(jobs[i:i + chunk]))
            if len(waiting) > 1:           # keep one chunk queued behind the one computing
                done = waiting.pop(0)
                out.extend(f.result() for f in done)
                bar.advance(task, len(done))
        for done in waiting:
            out.extend(f.result() for f in done)
            bar.advance(task, len(done))
    return out
