"""Run a BSGS matrix-vector product split over devices, with real CKKS ciphertexts, on Dask.

Why: :mod:`cryptoffload.workloads.bsgs` splits the product over ``N`` devices and
:mod:`cryptoffload.sim.op_dag` prices the split; this module *executes* the same
:class:`~cryptoffload.workloads.bsgs.Split` -- device ``d`` is Dask worker ``d`` (round-robin
when there are more devices than workers) -- so the model can be checked against a run.

Setup (not timed; :attr:`BsgsRunResult.setup_s`): the client's public context (evaluation
keys, never the secret key: its frame is checked before it leaves the client, and a worker
refuses any other) is scattered once to every worker that does not already hold it,
and each worker keeps the rebuilt backend in a module-level cache keyed by a digest of the
context, so later runs with the same keys skip it. Each device receives only the diagonals of
its own giant steps and encodes its plaintexts (:func:`~cryptoffload.workloads.bsgs.giant_plaintext`)
at the input's level and scale; the serialised input ciphertext goes to every worker and is
deserialised there (the model's "input resident on every device").

Timed phase, Dask tasks each pinned to its device's worker:

* ``baby`` -- the rotations of :attr:`DeviceShare.baby` (``rotate``, one after another, one
  key switch per key the rotation applies): with ``batched=True`` (the default) one task per
  group of :func:`~cryptoffload.workloads.bsgs.sent_batches` (the baby steps that go to one
  set of devices, serialised at the end of the task) and one for those that stay; with
  ``batched=False`` one task per baby step that another device needs, so it can leave as soon
  as it exists. Batched is faster here: every task and every message costs the scheduler
  and the workers' event loops CPU time (measured: a 2-worker broadcast product at bs = 16
  with a task per baby step used ~100 ms more worker CPU and ~35 ms more scheduler CPU than
  the replicated one, for 33 tasks and 16 messages instead of 5 and 1), and on a machine
  whose cores the workers share that time is taken from the compute; while a worker's
  compute thread runs SEAL (which holds the GIL) its event loop waits up to a switch
  interval (5 ms) each time it wakes, so a message to or from a busy worker is slow. With
  ``hoisted=True`` (only for a backend that hoists; SEAL does not) one task per device runs
  ``rotate_many``.
* ``recv`` -- one task per ``(src, dst)`` and task that made the bytes on ``src`` (a batch:
  :attr:`Split.baby_sends` grouped), on ``dst``: Dask moves the serialised ciphertexts
  between the worker processes in one message, the task deserialises them (and passes the
  bytes on when ``dst`` forwards them, as in ``split-giant``'s tree).
* ``giant`` -- one task per device: every giant step of the device (``mul_plain`` by each
  baby step, ``add``, ``rescale``, the giant rotation) summed into its partial -- the BSGS
  kernel's :func:`~cryptoffload.crypto.ckks.bsgs.giant_sums`, as the HE-CNN layers and the
  model's DAG run it; serialised when the partial is sent.
* ``reduce`` -- one task per ``(src, dst)`` of :attr:`Split.reduction`, on ``dst``: receive,
  deserialise and add ``src``'s partial. The last task on device 0 serialises the result.

The whole run is submitted as one graph (:meth:`DaskRunner.submit_graph`; submitted one by
one, tasks reach the workers in 10 ms waves), with priorities so that each worker runs what
it has ready in this order: baby steps others wait for, received baby steps, its own baby
steps, giant steps, reduction. Ciphertexts cross processes only as serialised bytes, moved
by Dask; between tasks of one device they stay live in a worker-local store. Every task
records its worker-side start and end with ``time.monotonic()`` (``CLOCK_MONOTONIC``, one
clock for every process of a Linux machine) and its op counts. ``wall_s`` is the client's
clock from the submission to the result's task being done; ``span_s`` is worker-side, from
the first task's start to the last task's end (it leaves out the submission and the last
notification). Dask's own cost between dependent tasks (a scheduler round trip, 2-3 ms on a
2-core machine) is in both; :func:`cryptoffload.calibrate.ckks.calibrate_ckks` measures
it (``overhead.task_s``).
"""

from __future__ import annotations

import sys
import time
import uuid
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from cryptoffload.crypto.ckks import Ciphertext, CkksBackend, CkksError, Plaintext
from cryptoffload.crypto.ckks.batched import BatchedOps
from cryptoffload.crypto.ckks.bsgs import baby_rotations, giant_sums
from cryptoffload.crypto.ckks.timing import timed
from cryptoffload.engines import ckks_workers
from cryptoffload.engines.dask import DaskRunner, Pending, Task
from cryptoffload.errors import ConfigError
from cryptoffload.workloads.bsgs import BsgsShape, Split, bsgs_plain, giant_plaintext, sent_batches

__all__ = ["SWITCH_INTERVAL_S", "BsgsRunResult", "TaskRecord", "run_bsgs", "verify", "worker_switch_interval"]

OP_NAMES = ("rotate", "key_switch", "pmul", "add", "rescale", "serialize", "deserialize")


#: The GIL switch interval of a worker process while it runs BSGS products (Python's default
#: is 5 ms). SEAL holds the GIL through each op (a thread waking while rotations run waited
#: 6.9 ms with the default, 2.0 ms with 0.5 ms); meanwhile the worker's event loop, which moves
#: ciphertexts and tells the scheduler that a task is done, waits up to a switch interval each
#: time it wakes. One ciphertext leaving a worker that went on computing took 19 ms with the
#: default, 9-12 ms with 1 ms, 4.5 ms out of an idle worker (producer end to consumer start,
#: medians, calibrate.ckks.measure_link on the 2-core development machine at load 1).
SWITCH_INTERVAL_S = 0.001

# ---- worker side -------------------------------------------------------------------------------
# Module-level state of a worker process (these functions run there, pickled by reference). The
# backends rebuilt from the client's public context live in :mod:`.ckks_workers` (shared with
# the bootstrap stages' execution); the names below are this module's for them.
_BACKENDS = ckks_workers.BACKENDS
_worker_has_backend = ckks_workers.has_backend
_worker_load_backend = ckks_workers.load_backend
_backend = ckks_workers.backend


@dataclass
class _Alive:
    """What one device's tasks keep alive within one repeat: the baby steps it holds (made or
    received) and its partial sum."""

    baby: dict[int, Ciphertext] = field(default_factory=dict)
    partial: Ciphertext | None = None


@dataclass(kw_only=True)
class _Run(ckks_workers.WorkerSession[_Alive]):
    """A worker's state of one run: besides the shared part (digest, what each device keeps
    alive per repeat, the task records per repeat), the input and each device's plaintexts."""

    input: Ciphertext
    plain: dict[int, dict[tuple[int, int], Plaintext]] = field(default_factory=dict)


_R = TypeVar("_R")


def _worker_setup(digest: str, run_id: str, device: int, shape: BsgsShape, giants: tuple[int, ...],
                  rows: dict[int, np.ndarray], ct_bytes: bytes) -> float:
    """Deserialise the input once per worker and encode this device's plaintexts at its level
    and scale; returns the seconds it took."""
    t0 = time.monotonic()
    be = _backend(digest)
    if run_id not in ckks_workers.SESSIONS:
        ckks_workers.SESSIONS[run_id] = _Run(digest=digest, input=be.deserialize_ciphertext(ct_bytes))
    st = ckks_workers.session(run_id, _Run)
    ct = st.input
    st.plain[device] = {(j, i): be.encode(giant_plaintext(rows, shape, j, i), like=ct)
                           for j in giants for i in shape.babies_of(j)}
    return time.monotonic() - t0


def worker_switch_interval(seconds: float) -> float:
    """Set this worker process's GIL switch interval; returns the one it replaces."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(seconds)
    return old


class _Task(BatchedOps[Ciphertext, Plaintext]):
    """Worker-side bookkeeping of one timed task: its clock, op counts and live store. The BSGS
    kernel runs on the task, which counts each op and hands it to the worker's backend (a
    recording backend would cost more than a ciphertext addition per op)."""

    def __init__(self, run_id: str, rep: int, device: int, kind: str, label: str) -> None:
        self.start = time.monotonic()
        self.st = ckks_workers.session(run_id, _Run)
        self.be = _backend(self.st.digest)
        self.live = self.st.live.setdefault((rep, device), _Alive())
        self.rep, self.device, self.kind, self.label = rep, device, kind, label
        self.ops = dict.fromkeys(OP_NAMES, 0)
        self.op_s = dict.fromkeys(OP_NAMES, 0.0)
        self.bytes_in = 0

    def _timed(self, name: str, fn: Callable[..., _R], *args: object) -> _R:
        """Run one op and add its time on the worker's device (waited for: on a GPU backend the
        kernels, not their launch; :func:`~cryptoffload.crypto.ckks.timing.timed`)."""
        with timed(self.be) as t:
            out = fn(*args)
        self.op_s[name] += t.seconds
        return out

    def rotate(self, ct: Ciphertext, step: int) -> Ciphertext:
        self.ops["rotate"] += 1
        self.ops["key_switch"] += len(self.be.rotation_plan(step))
        return self._timed("rotate", self.be.rotate, ct, step)

    def rotate_many(self, ct: Ciphertext, steps: Sequence[int]) -> list[Ciphertext]:
        self.ops["rotate"] += len(steps)
        self.ops["key_switch"] += sum(len(self.be.rotation_plan(s)) for s in steps)
        return self._timed("rotate", self.be.rotate_many, ct, steps)

    def mul_plain(self, ct: Ciphertext, pt: Plaintext) -> Ciphertext:
        self.ops["pmul"] += 1
        return self._timed("pmul", self.be.mul_plain, ct, pt)

    def add(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        self.ops["add"] += 1
        return self._timed("add", self.be.add, a, b)

    def rescale(self, ct: Ciphertext) -> Ciphertext:
        self.ops["rescale"] += 1
        return self._timed("rescale", self.be.rescale, ct)

    def serialize(self, ct: Ciphertext) -> bytes:
        self.ops["serialize"] += 1
        return self._timed("serialize", self.be.serialize_ciphertext, ct)

    def deserialize(self, data: bytes) -> Ciphertext:
        self.ops["deserialize"] += 1
        self.bytes_in += len(data)
        return self._timed("deserialize", self.be.deserialize_ciphertext, data)

    def done(self) -> None:
        self.st.record(self.rep, ckks_workers.WorkerRecord(self.device, self.kind, self.label, self.start,
                                                           time.monotonic(), self.ops, self.bytes_in, self.op_s))


def _task_baby(run_id: str, rep: int, device: int, babies: tuple[int, ...], stride: int,
               send: tuple[int, ...], hoisted: bool) -> dict[int, bytes]:
    t = _Task(run_id, rep, device, "baby", " ".join(map(str, babies)))
    slots = t.be.slots
    ct = t.st.input
    outs = baby_rotations(t, ct, [(i * stride) % slots for i in babies], hoisted=hoisted)
    t.live.baby.update(zip(babies, outs))
    out = {i: t.serialize(c) for i, c in zip(babies, outs) if i in send}
    t.done()
    return out


def _task_recv(run_id: str, rep: int, device: int, src: int, babies: tuple[int, ...],
               payload: dict[int, bytes], forward: tuple[int, ...]) -> dict[int, bytes]:
    t = _Task(run_id, rep, device, "recv", f"baby {' '.join(map(str, babies))} from {src}")
    for i in babies:
        t.live.baby[i] = t.deserialize(payload[i])
    t.done()
    return {i: payload[i] for i in forward}


def _task_giant(run_id: str, rep: int, device: int, shape: BsgsShape, giants: tuple[int, ...],
                after: Sequence[object], out: bool) -> bytes | None:
    del after   # only orders this task after the baby steps it uses
    t = _Task(run_id, rep, device, "giant", " ".join(map(str, giants)))
    plain = t.st.plain[device]
    rows = {j: [plain[(j, i)] for i in shape.babies_of(j)] for j in giants}
    acc = giant_sums(t, {0: t.st.input, **t.live.baby}, rows, shape.giant_steps(), giants)
    assert acc is not None
    t.live.partial = acc
    data = t.serialize(acc) if out else None
    t.done()
    return data


def _task_reduce(run_id: str, rep: int, device: int, src: int, incoming: bytes, after: object,
                 out: bool) -> bytes | None:
    del after   # orders this task after the one that made this device's partial
    t = _Task(run_id, rep, device, "reduce", f"from {src}")
    other = t.deserialize(incoming)
    assert t.live.partial is not None   # the giant task this one is ordered after made it
    t.live.partial = t.add(t.live.partial, other)
    data = t.serialize(t.live.partial) if out else None
    t.done()
    return data


# ---- client side -------------------------------------------------------------------------------

@dataclass(frozen=True)
class TaskRecord:
    """One timed task: where, what, when (worker-side ``time.monotonic()``), which ops, and the
    serialised bytes it received from another device (``recv`` and ``reduce``)."""

    device: int
    worker: str
    kind: str            # baby, recv, giant, reduce
    label: str
    start: float
    end: float
    ops: Mapping[str, int]
    bytes_in: int
    op_s: Mapping[str, float] = field(default_factory=dict)   # seconds spent in each op kind

    @property
    def seconds(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class BsgsRunResult:
    """One distributed BSGS product (the median repeat, see :func:`run_bsgs`).

    ``result``: the product's ciphertext, serialised (on device 0 at the end). ``wall_s``:
    client clock, graph submission to the result task done. ``span_s``: worker clocks,
    first task start to last task end. ``busy_s[d]``: seconds device ``d``'s tasks ran.
    ``bytes_moved`` / ``transfers``: serialised ciphertexts sent between devices (baby steps
    and partial sums), in ``messages`` task results (a batch of baby steps is one), of which
    ``local_transfers`` stayed in one worker process because two devices shared it.
    ``ops[d]``: op counts of device ``d`` (``key_switch`` counts the keys rotations applied:
    more than ``rotate`` where a step has no key of its own); each record's ``op_s`` says
    how long its ops took.
    ``wall_all``/``span_all``: every reported repeat, in run order."""

    result: bytes = field(repr=False)
    wall_s: float
    span_s: float
    busy_s: tuple[float, ...]
    bytes_moved: int
    transfers: int
    messages: int
    local_transfers: int
    devices: int
    workers: int
    device_workers: tuple[str, ...]
    shared_workers: bool
    strategy: str
    bs: int
    diagonals: int
    hoisted: bool
    tasks: int
    ops: tuple[Mapping[str, int], ...]
    repeats: int
    wall_all: tuple[float, ...]
    span_all: tuple[float, ...]
    setup_s: float
    note: str = ""
    records: tuple[TaskRecord, ...] = field(default=(), repr=False)


_ctx_digest = ckks_workers.context_digest
_public_context = ckks_workers.public_context


def _check(runner: object, backend: object, diagonals: object, shape: object, sp: object, ct: object, repeats: object,
           warmup: object, hoisted: bool) -> tuple[np.ndarray, bytes, bytes]:
    """Validate the inputs; ``(diagonals as an array, input bytes, public context)``."""
    if not isinstance(runner, DaskRunner):
        raise ConfigError(f"runner must be a DaskRunner, got {type(runner).__name__}")
    if not isinstance(backend, CkksBackend):
        raise ConfigError(f"backend must be a CkksBackend, got {type(backend).__name__}")
    if not isinstance(shape, BsgsShape):
        raise ConfigError(f"shape must be a BsgsShape, got {type(shape).__name__}")
    if not isinstance(sp, Split):
        raise ConfigError(f"sp must be a Split (workloads.bsgs.split), got {type(sp).__name__}")
    if sp.shape != shape:
        raise ConfigError(f"the split was made for another shape ({sp.shape}), not {shape}")
    for name, v, lo in (("repeats", repeats, 1), ("warmup", warmup, 0)):
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise ConfigError(f"{name} must be an integer >= {lo}, got {v!r}")
    slots = backend.slots
    if shape.slots != slots:
        raise ConfigError(f"the shape has slots = {shape.slots} but the {backend.name} backend has {slots} "
                          f"(N = {backend.params.poly_modulus_degree}); build BsgsShape(..., slots={slots})")
    try:
        diag = np.asarray(diagonals, dtype=np.float64)
    except (TypeError, ValueError):
        raise ConfigError("the diagonals must be a real array of shape (C, slots)") from None
    if diag.ndim != 2 or diag.shape[0] < shape.diagonals or diag.shape[1] != slots:
        raise ConfigError(f"the diagonals must have shape ({shape.diagonals}, {slots}) (C, slots), "
                          f"got {diag.shape}")
    if not np.all(np.isfinite(diag)):
        raise ConfigError("the diagonals must be finite")
    if hoisted and not backend.hoists_rotations:
        raise ConfigError(f"the {backend.name} backend has no hoisted rotations; run with hoisted=False")
    ct_bytes = ckks_workers.input_bytes(backend, ct, shape.level, f"but the shape says level={shape.level}; build the "
                                        "BsgsShape at the ciphertext's level")
    ckks_workers.check_rotation_keys(backend, shape.rotation_steps(), f"keygen(rotations={shape.rotation_steps()}) "
                                     "makes every key the product uses")
    return diag, ct_bytes, _public_context(backend)


def run_bsgs(runner: DaskRunner, backend: CkksBackend, diagonals: ArrayLike, shape: BsgsShape, sp: Split,
             ct: Ciphertext, *, repeats: int = 1, warmup: int = 1, hoisted: bool = False,
             batched: bool = True, switch_interval_s: float | None = SWITCH_INTERVAL_S) -> BsgsRunResult:
    """Run the product ``sp`` (a :func:`~cryptoffload.workloads.bsgs.split` of ``shape``) of the
    matrix with ``diagonals`` (``C x slots``, :func:`~cryptoffload.workloads.bsgs.diagonals_of`)
    and the ciphertext ``ct`` (at level ``shape.level``) on ``runner``'s workers; see the
    module docstring for what runs where and what is timed.

    ``warmup`` unreported runs come first (the first run on fresh workers pays for lazy
    allocations); then ``repeats`` reported runs, of which the *median* one by ``wall_s``
    (the lower median for an even count) is returned whole -- its span, busy times and
    records belong to that run -- with every run's ``wall_s`` and ``span_s`` in
    ``wall_all``/``span_all``. ``batched``: the baby steps a device sends leave in one task
    and one message per set of destinations (else each in its own; see the module docstring).
    ``switch_interval_s``: the workers' GIL switch interval during the runs
    (:data:`SWITCH_INTERVAL_S`; restored afterwards; ``None`` leaves it alone). Input mistakes raise a one-line :class:`ConfigError`.
    """
    _check_options(shape, batched, switch_interval_s)
    diag, ct_bytes, context = _check(runner, backend, diagonals, shape, sp, ct, repeats, warmup, hoisted)
    session = _place(runner, sp, _ctx_digest(context))
    note = _run_note(backend, shape, sp, session.workers)
    try:
        setup_s = _setup(runner, session, backend, context, ct_bytes, diag, shape, sp, switch_interval_s)
        runs = [_run_once(runner, shape, sp, session.run_id, rep, session.dev_worker, session.used, hoisted,
                          batched, session.pending) for rep in range(warmup + repeats)][warmup:]
    finally:
        _teardown(runner, session)
    return _result(runs, shape, sp, session, hoisted=hoisted, repeats=repeats, setup_s=setup_s, note=note)


def _check_options(shape: BsgsShape, batched: object, switch_interval_s: object) -> None:
    """Refuse options the execution does not have (the inputs themselves: :func:`_check`)."""
    if not isinstance(batched, bool):
        raise ConfigError(f"batched must be True or False, got {batched!r}")
    if switch_interval_s is not None and not (isinstance(switch_interval_s, (int, float))
                                              and not isinstance(switch_interval_s, bool)
                                              and 1e-6 <= switch_interval_s <= 1.0):
        raise ConfigError(f"switch_interval_s must be None or seconds in [1e-6, 1], got {switch_interval_s!r}")
    if shape.horner or not shape.rescale_each_giant:
        raise ConfigError("the Dask execution rescales each giant step and rotates it on its own; a Horner, "
                          "rescale-once shape (OpenFHE's bootstrapping stages) is modelled, not executed")


@dataclass
class _Session:
    """One :func:`run_bsgs` call on the workers: where each device runs, and what the cleanup
    must undo (futures still pending, the workers' switch intervals before the run)."""

    run_id: str
    digest: str
    dev_worker: tuple[str, ...]     # device d's worker
    used: list[str]                 # the workers that hold a device, sorted
    workers: int                    # how many workers the cluster has
    pending: Pending = field(default_factory=list)
    previous: list[float] = field(default_factory=list)


def _place(runner: DaskRunner, sp: Split, digest: str) -> _Session:
    """Device ``d`` on worker ``d`` (round-robin when there are more devices than workers)."""
    addrs = runner.worker_addresses()
    if not addrs:
        raise ConfigError("the Dask cluster has no workers")
    dev_worker = tuple(addrs[d % len(addrs)] for d in range(sp.devices))
    return _Session(uuid.uuid4().hex[:12], digest, dev_worker, sorted(set(dev_worker)), len(addrs))


def _run_note(backend: CkksBackend, shape: BsgsShape, sp: Split, workers: int) -> str:
    """What the result should say about how the run differs from the model's devices."""
    note = ""
    if sp.devices > workers:
        note = (f"{sp.devices} devices on {workers} workers (round-robin: device d on worker d mod "
                f"{workers}); devices sharing a worker run one after another")
    composed = [s for s in shape.rotation_steps() if len(backend.rotation_plan(s)) > 1]
    if composed:
        note = "; ".join(filter(None, [note, f"steps {composed} have no key of their own (composed "
                                               f"from several key switches)"]))
    return note


def _setup(runner: DaskRunner, session: _Session, backend: CkksBackend, context: bytes, ct_bytes: bytes,
           diag: np.ndarray, shape: BsgsShape, sp: Split, switch_interval_s: float | None) -> float:
    """The untimed setup: context, input and plaintexts on the workers, and their switch
    interval; returns the seconds it took."""
    t0 = time.perf_counter()
    _share_context(runner, session, context, bool(getattr(backend, "insecure_study", False)))
    _share_inputs(runner, session, ct_bytes, diag, shape, sp)
    if switch_interval_s is not None:
        session.previous = runner.gather([runner.submit(worker_switch_interval, float(switch_interval_s), worker=a)
                                          for a in session.used])
    return time.perf_counter() - t0


def _share_context(runner: DaskRunner, session: _Session, context: bytes, insecure: bool) -> None:
    """The public context to every used worker that does not hold its backend yet."""
    ckks_workers.share_context(runner, session.used, context, session.digest, insecure)


def _share_inputs(runner: DaskRunner, session: _Session, ct_bytes: bytes, diag: np.ndarray, shape: BsgsShape,
                  sp: Split) -> None:
    """The input ciphertext to every used worker, and to each device only the diagonals of its
    own giant steps, encoded there."""
    ct_f = runner.scatter(ct_bytes, broadcast=True, workers=session.used)
    setups = []
    for share in sp.shares:
        worker = session.dev_worker[share.device]
        ts = sorted({j * shape.baby + i for j in share.giant for i in shape.babies_of(j)})
        rows_f = runner.scatter([{t: diag[t] for t in ts}], workers=[worker])[0]
        setups.append(runner.submit(_worker_setup, session.digest, session.run_id, share.device, shape, share.giant,
                                    rows_f, ct_f, worker=worker))
    runner.gather(setups)


def _teardown(runner: DaskRunner, session: _Session) -> None:
    """Cancel what is still pending, drop the run's state on the workers and restore their
    switch intervals -- never raising over the error that may have brought us here."""
    if session.pending and runner.client is not None:
        runner.client.cancel(session.pending)
    if runner.client is not None:
        with suppress(Exception):
            runner.gather([runner.submit(ckks_workers.end_session, session.run_id, worker=a) for a in session.used])
            if session.previous:
                runner.gather([runner.submit(worker_switch_interval, p, worker=a)
                               for a, p in zip(session.used, session.previous)])


@dataclass(frozen=True)
class _Traffic:
    """Per device: busy seconds and op counts; between devices: what moved."""

    busy: tuple[float, ...]
    ops: tuple[dict[str, int], ...]
    bytes_moved: int
    transfers: int
    messages: int
    local_transfers: int


def _traffic(records: Sequence[TaskRecord], sp: Split, dev_worker: Sequence[str]) -> _Traffic:
    busy = [0.0] * sp.devices
    ops = [dict.fromkeys(OP_NAMES, 0) for _ in range(sp.devices)]
    moved = transfers = messages = local = 0
    for r in records:
        busy[r.device] += r.seconds
        for k, v in r.ops.items():
            ops[r.device][k] += v
        if r.kind in ("recv", "reduce"):
            messages += 1
            transfers += r.ops["deserialize"]
            moved += r.bytes_in
    for src, dst, _ in sp.baby_sends:
        local += dev_worker[src] == dev_worker[dst]
    for rnd in sp.reduction:
        local += sum(dev_worker[s] == dev_worker[d] for s, d in rnd)
    return _Traffic(tuple(busy), tuple(ops), moved, transfers, messages, local)


def _result(runs: Sequence[_OneRun], shape: BsgsShape, sp: Split, session: _Session, *, hoisted: bool,
            repeats: int, setup_s: float, note: str) -> BsgsRunResult:
    """The median run by wall time (the lower median for an even count), whole."""
    med = sorted(runs, key=lambda r: r.wall)[(len(runs) - 1) // 2]
    t = _traffic(med.records, sp, session.dev_worker)
    return BsgsRunResult(
        result=med.result, wall_s=med.wall, span_s=med.span, busy_s=t.busy, bytes_moved=t.bytes_moved,
        transfers=t.transfers, messages=t.messages, local_transfers=t.local_transfers, devices=sp.devices,
        workers=len(session.used), device_workers=session.dev_worker, shared_workers=len(session.used) < sp.devices,
        strategy=sp.strategy, bs=shape.baby, diagonals=shape.diagonals, hoisted=hoisted,
        tasks=len(med.records), ops=t.ops, repeats=repeats, wall_all=tuple(r.wall for r in runs),
        span_all=tuple(r.span for r in runs), setup_s=setup_s, note=note, records=tuple(med.records))


@dataclass(frozen=True)
class _OneRun:
    """One timed run: client wall time, worker span, its task records and the result's bytes."""

    wall: float
    span: float
    records: list[TaskRecord]
    result: bytes


def _run_once(runner: DaskRunner, shape: BsgsShape, sp: Split, run_id: str, rep: int,
              dev_worker: Sequence[str], used: Sequence[str], hoisted: bool, batched: bool,
              pending: Pending) -> _OneRun:
    """Submit one timed run as one graph, wait for it, collect its records."""
    pending.clear()
    senders = {(src, i) for src, dst, i in sp.baby_sends}
    partial_senders = {src for rnd in sp.reduction for src, _ in rnd}
    base = f"bsgs-{run_id}-{rep}"
    tasks: dict[str, Task] = {}
    where: dict[str, str] = {}
    rank: dict[str, int] = {}     # issue order within a class; the class orders first

    def add(cls: int, fn: Callable[..., object], d: int, name: str, *args: object) -> str:
        key = f"{base}-{name}"
        tasks[key] = (fn, run_id, rep, d, *args)
        where[key] = dev_worker[d]
        rank[key] = cls * 100_000 + len(tasks)
        return key

    # the key that makes baby step i available (as bytes, if it is sent) on device d
    have: list[dict[int, str]] = [{} for _ in range(sp.devices)]
    for share in sp.shares:
        d = share.device
        if hoisted:
            groups = [(0, share.baby)] if share.baby else []
        else:   # the baby steps that leave the device (see sent_batches), then those that stay
            groups = [(0, g) for g in sent_batches(sp, d, batched)]
            stay = tuple(i for i in share.baby if (d, i) not in senders)
            groups += [(2, stay)] if stay else []
        for cls, g in groups:
            send = tuple(i for i in g if (d, i) in senders)
            key = add(cls, _task_baby, d, f"baby-{d}-{'-'.join(map(str, g))}", g, shape.stride, send, hoisted)
            for i in g:
                have[d][i] = key
    # one receive per (src, dst, task that made the bytes on src), its baby steps in issue order
    recvs: dict[tuple[int, int, str], tuple[str, list[int]]] = {}
    for src, dst, i in sp.baby_sends:
        made = have[src][i]
        if (src, dst, made) not in recvs:
            recvs[(src, dst, made)] = (f"recv-{len(recvs)}-{src}-{dst}", [])
        name, babies = recvs[(src, dst, made)]
        babies.append(i)
        have[dst][i] = f"{base}-{name}"
    for (src, dst, made), (name, babies) in recvs.items():
        forward = tuple(i for i in babies if (dst, i) in senders)
        add(1, _task_recv, dst, name, src, tuple(babies), made, forward)
    # the key that made device d's current partial sum
    partial: dict[int, str] = {}
    final_dev = sp.reduction[-1][0][1] if sp.reduction else next(s.device for s in sp.shares if s.giant)
    for share in sp.shares:
        if not share.giant:
            continue
        d = share.device
        deps = sorted({i for j in share.giant for i in shape.babies_of(j) if i})
        out = d in partial_senders or (d == final_dev and not sp.reduction)
        partial[d] = add(3, _task_giant, d, f"giant-{d}", shape, share.giant, [have[d][i] for i in deps], out)
    for r, rnd in enumerate(sp.reduction):
        for src, dst in rnd:
            later = any(s == dst for rr in sp.reduction[r + 1:] for s, _ in rr)
            last = r == len(sp.reduction) - 1
            partial[dst] = add(4, _task_reduce, dst, f"reduce-{r}-{src}-{dst}", src, partial[src],
                               partial[dst], later or last)
    top = max(rank.values()) + 1
    t0 = time.perf_counter()
    futures = runner.submit_graph(tasks, workers=where, priorities={k: top - v for k, v in rank.items()})
    pending.extend(futures.values())
    final = futures[partial[final_dev]]
    runner.wait([final])
    wall = time.perf_counter() - t0
    runner.wait(pending)
    result = runner.gather(final)
    assert isinstance(result, bytes)   # the final partial sum's task returns its ciphertext's bytes
    raw = runner.gather([runner.submit(ckks_workers.collect_records, run_id, rep, worker=a) for a in used])
    pending.clear()
    del futures, final
    records = sorted((TaskRecord(d, dev_worker[d], kind, label, s, e, ops, b, op_s)
                      for per in raw for d, kind, label, s, e, ops, b, op_s in per),
                     key=lambda r: (r.start, r.device))
    span = max(r.end for r in records) - min(r.start for r in records)
    return _OneRun(wall, span, records, result)


def verify(backend: CkksBackend, result: BsgsRunResult | bytes, diagonals: ArrayLike, shape: BsgsShape,
           x: ArrayLike) -> float:
    """Decrypt ``result`` with ``backend`` (the client's, holding the secret key) and return
    the largest absolute slot error against the plaintext product
    :func:`~cryptoffload.workloads.bsgs.bsgs_plain` (``M @ x`` for the matrix of ``diagonals``)."""
    data = result.result if isinstance(result, BsgsRunResult) else result
    if not isinstance(data, (bytes, bytearray)):
        raise ConfigError(f"result must be a BsgsRunResult or ciphertext bytes, got {type(data).__name__}")
    if not backend.can_decrypt:
        raise ConfigError("verify needs the client's backend (with the secret key)")
    vec = np.zeros(backend.slots)
    xs = np.asarray(x, dtype=np.float64).ravel()
    if xs.size > backend.slots:
        raise ConfigError(f"x has {xs.size} values, more than the {backend.slots} slots")
    vec[:xs.size] = xs
    try:
        got = backend.decrypt(backend.deserialize_ciphertext(bytes(data)))
    except CkksError as exc:
        raise ConfigError(f"cannot decrypt the result with this backend: {exc}") from None
    want = bsgs_plain(np.asarray(diagonals, dtype=np.float64), shape, vec)
    return float(np.max(np.abs(got - want)))
