"""Jobs, futures and the engine contract: submit to a request ring, poll a response ring.

Why a polled engine: a QAT instance does not call back on its own. The client submits to a
request ring and must *poll* the instance; polling moves finished responses to their
callbacks, in the polling thread. Keeping that shape here is what makes the paper's client
modes (synchronous callers, threads, coroutines) mean the same thing on this machine: who
polls, and where the callback runs, is the client's choice, not the engine's.

Why our own :class:`JobFuture` rather than ``concurrent.futures.Future``: ``result()`` must
drive polling (a synchronous caller that waits on an event nobody sets would hang), and a
future costs a few hundred bytes and one lock less, which matters at tens of thousands of jobs
per second in the batch path.

:class:`BatchEngine` is the shared machinery of the compute engines: dispatcher threads take
batches off the request ring, hand them to ``_run_batch`` (native code, a worker process, a
SIMD unit) and push one response per job, in or out of submission order.

Vocabulary -- what a Job is here: :class:`Job` is the ARCHITECTURE's Job, one unit of crypto
work (``paillier.encrypt``, ``modexp``, ...) with its input and output sizes
(:attr:`Job.input_bytes`, :attr:`Job.output_bytes`, derived from the integer payload: the bytes
of the operands sent and of the result that comes back). It carries no dependencies on purpose:
an engine runs whatever it is given, in any order, so a job submitted here is one whose inputs
are already known. Dependencies belong to the *workload* that issues jobs -- in the simulator
that is an op DAG, whose nodes are named ``workloads.bsgs.Op`` (an op of an HE program, with a
level, the ops it waits for and its device), not Job, because the simulator prices them and
no engine runs them.
"""

from __future__ import annotations

import itertools
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable, Literal, Sequence

from cryptoffload.crypto.paillier import djn
from cryptoffload.engines.rings import Ring, RingClosed, RingFull, share_of
from cryptoffload.errors import ConfigError

if TYPE_CHECKING:
    from cryptoffload.crypto.paillier.keys import PublicKey

JobKind = Literal["modexp", "paillier.encrypt", "paillier.encrypt_classic"]
JOB_KINDS: tuple[str, ...] = ("modexp", "paillier.encrypt", "paillier.encrypt_classic")
# payload lengths: modexp (base, exp, modulus); encrypt (n, hs, m, a | None); classic (n, m, r | None)
_PAYLOAD_LEN = {"modexp": 3, "paillier.encrypt": 4, "paillier.encrypt_classic": 3}
#: the payload position of the randomness the engine draws when it is None (modexp has none)
_DRAWN = {"modexp": -1, "paillier.encrypt": 3, "paillier.encrypt_classic": 2}
#: the payload position of the plaintext (checked as the key checks one: in [0, n), an int)
_PLAINTEXT = {"modexp": -1, "paillier.encrypt": 2, "paillier.encrypt_classic": 1}
#: what a job comes back as: its integer result, or (failed) the error; None before it arrives
JobValue = int | BaseException | None

_job_ids = itertools.count()


class EngineError(Exception):
    """An engine cannot take or complete work (closed, broken worker, a job that raised).

    Not a user error: jobs are built by our code from validated input, so an engine failure
    is a bug or a broken machine, and keeps its traceback."""


class EngineClosed(EngineError):
    """The engine was closed; it accepts no more jobs."""


class JobFailed(EngineError):
    """A job's computation raised; the message names the job and the cause."""


def _int_bytes(x: int | None) -> int:
    """Bytes of a non-negative integer operand (0 for ``None``: randomness the engine draws)."""
    return 0 if x is None else (int(x).bit_length() + 7) // 8


@dataclass(slots=True)
class Job:
    """One unit of offloaded work, with its sizes (see the module docstring). Payloads are
    plain integers (cheap to send to a worker process, no key objects): ``modexp``
    (base, exp, modulus); ``paillier.encrypt`` (n, hs, m, a or None) for DJN encryption;
    ``paillier.encrypt_classic`` (n, m, r or None) for textbook g^m r^n. ``None`` randomness
    is drawn by the engine."""

    kind: str
    payload: tuple[int | None, ...]
    id: int = field(default_factory=lambda: next(_job_ids))

    def __post_init__(self) -> None:
        if self.kind not in _PAYLOAD_LEN:
            raise ConfigError(f"unknown job kind {self.kind!r}; choose one of {', '.join(JOB_KINDS)}")
        if not isinstance(self.payload, tuple) or len(self.payload) != _PAYLOAD_LEN[self.kind]:
            raise ConfigError(f"a {self.kind} job needs a {_PAYLOAD_LEN[self.kind]}-tuple payload, got {self.payload!r}")
        _check_operands(self.kind, self.payload)

    @property
    def input_bytes(self) -> int:
        """Bytes of the operands the job sends: every integer of the payload."""
        return sum(_int_bytes(x) for x in self.payload)

    @property
    def output_bytes(self) -> int:
        """Bytes of the result that comes back: the size of the modulus it is reduced by
        (the modulus of a ``modexp``, n^2 for a Paillier ciphertext)."""
        if self.kind == "modexp":
            return _int_bytes(self.payload[2])
        n = self.payload[0]
        return _int_bytes(None if n is None else n * n)

    @classmethod
    def modexp(cls, base: int, exp: int, modulus: int) -> "Job":
        """base^exp mod modulus (checked as every job is, when it is made)."""
        return cls("modexp", (base, exp, modulus))

    @classmethod
    def encrypt(cls, pk: "PublicKey", m: int, a: int | None = None) -> "Job":
        """DJN encryption of m under a :class:`~cryptoffload.crypto.paillier.PublicKey`
        (m checked when the job is made, once)."""
        return cls("paillier.encrypt", (pk.n, pk.hs, m, a))

    @classmethod
    def encrypt_classic(cls, pk: "PublicKey", m: int, r: int | None = None) -> "Job":
        """Textbook g^m r^n mod n^2 (both modexps computed by the engine)."""
        return cls("paillier.encrypt_classic", (pk.n, m, r))


def _check_operands(kind: str, payload: tuple[int | None, ...]) -> None:
    """Where a job's operands are checked, once, whichever way the job was made: every operand
    an int (``None`` only for the randomness the engine draws), a modexp's modulus positive and
    its exponent non-negative, a plaintext in [0, n) (:func:`~cryptoffload.crypto.paillier.djn.
    check_plaintext`, the key's own words). The engine then computes without checking again,
    in this process or a worker's; a job the engine still fails (a DJN base h_s that is not a
    unit) fails alone, with :class:`JobFailed`."""
    for i, x in enumerate(payload):
        if (x is None and i == _DRAWN[kind]) or i == _PLAINTEXT[kind]:
            continue
        if isinstance(x, bool) or not isinstance(x, int):
            raise ConfigError(f"a {kind} job's operand {i} must be an int, got {type(x).__name__}")
    if kind == "modexp":
        _, exp, modulus = payload
        if modulus is None or exp is None or modulus <= 0 or exp < 0:
            raise ConfigError("modexp needs a positive modulus and a non-negative exponent")
        return
    n = payload[0]
    if n is None or n < 3:
        raise ConfigError(f"a {kind} job needs a Paillier modulus n > 2, got {n!r}")
    djn.check_plaintext(payload[_PLAINTEXT[kind]], n)


_PENDING, _DONE, _FAILED = 0, 1, 2


class JobFuture:
    """The eventual result of one job. Resolved by :meth:`Engine.poll`, whose thread runs the
    callbacks. ``submitted_at``/``completed_at`` are ``time.perf_counter()`` stamps taken at
    submission and when the poller delivered the response (client-side latency)."""

    __slots__ = ("job", "seq", "submitted_at", "completed_at", "_engine", "_state", "_value", "_callbacks", "_event")

    def __init__(self, job: Job, engine: "Engine | None" = None, seq: int = -1) -> None:
        self.job = job
        self.seq = seq
        self.submitted_at = time.perf_counter()
        self.completed_at = 0.0
        self._engine = engine
        self._state = _PENDING
        self._value: JobValue = None
        self._callbacks: list[Callable[[JobFuture], None]] | None = None
        self._event: threading.Event | None = None

    def done(self) -> bool:
        return self._state != _PENDING

    def add_done_callback(self, fn: Callable[["JobFuture"], None]) -> None:
        """Run ``fn(future)`` when resolved, in the polling thread (at once if already done)."""
        if self._state == _PENDING:
            with _callback_lock:
                if self._state == _PENDING:
                    if self._callbacks is None:
                        self._callbacks = []
                    self._callbacks.append(fn)
                    return
        fn(self)

    def _resolve(self, ok: bool, value: JobValue) -> None:
        with _callback_lock:
            if self._state != _PENDING:
                return
            self.completed_at = time.perf_counter()
            self._value = value
            self._state = _DONE if ok else _FAILED
            callbacks, self._callbacks = self._callbacks, None
            event = self._event
        if event is not None:
            event.set()
        for fn in callbacks or ():
            fn(self)

    def _wait_event(self, timeout: float | None) -> bool:
        with _callback_lock:
            if self._state != _PENDING:
                return True
            if self._event is None:
                self._event = threading.Event()
            event = self._event
        return event.wait(timeout)

    def exception(self, timeout: float | None = None) -> BaseException | None:
        self._wait(timeout)
        value = self._value
        return value if self._state == _FAILED and isinstance(value, BaseException) else None

    def result(self, timeout: float | None = None) -> int:
        """The job's integer result; polls the engine while waiting, so a lone caller never
        hangs. Raises the job's error, or ``TimeoutError``."""
        self._wait(timeout)
        value = self._value
        if isinstance(value, BaseException):
            raise value
        if value is None:   # resolved means a value or an error; None would be an engine bug
            raise EngineError(f"job {self.job.id} resolved without a result")
        return value

    def _wait(self, timeout: float | None) -> None:
        if self._state != _PENDING:
            return
        if self._engine is not None:
            self._engine.wait(self, timeout)
        elif not self._wait_event(timeout):
            raise TimeoutError("job did not complete in time")


# One lock for all futures' state changes: contention is low (the poller resolves, clients
# add callbacks) and it keeps each future at a handful of slots.
_callback_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class EngineStats:
    """Counters of one engine. ``ring_full_waits``: submissions that met a full request ring
    (back-pressure); ``batches``/``mean_batch``: how well the compute side amortised calls."""

    engine: str
    submitted: int
    completed: int
    failed: int
    in_flight: int
    ring_full_waits: int
    response_full_waits: int
    batches: int
    mean_batch: float
    largest_batch: int
    polls: int


class Engine(ABC):
    """Contract of an offload engine (see the module docstring for why it is polled).

    ``submit``/``submit_many`` return futures; ``poll`` delivers finished responses;
    ``close`` stops it (also on leaving a ``with`` block); ``stats`` reports counters.
    """

    name: str = "engine"

    @abstractmethod
    def submit(self, job: Job) -> JobFuture: ...

    def submit_many(self, jobs: Sequence[Job]) -> list[JobFuture]:
        return [self.submit(j) for j in jobs]

    @abstractmethod
    def poll(self, max_responses: int | None = None, timeout: float | None = 0.0, *, blocking: bool = True) -> int: ...

    @abstractmethod
    def wait(self, future: JobFuture, timeout: float | None = None) -> None: ...

    @abstractmethod
    def close(self, *, cancel_pending: bool = False) -> None: ...

    @abstractmethod
    def stats(self) -> EngineStats: ...

    @abstractmethod
    def add_response_listener(self, fn: Callable[[], None]) -> Callable[[], None]: ...

    def describe(self) -> str:
        return self.name

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(cancel_pending=exc[0] is not None)


# a request entry: (seq, kind, payload); a response entry: (seq, ok, value)
Request = tuple[int, str, tuple[int | None, ...]]
Response = tuple[int, bool, JobValue]
Outcome = tuple[bool, JobValue]

_WAIT_SLICE = 0.05


class BatchEngine(Engine):
    """Ring pair + dispatcher threads + poll-side delivery; subclasses supply ``_run_batch``.

    Parameters: ``workers`` dispatcher threads (each one batch in flight); ``max_batch`` jobs
    per native call; ``ring_capacity`` slots per ring; ``in_order`` delivers responses in
    submission order (QAT order preservation); ``block_when_full`` makes ``submit`` wait on a
    full request ring (polling meanwhile, so it cannot deadlock on a full response ring),
    else raise :class:`RingFull`; ``lanes`` rounds batches to SIMD lane groups.
    """

    name = "batch"

    def __init__(self, *, workers: int = 1, max_batch: int = 64, ring_capacity: int = 1024,
                 in_order: bool = False, block_when_full: bool = True, lanes: int = 1) -> None:
        for label, v in (("workers", workers), ("max_batch", max_batch), ("ring_capacity", ring_capacity)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ConfigError(f"{label} must be a positive integer, got {v!r}")
        self.workers = workers
        self.max_batch = max_batch
        self.in_order = in_order
        self.block_when_full = block_when_full
        self._requests: Ring[Request] = Ring(ring_capacity, name=f"{self.name}.requests")
        self._responses: Ring[Response] = Ring(max(2, ring_capacity), ordered=in_order, name=f"{self.name}.responses")
        self._take = share_of(workers, max_batch, lanes)
        self._pending: dict[int, JobFuture] = {}
        self._seq = 0
        # Sequence numbers enter the request ring in order (dense, as an ordered response ring
        # needs). Held only by submitters; pollers and dispatchers never take it, so a
        # submitter waiting on a full ring cannot stall the side that drains it.
        self._submit_lock = threading.RLock()
        self._count_lock = threading.Lock()
        self._poll_lock = threading.Lock()      # one poller at a time, as on a QAT instance
        self._done_cv = threading.Condition()   # wakes waiters whose response another thread polled
        self._listeners: list[Callable[[], None]] = []
        self._closed = False
        self._broken: BaseException | None = None
        self._threads: list[threading.Thread] = []
        self._counts = {"submitted": 0, "completed": 0, "failed": 0, "batches": 0, "batched": 0, "largest": 0, "polls": 0}

    # -- subclass hooks -----------------------------------------------------------------------
    @abstractmethod
    def _run_batch(self, worker: int, batch: list[Request]) -> list[Outcome]:
        """Compute one batch; one (ok, value) per request, in order."""

    def _worker_started(self, worker: int) -> None:
        """Called in dispatcher thread ``worker`` before it serves (pinning, warm-up)."""

    def _shutdown_backend(self) -> None:
        """Release what the subclass started (processes), after the dispatchers stopped."""

    def _start_dispatchers(self) -> None:
        for i in range(self.workers):
            t = threading.Thread(target=self._serve, args=(i,), name=f"{self.name}-dispatch-{i}", daemon=True)
            t.start()
            self._threads.append(t)

    # -- compute side -------------------------------------------------------------------------
    def _next_batch(self) -> list[Request]:
        return self._requests.get_many(self.max_batch, timeout=None, take=self._take)

    def _serve(self, worker: int) -> None:
        try:
            self._worker_started(worker)
        except BaseException as exc:  # noqa: BLE001 - reported through every pending job
            self._break(exc)
            return
        while True:
            try:
                batch = self._next_batch()
            except RingClosed:
                return
            try:
                outcomes = self._run_batch(worker, batch)
                if len(outcomes) != len(batch):
                    raise EngineError(f"{self.name}: a batch of {len(batch)} gave {len(outcomes)} results")
            except BaseException as exc:  # noqa: BLE001 - a broken backend fails its jobs, not the client
                self._push([(seq, False, JobFailed(f"{self.name}: {kind} job failed: {exc}")) for seq, kind, _ in batch])
                self._break(exc)
                return
            with self._count_lock:
                c = self._counts
                c["batches"] += 1
                c["batched"] += len(batch)
                c["largest"] = max(c["largest"], len(batch))
            self._push([(req[0], ok, val) for req, (ok, val) in zip(batch, outcomes)])

    def _push(self, responses: list[Response]) -> None:
        """Put responses, telling listeners after every run that fits: a batch larger than
        the free slots must not wait for room before anyone knows there is work to poll
        (an event-driven poller would never come, and the ring would never drain)."""
        ring = self._responses
        rest = responses
        waited = False
        while rest:
            try:
                put = ring.put_many(rest, block=False, seqs=[r[0] for r in rest] if self.in_order else None)
            except RingClosed:
                return
            if put:
                self._notify()
                rest = rest[put:]
            if rest:
                if not waited:
                    waited = True
                    ring.full_waits += 1
                ring.wait_not_full(_WAIT_SLICE, seq=rest[0][0] if self.in_order else None)

    def _notify(self) -> None:
        for fn in list(self._listeners):
            try:
                fn()
            except Exception:  # noqa: BLE001 - a listener whose loop has gone must not stop a dispatcher
                pass

    def _break(self, exc: BaseException) -> None:
        """A backend failure: stop taking work and fail everything queued behind it."""
        if self._broken is None:
            self._broken = exc
        self._requests.close()
        while True:
            try:
                batch = self._requests.get_many(None, timeout=0)
            except RingClosed:
                return
            self._push([(seq, False, JobFailed(f"{self.name} is broken: {exc}")) for seq, _, _ in batch])

    # -- client side --------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise EngineClosed(f"{self.name} engine is closed; create a new one to submit more jobs")
        if self._broken is not None:
            raise EngineError(f"{self.name} engine is broken: {self._broken}")

    def submit(self, job: Job) -> JobFuture:
        return self.submit_many([job])[0]

    def submit_many(self, jobs: Sequence[Job]) -> list[JobFuture]:
        """Submit jobs in order; waits (polling) or raises :class:`RingFull` on a full ring.
        With ``block_when_full=False`` jobs that did not fit are not submitted (their
        sequence numbers are never used)."""
        self._check_open()
        if not jobs:
            return []
        for j in jobs:
            if not isinstance(j, Job):
                raise ConfigError(f"submit takes Job objects, got {type(j).__name__}")
        futures: list[JobFuture] = []
        with self._submit_lock:
            i = 0
            waited = False
            while i < len(jobs):
                self._check_open()
                room = max(1, self._requests.capacity - len(self._requests))
                chunk = jobs[i:i + room]
                reqs: list[Request] = []
                fresh: list[JobFuture] = []
                for k, j in enumerate(chunk):
                    seq = self._seq + k
                    fresh.append(JobFuture(j, self, seq))
                    reqs.append((seq, j.kind, j.payload))
                for f in fresh:
                    self._pending[f.seq] = f
                try:
                    put = self._requests.put_many(reqs, block=False)
                except RingClosed:
                    put = 0
                for f in fresh[put:]:
                    del self._pending[f.seq]
                self._seq += put
                with self._count_lock:
                    self._counts["submitted"] += put
                futures.extend(fresh[:put])
                i += put
                if i == len(jobs):
                    break
                if self._requests.closed:
                    self._check_open()
                    raise EngineClosed(f"{self.name} engine stopped taking jobs")
                if not self.block_when_full:
                    if not futures:
                        raise RingFull(f"{self.name} request ring is full ({self._requests.capacity} slots)")
                    break
                if not waited:
                    waited = True
                    self._requests.full_waits += 1
                # back-pressure: deliver responses so the compute side can drain, then retry
                self.poll(blocking=False)
                self._requests.wait_not_full(0.005)
        return futures

    def add_response_listener(self, fn: Callable[[], None]) -> Callable[[], None]:
        """Call ``fn()`` (from an engine thread) whenever responses become pollable; returns
        a function that removes it. This is the event-driven alternative to busy polling
        (QAT offers it as a file descriptor); an asyncio loop uses it to wake its poller."""
        self._listeners.append(fn)

        def remove() -> None:
            try:
                self._listeners.remove(fn)
            except ValueError:
                pass

        return remove

    def poll(self, max_responses: int | None = None, timeout: float | None = 0.0, *, blocking: bool = True) -> int:
        """Deliver up to ``max_responses`` finished responses to their futures (callbacks run
        in this thread); waits up to ``timeout`` for the first (0: QAT-style non-blocking
        poll, None: until one arrives). ``blocking=False`` returns 0 at once if another
        thread is polling. Returns how many were delivered."""
        if not self._poll_lock.acquire(blocking):
            return 0
        try:
            return self._poll_locked(max_responses, timeout)
        finally:
            self._poll_lock.release()
            with self._done_cv:
                self._done_cv.notify_all()

    def _poll_locked(self, max_responses: int | None, timeout: float | None) -> int:
        try:
            got = self._responses.get_many(max_responses, timeout=timeout)
        except RingClosed:
            return 0
        if not got:
            return 0
        self._counts["polls"] += 1
        pending = self._pending
        failed = 0
        futs = [pending.pop(seq, None) for seq, _, _ in got]  # dict.pop is atomic under the GIL
        for fut, (_, ok, value) in zip(futs, got):
            if fut is not None:
                if not ok:
                    failed += 1
                fut._resolve(ok, value)
        with self._count_lock:
            self._counts["completed"] += len(got) - failed
            self._counts["failed"] += failed
        return len(got)

    def wait(self, future: JobFuture, timeout: float | None = None) -> None:
        """Until ``future`` is done: poll if no one else is (leader), else sleep until the
        poller delivers something or stops (follower). Raises ``TimeoutError``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not future.done():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise TimeoutError(f"job {future.job.id} did not complete within {timeout} s")
            slice_ = _WAIT_SLICE if left is None else min(_WAIT_SLICE, left)
            if self._poll_lock.acquire(blocking=False):
                try:
                    self._poll_locked(None, slice_)
                finally:
                    self._poll_lock.release()
                    with self._done_cv:
                        self._done_cv.notify_all()
            else:
                with self._done_cv:
                    self._done_cv.wait_for(lambda: future.done() or not self._poll_lock.locked(), slice_)
            if self._closed and not future.done() and not self._threads_alive() and not self._responses.ready:
                raise EngineClosed(f"{self.name} engine closed before job {future.job.id} completed")

    def wait_all(self, futures: Iterable[JobFuture], timeout: float | None = None) -> None:
        for f in futures:
            self.wait(f, timeout)

    def _threads_alive(self) -> bool:
        return any(t.is_alive() for t in self._threads)

    def close(self, *, cancel_pending: bool = False) -> None:
        """Stop taking jobs; finish (or with ``cancel_pending`` fail) the queued ones, deliver
        outstanding responses in this thread, stop the workers. Idempotent."""
        with self._submit_lock:
            if self._closed:
                return
            self._closed = True
            self._requests.close()
        if cancel_pending:
            while True:
                try:
                    batch = self._requests.get_many(None, timeout=0)
                except RingClosed:
                    break
                self._push([(seq, False, EngineClosed(f"{self.name} closed before the job ran")) for seq, _, _ in batch])
        while self._threads_alive():
            self.poll(timeout=0.01)
            for t in self._threads:
                t.join(0.001)
        self._shutdown_backend()
        while self.poll():
            pass
        self._responses.close()
        left = list(self._pending.values())
        self._pending.clear()
        for f in left:
            f._resolve(False, EngineClosed(f"{self.name} closed before the job completed"))
        with self._done_cv:
            self._done_cv.notify_all()

    def stats(self) -> EngineStats:
        c = dict(self._counts)
        return EngineStats(
            engine=self.name, submitted=c["submitted"], completed=c["completed"], failed=c["failed"],
            in_flight=c["submitted"] - c["completed"] - c["failed"],
            ring_full_waits=self._requests.full_waits, response_full_waits=self._responses.full_waits,
            batches=c["batches"], mean_batch=c["batched"] / c["batches"] if c["batches"] else 0.0,
            largest_batch=c["largest"], polls=c["polls"])
