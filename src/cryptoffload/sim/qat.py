"""Paillier encryption offloaded to an Intel QAT DH8970 card, after Zhou and Hua's QHCS paper.

Why the model has the parts it has. The paper compares five ways of encrypting 30,000 random
plaintexts with 1024-bit Paillier (c = g^m * r^n mod n^2, i.e. two modular exponentiations with
a 2048-bit modulus) on ONE Xeon D-1541 core, and explains every difference between them by
where the time goes, so the model has one part per explanation:

* **The card** (:class:`QatDevice`): ``engines`` compute engines that each run one modexp at a
  time, fed first come first served from a request ring; the paper says QAT balances the rings
  over its engines, which is a FIFO multi-server queue. Responses come back *in submission
  order* (QAT's order preservation, on by default), so a response only becomes visible to a
  poll once every earlier request on the ring is done. The ring is bounded: a submission that
  finds it full is refused (``CPA_STATUS_RETRY``) and the submitter must try again later, which
  costs CPU -- that is how the card back-pressures a client that keeps too much in flight.
* **The core** (a :class:`~cryptoffload.sim.devices.Device` with one server): every CPU-side
  action costs time -- building and submitting a request, one poll of the response ring,
  handling a response, a thread context switch (S2), a coroutine swap (QHCS), the Paillier
  pre/post-processing and, in software mode, the modexps themselves. The paper's whole argument
  is that the *CPU*, not the card, limits S2 and QHCS: S2 pays thread switches, QHCS replaces
  them by cheap coroutine swaps (1.76x S2), QHCS2 pays a few more swaps than QHCS1 (slightly
  lower throughput) but keeps half as many encryptions in flight (half the latency).
* **The clients**: one scheduler loop (:class:`_Loop`) covers the three ways the core
  interleaves work -- one thread busy-polling for its own response (S1), an OS run queue of
  blocked threads woken by a polling thread (S2), an application loop that polls and resumes
  coroutines from the response callbacks (QHCS1/QHCS2) -- differing only in what a switch costs
  and whether a callback resumes its task at once. Software mode (SW) is the core alone.

Why bursts rather than one SimPy event per CPU action: there is one core and one control flow
(the loop), so the order of CPU actions is fixed and the loop can compute each action's instant
itself; the card's side is FIFO, so a request's start, finish and visibility are known exactly
when it is submitted. Each pass of the loop is therefore charged to the core as one
``execute`` (one hold of the SimPy resource) while requests are submitted at their exact
instants inside it, and a stretch of fruitless polling (or of refused retries) is skipped in
closed form to the poll that finds the next response. The result is identical to simulating
each poll, and the paper's 30,000 encryptions run for all five modes in a few seconds.

Assumptions the paper does not settle: S2's synchronous calls are woken by one polling thread
that takes its turn in the OS run queue like the workers (QAT's synchronous mode is an
asynchronous call plus a wait, so something must poll); QHCS starts a new encryption as soon
as a coroutine ends, so it keeps exactly ``concurrency`` coroutines in flight and its latency
is that number over the throughput (Little's law); the ring counts a request from submission
until a poll retrieves its response, as the QAT driver's in-flight counter does.

The cost profile is ``profiles/qat_dh8970.toml``, turned into the model's inputs by
:mod:`cryptoffload.sim.qat_params` (cited card figures, CPU costs measured on this project's
machine, three values fitted to the paper and labelled so); the card is
:mod:`cryptoffload.sim.qat_card`.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Generator, Iterable

import numpy as np

from cryptoffload.checks import JsonDict
from cryptoffload.errors import ConfigError
from cryptoffload.sim.core import (
    LatencyStats,
    ProcessGenerator,
    Simulation,
    check_count,
)
from cryptoffload.sim.devices import FifoDevice
from cryptoffload.sim.qat_card import QatDevice, QatRequest
from cryptoffload.sim.qat_params import (
    CARD_SCALINGS,
    PROFILE_NAME,
    REQUIRED_PROFILE_FIELDS,
    ProfileLike,
    QatParams,
    load_qat_params,
)

QAT_DESIGNS = ("sw", "qat-s1", "qat-s2", "qhcs1", "qhcs2")
"""The paper's client implementations, in the order it presents them."""

PAPER_TARGETS: dict[str, dict[str, float]] = {
    # Derived from the ratios in the paper's text (Table 1 itself is not available): QHCS1 is
    # about 27,400 enc/s; QHCS1 = 1.76 x S2; S2 = 46 x S1 (latency 21 x S1); QHCS1 = 110 x SW;
    # QHCS1 latency 33 % below S2; QHCS2 latency half of QHCS1. Latencies in seconds.
    "sw": {"throughput_ops": 27_400 / 110},
    "qat-s1": {"throughput_ops": 27_400 / 1.76 / 46, "mean_latency_s": 46 * 1.76 / 27_400},
    "qat-s2": {"throughput_ops": 27_400 / 1.76, "mean_latency_s": 21 * 46 * 1.76 / 27_400},
    "qhcs1": {"throughput_ops": 27_400.0, "mean_latency_s": 0.67 * 21 * 46 * 1.76 / 27_400},
    "qhcs2": {"mean_latency_s": 0.5 * 0.67 * 21 * 46 * 1.76 / 27_400},
}


# -- the client side --------------------------------------------------------------------------
_CPU, _MODEXP = 0, 1
Op = tuple[Any, ...]  # (_CPU, seconds, category) or (_MODEXP, service_seconds)
TaskBody = Generator[Op, None, None]


class _Task:
    """A thread or coroutine: a generator of CPU and modexp steps, plus a refused step."""

    __slots__ = ("body", "pending")

    def __init__(self, body: TaskBody) -> None:
        self.body = body
        self.pending: Op | None = None


@dataclass(frozen=True)
class _LoopStyle:
    """What distinguishes S1, S2 and QHCS on the core.

    ``dispatch_s``: cost of running a task once (a thread switch, or a coroutine resume plus its
    yield back); ``poller_switch_s``: cost of switching to the polling thread after others ran
    (S2 only: QHCS polls from the application loop, S1 from the waiting thread itself);
    ``resume_in_callback``: QHCS callbacks resume their coroutine at once, whereas an S2
    callback only wakes a thread that the OS runs later.
    """

    dispatch_s: float
    dispatch_category: str
    poller_switch_s: float = 0.0
    resume_in_callback: bool = False


class _Loop:
    """The one core's control flow: run ready tasks, admit new jobs, poll; repeat.

    ``spawn`` is asked for the tasks of one new job, repeatedly, after the ready tasks have run
    (QHCS keeps a fixed number of coroutines in flight and starts each job at once, as
    ``ASYNC_start_job`` does); tasks given up front are threads that claim work themselves.
    """

    def __init__(
        self,
        sim: Simulation,
        cpu: FifoDevice,
        qat: QatDevice,
        p: QatParams,
        style: _LoopStyle,
        initial: Iterable[_Task] = (),
        spawn: Callable[[], list[_Task]] | None = None,
    ) -> None:
        self.sim, self.cpu, self.qat, self.p, self.style = sim, cpu, qat, p, style
        self.t = sim.now
        self.ready: deque[_Task] = deque(initial)
        self.spawn = spawn
        self.alive = len(self.ready)
        self.last_ran: object = None
        self.cpu_time: dict[str, float] = {}
        self.polls = 0

    def charge(self, seconds: float, category: str) -> None:
        self.t += seconds
        self.cpu_time[category] = self.cpu_time.get(category, 0.0) + seconds

    def _dispatch(self, task: _Task) -> bool:
        """Run ``task`` until it blocks on a modexp, is refused, or ends; ``True`` if it progressed."""
        st = self.style
        if st.dispatch_s and self.last_ran is not task:
            self.charge(st.dispatch_s, st.dispatch_category)
        self.last_ran = task
        op = task.pending
        progressed = op is None
        while True:
            if op is None:
                try:
                    op = next(task.body)
                except StopIteration:
                    self.alive -= 1
                    return True
            if op[0] == _CPU:
                self.charge(op[1], op[2])
                progressed = True
                op = None
                continue
            # The request is built first, then put on the ring: a refused one has cost as much.
            self.t += self.p.request_s
            accepted = self.qat.try_submit(self.t, op[1], task) is not None
            category = "submit" if accepted else "refused_submit"
            self.cpu_time[category] = self.cpu_time.get(category, 0.0) + self.p.request_s
            task.pending = None if accepted else op
            return progressed or accepted

    def _poll(self, retry: deque[_Task]) -> int:
        st = self.style
        if st.poller_switch_s and self.last_ran is not self:
            self.charge(st.poller_switch_s, st.dispatch_category)
        self.last_ran = self
        self.charge(self.p.poll_s, "poll")
        self.polls += 1
        responses = self.qat.poll(self.t)
        for r in responses:
            self.charge(self.p.callback_s, "callback")
            if st.resume_in_callback:
                self._run(r.owner, retry)
            else:
                self.ready.append(r.owner)
        return len(responses)

    def _run(self, task: _Task, retry: deque[_Task]) -> bool:
        alive_before = self.alive
        progressed = self._dispatch(task)
        if self.alive < alive_before:
            self._refill(retry)
        elif task.pending is not None:
            retry.append(task)
        return progressed

    def _refill(self, retry: deque[_Task]) -> bool:
        """Start new jobs while ``spawn`` allows; ``True`` if any started.

        Called whenever a task ends, so a freed coroutine slot is reused at once (the
        application keeps its coroutines in flight) rather than after the whole poll batch,
        which would leave slots idle for as long as the batch takes to handle.
        """
        if self.spawn is None:
            return False
        started = False
        while new := self.spawn():
            self.alive += len(new)
            started = True
            for task in new:
                self._run(task, retry)
        return started

    def process(self) -> ProcessGenerator:
        """The SimPy process: one ``cpu.execute`` per productive pass of the loop."""
        while True:
            progressed = False
            retry: deque[_Task] = deque()
            ready, self.ready = self.ready, deque()
            for task in ready:
                progressed |= self._run(task, retry)
            progressed |= self._refill(retry)
            if self.alive == 0 and self.qat.outstanding == 0:
                break
            progressed |= self._poll(retry) > 0
            self.ready.extend(retry)
            if not progressed:
                tv = self.qat.next_visible
                if tv is None:  # a bug, not a user error: a task waits on nothing
                    raise RuntimeError("QAT model stalled: tasks wait but nothing is outstanding on the card")
                self._skip_fruitless_passes(tv, len(self.ready))
                continue  # the pass that finds the response is charged together with these
            yield from self._sync()
        yield from self._sync()

    def _sync(self) -> ProcessGenerator:
        """Hold the core for the CPU time the loop has charged since the last sync."""
        if self.t > self.sim.now:
            yield from self.cpu.execute(self.t - self.sim.now)
        self.t = max(self.t, self.sim.now)

    def _skip_fruitless_passes(self, visible_at: float, n_retry: int) -> None:
        """Skip, in closed form, passes identical to the one just made (nothing polled, every
        retry refused) up to the one whose poll ends at or after ``visible_at``.

        Identical because nothing changed: the same tasks are refused by the same full ring,
        at the same switch costs, and the poll finds nothing until ``visible_at``.
        """
        st = self.style
        switches = n_retry * st.dispatch_s + (st.poller_switch_s if n_retry else 0.0)
        pass_s = self.p.poll_s + n_retry * self.p.request_s + switches
        k = math.ceil((visible_at - self.t) / pass_s) - 1
        if k <= 0:
            return
        self.polls += k
        self.qat.refused += k * n_retry
        self.charge(k * self.p.poll_s, "poll")
        self.charge(k * n_retry * self.p.request_s, "refused_submit")
        if switches:
            self.charge(k * switches, st.dispatch_category)


# -- results ----------------------------------------------------------------------------------
@dataclass
class QatRunResult:
    """What the paper reports per implementation, plus the counters that explain it."""

    mode: str
    encryptions: int
    concurrency: int
    span_s: float
    throughput_ops: float
    mean_latency_s: float
    p99_latency_s: float
    engine_utilisation: float
    cpu_utilisation: float
    latency: LatencyStats
    modexps: int = 0
    polls: int = 0
    ring_refusals: int = 0
    max_outstanding: int = 0
    cpu_time: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> JsonDict:
        return asdict(self)


def _result(
    mode: str,
    sim: Simulation,
    cpu: FifoDevice,
    qat: QatDevice | None,
    n: int,
    concurrency: int,
    kind: str,
    cpu_time: dict[str, float],
    polls: int = 0,
) -> QatRunResult:
    span = sim.now
    lat = sim.metrics.latency(kind)
    return QatRunResult(
        mode=mode,
        encryptions=n,
        concurrency=concurrency,
        span_s=span,
        throughput_ops=sim.metrics.throughput(kind),
        mean_latency_s=lat.mean,
        p99_latency_s=lat.p99,
        engine_utilisation=0.0 if qat is None else qat.utilisation(span),
        cpu_utilisation=cpu.utilisation(span),
        latency=lat,
        modexps=0 if qat is None else qat.submitted,
        polls=polls,
        ring_refusals=0 if qat is None else qat.refused,
        max_outstanding=0 if qat is None else qat.max_outstanding,
        cpu_time={k: v for k, v in sorted(cpu_time.items()) if v > 0},
    )


# -- the five implementations -----------------------------------------------------------------
def _plaintext_bits(sim: Simulation, p: QatParams, n: int, random_exponents: bool) -> np.ndarray:
    """Bit length of each plaintext m (the exponent of g^m).

    A uniform random m below a key_bits-bit n has key_bits - k bits with probability about
    2^-(k+1), so a few encryptions have noticeably shorter first modexps; with
    ``random_exponents=False`` every m is full length (closed-form checks).
    """
    if not random_exponents:
        return np.full(n, float(p.key_bits))
    short = sim.rng.geometric(0.5, n) - 1
    return np.maximum(1, p.key_bits - short).astype(float)


def _modexp_services(p: QatParams, base_s: float, m_bits: np.ndarray) -> tuple[np.ndarray, float]:
    """Service of g^m (per plaintext) and of r^n (exponent n: always key_bits long)."""
    mod_bits = 2 * p.key_bits  # everything is mod n^2
    gm = np.array([p.modexp_time(base_s, mod_bits, b) for b in m_bits])
    return gm, p.modexp_time(base_s, mod_bits, p.key_bits)


def _sw(
    sim: Simulation, cpu: FifoDevice, p: QatParams, n: int, m_bits: np.ndarray
) -> tuple[ProcessGenerator, dict[str, float]]:
    gm, rn = _modexp_services(p, p.sw_modexp_s, m_bits)
    cpu_time = {"paillier": 0.0, "sw_modexp": 0.0}

    def proc() -> ProcessGenerator:
        # libhcs on one core: nothing to overlap, so an encryption is one hold of the core.
        for i in range(n):
            start = sim.now
            yield from cpu.execute(p.paillier_pre_s + float(gm[i]) + rn + p.paillier_post_s)
            sim.metrics.record("encryption", start, sim.now)
            cpu_time["paillier"] += p.paillier_pre_s + p.paillier_post_s
            cpu_time["sw_modexp"] += float(gm[i]) + rn

    return proc(), cpu_time


class _Work:
    """Hands out encryption indices to whichever thread or coroutine asks next."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.next = 0

    def claim(self) -> int | None:
        if self.next >= self.n:
            return None
        self.next += 1
        return self.next - 1


def _thread_body(
    loop_ref: list[_Loop], sim: Simulation, p: QatParams, work: _Work, gm: np.ndarray, rn: float
) -> TaskBody:
    """A synchronous caller (S1, S2): encrypt, blocking on each modexp, until work runs out.

    ``loop_ref`` because the threads exist before the loop that runs them.
    """
    while (i := work.claim()) is not None:
        loop = loop_ref[0]
        start = loop.t
        yield (_CPU, p.paillier_pre_s, "paillier")
        yield (_MODEXP, float(gm[i]))
        yield (_MODEXP, rn)
        yield (_CPU, p.paillier_post_s, "paillier")
        sim.metrics.record("encryption", start, loop.t)


def _qhcs1_body(loop: _Loop, sim: Simulation, p: QatParams, gm: float, rn: float) -> TaskBody:
    """One coroutine per encryption: modexp 1, yield, modexp 2, yield, post-process."""
    start = loop.t
    yield (_CPU, p.paillier_pre_s, "paillier")
    yield (_MODEXP, gm)
    yield (_MODEXP, rn)
    yield (_CPU, p.paillier_post_s, "paillier")
    sim.metrics.record("encryption", start, loop.t)


def _qhcs2_tasks(loop: _Loop, sim: Simulation, p: QatParams, gm: float, rn: float) -> list[_Task]:
    """Two coroutines per encryption, submitting back to back; whichever result arrives last
    post-processes (with in-order responses that is always the second, as in the paper)."""
    state = {"start": 0.0, "remaining": 2}

    def half(first: bool, service: float) -> TaskBody:
        if first:  # the first coroutine starts the encryption and draws r (pre-processing)
            state["start"] = loop.t
            yield (_CPU, p.paillier_pre_s, "paillier")
        yield (_MODEXP, service)
        state["remaining"] -= 1
        if state["remaining"] == 0:
            yield (_CPU, p.paillier_post_s, "paillier")
            sim.metrics.record("encryption", state["start"], loop.t)

    return [_Task(half(True, gm)), _Task(half(False, rn))]


def _check_mode_concurrency(mode: str, concurrency: int | None, p: QatParams) -> int:
    if mode not in QAT_DESIGNS:
        raise ConfigError(f"unknown QAT mode {mode!r} (choose from {', '.join(QAT_DESIGNS)})")
    if mode in ("sw", "qat-s1"):
        if concurrency is not None and check_count("concurrency", concurrency) != 1:
            raise ConfigError(f"mode {mode!r} is single-threaded: concurrency must be 1 or omitted, got {concurrency!r}")
        return 1
    if concurrency is None:
        return p.s2_threads if mode == "qat-s2" else p.qhcs_coroutines
    what = "threads" if mode == "qat-s2" else "coroutines in flight"
    c = check_count(f"concurrency ({what})", concurrency)
    if mode == "qhcs2" and c < 2:
        raise ConfigError(f"mode 'qhcs2' runs two coroutines per encryption: concurrency must be >= 2, got {c}")
    return c


def simulate_mode(
    mode: str,
    profile: ProfileLike = None,
    n_encryptions: int | None = None,
    concurrency: int | None = None,
    seed: int = 0,
    *,
    random_exponents: bool = True,
) -> QatRunResult:
    """Encrypt ``n_encryptions`` plaintexts with one of the paper's five implementations.

    ``concurrency`` is the number of threads for ``qat-s2`` (default: the paper's best, 1000)
    and the number of coroutines kept in flight for ``qhcs1``/``qhcs2`` (default: the
    profile's ``workload.qhcs_coroutines``; QHCS2 uses two per encryption); ``sw`` and
    ``qat-s1`` are single-threaded. ``n_encryptions`` defaults to the paper's 30,000.
    """
    p = load_qat_params(profile)
    c = _check_mode_concurrency(mode, concurrency, p)
    n = check_count("n_encryptions", p.encryptions if n_encryptions is None else n_encryptions)
    sim = Simulation(seed)
    cpu = FifoDevice(sim, "cpu", servers=1)
    m_bits = _plaintext_bits(sim, p, n, random_exponents)

    if mode == "sw":
        proc, cpu_time = _sw(sim, cpu, p, n, m_bits)
        sim.process(proc)
        sim.run()
        return _result(mode, sim, cpu, None, n, c, "encryption", cpu_time)

    qat = QatDevice(sim, "qat", p.engines, p.ring_capacity)
    gm, rn = _modexp_services(p, p.modexp_s, m_bits)
    work = _Work(n)
    if mode in ("qat-s1", "qat-s2"):
        loop_ref: list[_Loop] = []
        threads = [_Task(_thread_body(loop_ref, sim, p, work, gm, rn)) for _ in range(c)]
        if mode == "qat-s1":
            # One thread busy-polling for its own response: it carries on the moment it sees
            # it, and there is nothing to switch between.
            style = _LoopStyle(0.0, "thread_switch", resume_in_callback=True)
        else:
            # Blocked threads are woken by a polling thread; every change of running thread,
            # the poller's included, is an OS context switch.
            style = _LoopStyle(p.thread_switch_s, "thread_switch", poller_switch_s=p.thread_switch_s)
        loop = _Loop(sim, cpu, qat, p, style, initial=threads)
        loop_ref.append(loop)
    else:
        per_job = 1 if mode == "qhcs1" else 2

        def spawn() -> list[_Task]:
            # The application starts a new encryption whenever enough coroutines are free.
            if loop.alive + per_job > c or (i := work.claim()) is None:
                return []
            if per_job == 1:
                return [_Task(_qhcs1_body(loop, sim, p, float(gm[i]), rn))]
            return _qhcs2_tasks(loop, sim, p, float(gm[i]), rn)

        # A coroutine run is a swap in plus a swap out (ASYNC_start_job / ASYNC_pause_job).
        style = _LoopStyle(2 * p.coroutine_switch_s, "coroutine_switch", resume_in_callback=True)
        loop = _Loop(sim, cpu, qat, p, style, spawn=spawn)
    sim.process(loop.process())
    sim.run()
    if sim.metrics.count("encryption") != n:  # a bug, not a user error
        raise RuntimeError(f"{mode}: only {sim.metrics.count('encryption')} of {n} encryptions completed")
    return _result(mode, sim, cpu, qat, n, c, "encryption", loop.cpu_time, loop.polls)


def simulate_all(
    profile: ProfileLike = None, n_encryptions: int | None = None, seed: int = 0
) -> dict[str, QatRunResult]:
    """The paper's Table 1 experiment: every mode at its default concurrency."""
    p = load_qat_params(profile)
    return {m: simulate_mode(m, p, n_encryptions, None, seed) for m in QAT_DESIGNS}


def simulate_modexp_offload(
    profile: ProfileLike = None,
    n_requests: int = 10_000,
    in_flight: int | None = None,
    *,
    modulus_bits: int = 2048,
    exponent_bits: int = 1024,
    seed: int = 0,
) -> QatRunResult:
    """Independent modexps offloaded QHCS-style (coroutines, polling loop), one per job.

    The generic comparison point for a real offload engine: it isolates the card plus the
    per-request CPU cost of submit, poll, callback and coroutine swaps, without Paillier.
    Throughput is in modexps per second; ``encryptions`` in the result counts requests.
    """
    p = load_qat_params(profile)
    n = check_count("n_requests", n_requests)
    c = p.qhcs_coroutines if in_flight is None else check_count("in_flight", in_flight)
    service = p.modexp_time(
        p.modexp_s, check_count("modulus_bits", modulus_bits), check_count("exponent_bits", exponent_bits)
    )
    sim = Simulation(seed)
    cpu = FifoDevice(sim, "cpu", servers=1)
    qat = QatDevice(sim, "qat", p.engines, p.ring_capacity)
    work = _Work(n)

    def body() -> TaskBody:
        start = loop.t
        yield (_MODEXP, service)
        sim.metrics.record("modexp", start, loop.t)

    def spawn() -> list[_Task]:
        if loop.alive >= c or work.claim() is None:
            return []
        return [_Task(body())]

    style = _LoopStyle(2 * p.coroutine_switch_s, "coroutine_switch", resume_in_callback=True)
    loop = _Loop(sim, cpu, qat, p, style, spawn=spawn)
    sim.process(loop.process())
    sim.run()
    return _result("modexp-offload", sim, cpu, qat, n, c, "modexp", loop.cpu_time, loop.polls)


__all__ = [
    "CARD_SCALINGS",
    "QAT_DESIGNS",
    "PROFILE_NAME",
    "PAPER_TARGETS",
    "QatDevice",
    "QatParams",
    "QatRequest",
    "QatRunResult",
    "REQUIRED_PROFILE_FIELDS",
    "load_qat_params",
    "simulate_all",
    "simulate_mode",
    "simulate_modexp_offload",
]
