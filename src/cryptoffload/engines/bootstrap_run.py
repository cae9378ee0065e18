"""Run one CoeffToSlot/SlotToCoeff stage of a CKKS bootstrap split over Dask workers, with the
ciphertexts kept on the workers and only partial sums moved.

Why: the multi-device model (:mod:`cryptoffload.sim.op_dag`) prices a bootstrap's stages split
over devices, and :mod:`.bsgs_run` checks it on one dense product; this module runs the
operation the multi-device paper is about -- a stage of bootstrapping's homomorphic DFT, as
our RNS-CKKS backend evaluates it (:mod:`cryptoffload.crypto.ckks.bootstrap.lintrans`) -- split
by a :class:`~cryptoffload.workloads.bsgs.Split`, device ``d`` on worker ``d`` (round-robin
when there are more devices than workers).

A :class:`StageSession` holds one stage resident on the workers. Its setup (untimed,
``setup_s``): the client's public context (:mod:`.ckks_workers`: never a secret key -- the
client checks its frame before sending, a worker again before rebuilding a backend from it),
the stage's input ciphertext (serialised) on every worker, and the stage's description
(:class:`StageWork`: its matrix, level, plaintext scale and factor, what
:meth:`~cryptoffload.crypto.ckks.bootstrap.driver.Bootstrapper.stage_encodings` hands out), from
which each worker encodes the plaintexts itself (:func:`~.lintrans.encode`), so no plaintext
crosses a process. Each :meth:`StageSession.run` then submits one graph
(:meth:`~.dask.DaskRunner.submit_graph`), every task pinned to its device's worker:

* ``stage`` -- one task per device holding giant steps: :func:`~.lintrans.apply` with
  ``giants=`` its block and ``rescale=False`` -- every baby rotation (hoisted: one
  decomposition of the input), its giant steps' inner sums (one ModDown each on the RNS
  backends: double hoisting), their giant rotations and the sum, serialised when the partial
  sum leaves the device;
* ``reduce`` -- one task per ``(src, dst)`` of :attr:`Split.reduction`, on ``dst``: deserialise
  ``src``'s partial sum and add it;
* the last task (on the device the tree ends on) rescales the whole sum once and serialises it:
  the stage's output, as :func:`~.lintrans.apply` would have made it in one process.

Only replicated baby steps are executed (the ``replicate`` strategy, the paper's): with double
hoisting a baby rotation never exists as a ciphertext modulo ``Q`` -- it stays in the extended
basis inside one ``baby_giant_sums`` call -- so a strategy that sends baby steps to other
devices (``broadcast``, ``split-giant``) is modelled, not run. Every task records its
worker-side start and end (``time.monotonic()``, one clock for every process of a Linux
machine); ``wall_s`` is the client's clock from the submission to the result's task being done.

:meth:`StageSession.costs` times, on the workers and with the stage's own input, keys and
plaintexts, the parts a stage is made of (see :func:`stage_part_costs`): the op costs a model
of this execution is priced with.
"""

from __future__ import annotations

import statistics
import time
import uuid
from contextlib import suppress
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Callable, Sequence, TypeVar

import numpy as np

from cryptoffload.crypto.ckks import Ciphertext, CkksBackend, CkksError
from cryptoffload.crypto.ckks.bootstrap import dft, lintrans
from cryptoffload.crypto.ckks.bootstrap.capable import Bootstraps
from cryptoffload.crypto.ckks.timing import timed
from cryptoffload.engines import ckks_workers
from cryptoffload.engines.bsgs_run import SWITCH_INTERVAL_S, TaskRecord, worker_switch_interval
from cryptoffload.engines.dask import DaskRunner, Task
from cryptoffload.errors import ConfigError
from cryptoffload.workloads.bsgs import BsgsShape, Split, split

if TYPE_CHECKING:
    from cryptoffload.crypto.ckks.bootstrap.driver import BootstrapRun, StageEncoding

__all__ = ["PART_COSTS", "StageRunResult", "StageSession", "StageWork", "StagesOnWorkers", "bootstrap_on_workers",
           "run_stage", "stage_in_process",
           "stage_part_costs", "verify_stage"]

#: what :func:`stage_part_costs` returns, seconds (and ``bytes``)
PART_COSTS = ("baby_first_s", "baby_s", "term_s", "moddown_s", "giant_rotate_s", "add_s", "rescale_s",
              "serialize_s", "deserialize_s", "bytes", "calls_s", "clamped")
#: the op seconds a task record keeps, by what the task did
TASK_OPS = ("stage", "deserialize", "add", "rescale", "serialize")

R = TypeVar("R")


@dataclass(frozen=True)
class StageWork:
    """One stage as a worker encodes and evaluates it: its matrix (``stage``, whose ``baby`` is
    the baby-step count run), the level it runs at, the plaintext scale and the factor every
    diagonal is multiplied by -- a :class:`~.driver.StageEncoding`'s fields."""

    stage: dft.Stage
    level: int
    scale: float
    factor: complex | np.ndarray = field(default=1.0, repr=False, compare=False)

    @classmethod
    def of(cls, spec: StageEncoding, baby: int | None = None) -> "StageWork":
        """From a :class:`~.driver.StageEncoding` (``baby``: run with that many baby steps)."""
        work = cls(spec.stage, spec.level, spec.scale, spec.factor)
        return work if baby is None else work.with_baby(baby)

    def with_baby(self, baby: int) -> "StageWork":
        """The same stage with ``baby`` baby steps (a key for each of its rotations is needed)."""
        if isinstance(baby, bool) or not isinstance(baby, int) or baby < 1:
            raise ConfigError(f"a stage's baby-step count must be a positive integer, got {baby!r}")
        return replace(self, stage=replace(self.stage, baby=baby))

    @property
    def grid(self) -> lintrans.Grid:
        return lintrans.grid(self.stage)

    @property
    def name(self) -> str:
        return f"{self.stage.transform} {self.stage.index}"

    def rotation_steps(self) -> list[int]:
        """The rotation steps (slots) the stage uses: a Galois key each."""
        return sorted(self.grid.rotation_steps)

    def shape(self) -> BsgsShape:
        """The product as this module executes it, for :func:`~.workloads.bsgs.split` and the
        op-DAG model: ``C`` diagonals (contiguous offsets), ``bs`` = the grid's baby steps, giant
        step ``j`` rotated by the grid's ``G_j`` (``offset`` + ``j bs stride``, modulo the
        stage's width: the same giant steps are rotation-free), and ``rescale_each_giant``: on
        the RNS backends every giant step's inner sum is divided by ``P`` once (a ModDown)
        before its giant rotation, which is how the DAG's per-giant-step rescale is priced
        (the one rescale by ``q`` of the whole sum comes after the reduction)."""
        gr = self.grid
        lo, hi = self.stage.span
        count = sum(k is not None for row in gr.cells for k in row)
        if count != hi - lo + 1:
            raise ConfigError(f"{self.name}: its {count} diagonals do not fill offsets {lo}..{hi}; "
                              "only a contiguous stage maps to a BSGS shape")
        w = self.stage.width
        return BsgsShape(count, len(gr.baby), slots=w, stride=self.stage.stride, offset=gr.giant[0] % w,
                         level=self.level, rescale_each_giant=True, horner=False)


def stage_in_process(backend: CkksBackend, work: StageWork, ct: Ciphertext) -> Ciphertext:
    """The stage on ``ct`` in this process (:func:`~.lintrans.apply`, encoded here): what the
    split execution must equal."""
    enc = lintrans.encode(backend, work.stage, level=work.level, scale=work.scale, factor=work.factor)
    return lintrans.apply(backend, ct, enc)


# ---- worker side -------------------------------------------------------------------------------
# Module-level state of a worker process (these functions run there, pickled by reference): a
# session per execution in ckks_workers.SESSIONS, with the stage's input and encoded plaintexts.
@dataclass(kw_only=True)
class _Session(ckks_workers.WorkerSession[Ciphertext]):
    """A worker's state of one session: besides the shared part (digest, the partial sums
    alive per ``(run, device)``, the task records per run), the stage's input and its encoded
    plaintexts."""

    input: Ciphertext
    enc: lintrans.EncodedStage


def _worker_setup(digest: str, sid: str, work: StageWork, ct_bytes: bytes) -> float:
    """Deserialise the input and encode the stage here; returns the seconds it took."""
    t0 = time.monotonic()
    be = ckks_workers.backend(digest)
    ct = be.deserialize_ciphertext(ct_bytes)
    enc = lintrans.encode(be, work.stage, level=work.level, scale=work.scale, factor=work.factor)
    if sid in ckks_workers.SESSIONS:
        st = ckks_workers.session(sid, _Session)
        st.input, st.enc = ct, enc
    else:
        ckks_workers.SESSIONS[sid] = _Session(digest=digest, input=ct, enc=enc)
    return time.monotonic() - t0


def _worker_load(sid: str, ct_bytes: bytes) -> bool:
    """A new input for the session's stage (the encoded plaintexts stay)."""
    st = ckks_workers.session(sid, _Session)
    st.input = ckks_workers.backend(st.digest).deserialize_ciphertext(ct_bytes)
    return True


class _Clock:
    """Worker-side bookkeeping of one timed task: its start, the seconds of each op it ran, the
    bytes it received from another device."""

    def __init__(self, sid: str, rep: int, device: int, kind: str, label: str) -> None:
        self.start = time.monotonic()
        self.st = ckks_workers.session(sid, _Session)
        self.be = ckks_workers.backend(self.st.digest)
        self.rep, self.device, self.kind, self.label = rep, device, kind, label
        self.ops = dict.fromkeys(TASK_OPS, 0)
        self.op_s = dict.fromkeys(TASK_OPS, 0.0)
        self.bytes_in = 0

    def run(self, name: str, fn: Callable[[], R]) -> R:
        with timed(self.be) as t:
            out = fn()
        self.ops[name] += 1
        self.op_s[name] += t.seconds
        return out

    def finish(self, acc: Ciphertext, send: bool, final: bool) -> bytes | None:
        """Keep the partial sum; rescale it if it is the whole sum; serialise it if it leaves."""
        if final:
            acc = self.run("rescale", partial(self.be.rescale, acc))
        self.st.live[(self.rep, self.device)] = acc
        data = self.run("serialize", partial(self.be.serialize_ciphertext, acc)) if (send or final) else None
        self.st.record(self.rep, ckks_workers.WorkerRecord(self.device, self.kind, self.label, self.start,
                                                           time.monotonic(), self.ops, self.bytes_in, self.op_s))
        return data


def _task_stage(sid: str, rep: int, device: int, giants: tuple[int, ...], send: bool, final: bool) -> bytes | None:
    c = _Clock(sid, rep, device, "stage", "giant " + " ".join(map(str, giants)))
    acc = c.run("stage", partial(lintrans.apply, c.be, c.st.input, c.st.enc, list(giants), rescale=False))
    return c.finish(acc, send, final)


def _task_reduce(sid: str, rep: int, device: int, src: int, incoming: bytes, after: bytes | None, send: bool,
                 final: bool) -> bytes | None:
    del after   # orders this task after the one that made this device's partial sum
    c = _Clock(sid, rep, device, "reduce", f"from {src}")
    c.bytes_in = len(incoming)
    other = c.run("deserialize", partial(c.be.deserialize_ciphertext, incoming))
    acc = c.run("add", partial(c.be.add, c.st.live[(rep, device)], other))
    return c.finish(acc, send, final)


def _median_times(calls: dict[str, Callable[[], object]], be: CkksBackend, repeats: int) -> dict[str, float]:
    """Each call's median seconds over ``repeats`` passes (one untimed pass first), the calls
    interleaved within a pass so that a drift of the machine's speed hits them alike."""
    samples: dict[str, list[float]] = {k: [] for k in calls}
    for p in range(repeats + 1):
        for name, fn in calls.items():
            with timed(be) as t:
                fn()
            if p:
                samples[name].append(t.seconds)
    return {k: statistics.median(v) for k, v in samples.items()}


def _worker_part_costs(sid: str, repeats: int) -> dict[str, float]:
    st = ckks_workers.session(sid, _Session)
    return stage_part_costs(ckks_workers.backend(st.digest), st.enc, st.input, repeats)


def stage_part_costs(be: CkksBackend, enc: lintrans.EncodedStage, ct: Ciphertext, repeats: int = 3
                     ) -> dict[str, float]:
    """Seconds of the parts a stage is made of, on ``be`` with the stage's input ``ct``, its keys
    and its plaintexts ``enc`` (at least 3 baby steps), by differences of timed calls of the
    backend's own ops (medians over ``repeats``):

    * ``moddown_s`` -- ``baby_giant_sums`` of one term on the zero step: one giant step's
      ModDown and its one product (no key switch);
    * ``baby_first_s`` -- one baby rotation more: the input's decomposition and one inner
      product with a key (the cost the first baby step brings);
    * ``baby_s`` -- each further baby rotation: one more inner product (its share of the
      hoisted ``rotate_many``), from all ``g - 1`` baby steps against one;
    * ``term_s`` -- each further product of a giant step's inner sum (in the extended basis,
      with its addition), from a full row of ``g`` terms against one;
    * ``giant_rotate_s`` -- one giant rotation (``rotate_each`` of the stage's giant steps, per
      step); ``add_s``, ``rescale_s`` (by ``q``), ``serialize_s``, ``deserialize_s`` and
      ``bytes`` of a ciphertext at the stage's level;
    * ``calls_s`` -- the sum of every timed call's median: the work one pass does, to compare
      a worker timing alone with several timing at once.

    A difference that noise makes non-positive is kept at 1 ns (``clamped`` counts them)."""
    gr = enc.grid
    moving = [s for s in gr.baby if s]
    if len(moving) < 2:
        raise ConfigError(f"timing a stage's parts needs at least 3 baby steps, this grid has {len(gr.baby)}")
    pts = [pt for row in enc.plaintexts for pt in row if pt is not None][:len(moving) + 1]
    giants = [s for s in gr.giant if s] or [moving[0]]
    steps = [0] + moving
    blob = be.serialize_ciphertext(ct)
    calls: dict[str, Callable[[], object]] = {
        "zero": lambda: be.baby_giant_sums(ct, [0], [[pts[0]]]),
        "one": lambda: be.baby_giant_sums(ct, steps[:2], [[pts[0], None]]),
        "all": lambda: be.baby_giant_sums(ct, steps, [[pts[0]] + [None] * len(moving)]),
        "row": lambda: be.baby_giant_sums(ct, steps, [pts + [None] * (len(steps) - len(pts))]),
        "giants": lambda: be.rotate_each([ct] * len(giants), giants),
        "add_s": lambda: be.add(ct, ct), "rescale_s": lambda: be.rescale(ct),
        "serialize_s": lambda: be.serialize_ciphertext(ct), "deserialize_s": lambda: be.deserialize_ciphertext(blob)}
    t = _median_times(calls, be, repeats)
    raw = {"moddown_s": t["zero"], "baby_first_s": t["one"] - t["zero"],
           "baby_s": (t["all"] - t["one"]) / (len(moving) - 1), "term_s": (t["row"] - t["all"]) / (len(pts) - 1),
           "giant_rotate_s": t["giants"] / len(giants)}
    out = {k: max(v, 1e-9) for k, v in raw.items()}
    out.update({k: t[k] for k in ("add_s", "rescale_s", "serialize_s", "deserialize_s")})
    out.update(bytes=float(len(blob)), calls_s=sum(t.values()), clamped=float(sum(v <= 0 for v in raw.values())))
    return out


# ---- client side -------------------------------------------------------------------------------
@dataclass(frozen=True)
class StageRunResult:
    """One split stage run (the median of ``repeats`` by wall time, whole).

    ``result``: the stage's output, serialised (rescaled, on the device the reduction ends
    on). ``wall_s``: client clock, graph submission to the result's task done; ``span_s``:
    worker clocks, first task start to last task end; ``busy_s[d]``: seconds device ``d``'s
    tasks ran. ``bytes_moved``/``transfers``: partial sums sent between devices, of which
    ``local_transfers`` stayed in one worker process. ``wall_all``/``span_all``: every
    reported run, in run order."""

    result: bytes = field(repr=False)
    wall_s: float
    span_s: float
    busy_s: tuple[float, ...]
    bytes_moved: int
    transfers: int
    local_transfers: int
    devices: int
    active_devices: int
    workers: int
    device_workers: tuple[str, ...]
    bs: int
    giants: int
    diagonals: int
    repeats: int
    wall_all: tuple[float, ...]
    span_all: tuple[float, ...]
    note: str = ""
    records: tuple[TaskRecord, ...] = field(default=(), repr=False)


@dataclass(frozen=True)
class _OneRun:
    wall: float
    span: float
    records: list[TaskRecord]
    result: bytes


class StageSession:
    """``work`` on the input ``ct`` (at ``work.level``) resident on the first ``workers`` of
    ``runner``'s workers (default: all) -- see the module docstring. Use as a context manager
    (or :meth:`close`): closing drops the stage from the workers and restores their GIL switch
    interval (``switch_interval_s``: :data:`~.bsgs_run.SWITCH_INTERVAL_S` while the session is
    open; ``None`` leaves it alone). Input mistakes raise a one-line :class:`ConfigError`."""

    def __init__(self, runner: DaskRunner, backend: CkksBackend, work: StageWork, ct: Ciphertext, *,
                 workers: int | None = None, switch_interval_s: float | None = SWITCH_INTERVAL_S) -> None:
        ct_bytes, context = _check(runner, backend, work, ct)
        addrs = runner.worker_addresses()
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                    or not 1 <= workers <= len(addrs)):
            raise ConfigError(f"workers must be 1 to {len(addrs)} (the cluster's), got {workers!r}")
        self.runner, self.backend, self.work = runner, backend, work
        self.shape = work.shape()
        self.addrs = addrs[:workers or len(addrs)]
        self.sid = uuid.uuid4().hex[:12]
        self.digest = ckks_workers.context_digest(context)
        self._rep = 0
        self._previous: list[float] = []
        self._open = True
        t0 = time.perf_counter()
        try:
            ckks_workers.share_context(runner, self.addrs, context, self.digest,
                                       bool(getattr(backend, "insecure_study", False)))
            ct_f = runner.scatter(ct_bytes, broadcast=True, workers=self.addrs)
            runner.gather([runner.submit(_worker_setup, self.digest, self.sid, work, ct_f, worker=a)
                           for a in self.addrs])
            if switch_interval_s is not None:
                self._previous = runner.gather([runner.submit(worker_switch_interval, float(switch_interval_s),
                                                              worker=a) for a in self.addrs])
        except BaseException:
            self.close()
            raise
        self.setup_s = time.perf_counter() - t0

    def __enter__(self) -> "StageSession":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Drop the stage from the workers, restore their switch intervals (never raising over
        an error that may have brought us here)."""
        if not self._open:
            return
        self._open = False
        if self.runner.client is not None:
            with suppress(Exception):
                self.runner.gather([self.runner.submit(ckks_workers.end_session, self.sid, worker=a) for a in self.addrs])
                if self._previous:
                    self.runner.gather([self.runner.submit(worker_switch_interval, p, worker=a)
                                        for a, p in zip(self.addrs, self._previous)])

    def load(self, ct: Ciphertext) -> float:
        """Make ``ct`` (at the stage's level, size 2) the input of the following runs, on every
        worker of the session (untimed by :meth:`run`); the seconds it took. The workers keep
        the stage's plaintexts, so a bootstrap that meets this stage again sends only its input."""
        if not self._open:
            raise ConfigError("this stage session is closed")
        data = ckks_workers.input_bytes(self.backend, ct, self.work.level, f"the stage runs at level {self.work.level}")
        t0 = time.perf_counter()
        ct_f = self.runner.scatter(data, broadcast=True, workers=self.addrs)
        self.runner.gather([self.runner.submit(_worker_load, self.sid, ct_f, worker=a) for a in self.addrs])
        return time.perf_counter() - t0

    def split(self, devices: int) -> Split:
        """The ``replicate`` split of this stage over ``devices`` devices."""
        return split(self.shape, devices, "replicate")

    def costs(self, workers: int = 1, repeats: int = 3) -> list[dict[str, float]]:
        """:func:`stage_part_costs` timed on the first ``workers`` workers at once (one dict each):
        with one, the stage's op costs alone; with several, what they become when that many
        workers compute together (the machine's cores shared)."""
        if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= len(self.addrs):
            raise ConfigError(f"workers must be 1 to {len(self.addrs)}, got {workers!r}")
        futs = [self.runner.submit(_worker_part_costs, self.sid, repeats, worker=a) for a in self.addrs[:workers]]
        return list(self.runner.gather(futs))

    def run(self, sp: Split | int, *, repeats: int = 1, warmup: int = 0) -> StageRunResult:
        """Run the stage split by ``sp`` (a :class:`Split` of this stage, ``replicate``; or a
        device count): ``warmup`` unreported runs, then ``repeats``, of which the median by wall
        time (the lower median for an even count) is returned whole."""
        if not self._open:
            raise ConfigError("this stage session is closed")
        sp = self._as_split(sp)
        for name, v, lo in (("repeats", repeats, 1), ("warmup", warmup, 0)):
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                raise ConfigError(f"{name} must be an integer >= {lo}, got {v!r}")
        dev_worker = tuple(self.addrs[d % len(self.addrs)] for d in range(sp.devices))
        runs = []
        for _ in range(warmup + repeats):
            runs.append(self._run_once(sp, self._rep, dev_worker))
            self._rep += 1
        return _result(runs[warmup:], sp, dev_worker, self.shape, self._note(sp))

    def _as_split(self, sp: Split | int) -> Split:
        if isinstance(sp, int) and not isinstance(sp, bool):
            return self.split(sp)
        if not isinstance(sp, Split):
            raise ConfigError(f"sp must be a Split or a device count, got {type(sp).__name__}")
        if (sp.shape.diagonals, sp.shape.baby) != (self.shape.diagonals, self.shape.baby):
            raise ConfigError(f"the split is of a product of {sp.shape.diagonals} diagonals with bs = "
                              f"{sp.shape.baby}, this stage has {self.shape.diagonals} with bs = {self.shape.baby}")
        if sp.strategy != "replicate" and sp.devices > 1:
            raise ConfigError(f"a bootstrap stage runs with replicated baby steps only (its baby rotations stay in the "
                              f"extended basis inside one call), not {sp.strategy!r}; that strategy is modelled, not run")
        return sp if sp.shape == self.shape else split(self.shape, sp.devices, "replicate")

    def _note(self, sp: Split) -> str:
        workers = len(self.addrs)
        if sp.devices <= workers:
            return ""
        return (f"{sp.devices} devices on {workers} workers (round-robin: device d on worker d mod {workers}); "
                "devices sharing a worker run one after another")

    def _graph(self, sp: Split, rep: int, dev_worker: Sequence[str]) -> tuple[dict[str, Task], dict[str, str], str]:
        """The run's tasks, where each runs, and the key of the one that makes the result."""
        base = f"bstage-{self.sid}-{rep}"
        tasks: dict[str, Task] = {}
        where: dict[str, str] = {}
        partial_key: dict[int, str] = {}
        for share in sp.shares:
            if share.giant:
                d = share.device
                key = partial_key[d] = f"{base}-stage-{d}"
                tasks[key] = (_task_stage, self.sid, rep, d, share.giant, _sends_next(sp, d, -1), not sp.reduction)
                where[key] = dev_worker[d]
        for r, rnd in enumerate(sp.reduction):
            for src, dst in rnd:
                key = f"{base}-reduce-{r}-{src}-{dst}"
                tasks[key] = (_task_reduce, self.sid, rep, dst, src, partial_key[src], partial_key[dst],
                              _sends_next(sp, dst, r), r == len(sp.reduction) - 1)
                where[key] = dev_worker[dst]
                partial_key[dst] = key
        holder = sp.reduction[-1][0][1] if sp.reduction else sp.active_devices()[0]
        return tasks, where, partial_key[holder]

    def _run_once(self, sp: Split, rep: int, dev_worker: Sequence[str]) -> _OneRun:
        runner = self.runner
        tasks, where, final_key = self._graph(sp, rep, dev_worker)
        used = sorted(set(where.values()))
        t0 = time.perf_counter()
        futures = runner.submit_graph(tasks, workers=where)
        try:
            runner.wait([futures[final_key]])
            wall = time.perf_counter() - t0
            runner.wait(list(futures.values()))
            result = runner.gather(futures[final_key])
            assert isinstance(result, bytes)   # the final partial sum's task returns its ciphertext's bytes
        except BaseException:
            if runner.client is not None:
                runner.client.cancel(list(futures.values()))
            raise
        raw = runner.gather([runner.submit(ckks_workers.collect_records, self.sid, rep, worker=a) for a in used])
        records = sorted((TaskRecord(d, dev_worker[d], kind, label, s, e, ops, b, op_s)
                          for per in raw for d, kind, label, s, e, ops, b, op_s in per),
                         key=lambda r: (r.start, r.device))
        span = max(r.end for r in records) - min(r.start for r in records)
        return _OneRun(wall, span, records, result)


def _sends_next(sp: Split, device: int, after_round: int) -> bool:
    """Whether ``device``'s partial sum as it is after reduction round ``after_round`` (-1: its
    own, from its giant steps) is what it sends next: its next appearance in the tree is as a
    sender (so it is serialised once, when it leaves, and never when more is still to come)."""
    for rnd in sp.reduction[after_round + 1:]:
        for src, dst in rnd:
            if device in (src, dst):
                return device == src
    return False


def _result(runs: Sequence[_OneRun], sp: Split, dev_worker: Sequence[str], shape: BsgsShape,
            note: str) -> StageRunResult:
    """The median run by wall time (the lower median for an even count), whole."""
    med = sorted(runs, key=lambda r: r.wall)[(len(runs) - 1) // 2]
    busy = [0.0] * sp.devices
    moved = transfers = 0
    for r in med.records:
        busy[r.device] += r.seconds
        if r.kind == "reduce":
            transfers += 1
            moved += r.bytes_in
    local = sum(dev_worker[s] == dev_worker[d] for rnd in sp.reduction for s, d in rnd)
    return StageRunResult(
        result=med.result, wall_s=med.wall, span_s=med.span, busy_s=tuple(busy), bytes_moved=moved,
        transfers=transfers, local_transfers=local, devices=sp.devices, active_devices=len(sp.active_devices()),
        workers=len(set(dev_worker)), device_workers=tuple(dev_worker), bs=shape.baby, giants=shape.giant,
        diagonals=shape.diagonals, repeats=len(runs), wall_all=tuple(r.wall for r in runs),
        span_all=tuple(r.span for r in runs), note=note, records=tuple(med.records))


def _check(runner: object, backend: object, work: object, ct: Ciphertext) -> tuple[bytes, bytes]:
    """Validate the inputs (their types too: a caller may be untyped); ``(input bytes, public context)``."""
    if not isinstance(runner, DaskRunner):
        raise ConfigError(f"runner must be a DaskRunner, got {type(runner).__name__}")
    if not isinstance(backend, CkksBackend):
        raise ConfigError(f"backend must be a CkksBackend, got {type(backend).__name__}")
    if not isinstance(work, StageWork):
        raise ConfigError(f"work must be a StageWork (StageWork.of(a stage encoding)), got {type(work).__name__}")
    if backend.slots % work.stage.width:
        raise ConfigError(f"the stage is {work.stage.width} slots wide, which does not divide the {backend.name} "
                          f"backend's {backend.slots}")
    ct_bytes = ckks_workers.input_bytes(backend, ct, work.level, f"the stage runs at level {work.level}")
    ckks_workers.check_rotation_keys(backend, work.rotation_steps(), "keygen(rotations=...) with StageWork.rotation_steps()")
    return ct_bytes, ckks_workers.public_context(backend)


def run_stage(runner: DaskRunner, backend: CkksBackend, work: StageWork, sp: Split | int, ct: Ciphertext, *,
              repeats: int = 1, warmup: int = 1) -> StageRunResult:
    """One :class:`StageSession` for one split: set up, ``warmup`` + ``repeats`` runs, closed."""
    devices = sp if isinstance(sp, int) and not isinstance(sp, bool) else getattr(sp, "devices", 1)
    with StageSession(runner, backend, work, ct,
                      workers=min(len(runner.worker_addresses()), max(1, int(devices)))) as session:
        return session.run(sp, repeats=repeats, warmup=warmup)


def verify_stage(backend: CkksBackend, result: StageRunResult | bytes, reference: Ciphertext) -> float:
    """Bits of agreement (``-log2`` of the largest slot error) of the split run's output with
    ``reference`` (:func:`stage_in_process`), both decrypted with ``backend`` (the client's)."""
    from cryptoffload.crypto.ckks.bootstrap.precision import precision

    data = result.result if isinstance(result, StageRunResult) else result
    if not backend.can_decrypt:
        raise ConfigError("verify_stage needs the client's backend (with the secret key)")
    dec = getattr(backend, "decrypt_complex", backend.decrypt)
    got = dec(backend.deserialize_ciphertext(bytes(data)))
    return precision(got, dec(reference)).worst_bits


class StagesOnWorkers:
    """A whole bootstrap's CoeffToSlot and SlotToCoeff stages on Dask workers: the
    :data:`~cryptoffload.crypto.ckks.bootstrap.driver.StageRunner` that
    :meth:`~cryptoffload.crypto.ckks.bootstrap.driver.Bootstrapper.run` calls for each stage
    instead of evaluating it in this process. Each stage runs split over ``devices`` devices
    (replicated baby steps; device ``d`` on worker ``d mod workers``) from its own
    :class:`StageSession`, opened at the stage's first use and kept open, so its plaintexts stay
    on the workers and a later bootstrap sends only the stage's input (:meth:`StageSession.load`).
    The mod-raise, the conjugation split and EvalMod stay in the client's process: they are not
    BSGS products. ``runs``: every stage run, in order, with the stage's name. Use as a context
    manager (or :meth:`close`)."""

    def __init__(self, runner: DaskRunner, backend: CkksBackend, devices: int, *, workers: int | None = None) -> None:
        if isinstance(devices, bool) or not isinstance(devices, int) or devices < 1:
            raise ConfigError(f"devices must be a positive integer, got {devices!r}")
        available = len(runner.worker_addresses())
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                    or not 1 <= workers <= available):
            raise ConfigError(f"workers must be 1 to {available} (the cluster's), got {workers!r}")
        self.runner, self.backend, self.devices = runner, backend, devices
        self.workers = workers or min(devices, available)
        self.sessions: dict[tuple[str, int, float, float], StageSession] = {}
        self.runs: list[tuple[str, StageRunResult]] = []
        self.load_s = 0.0

    def __call__(self, spec: StageEncoding, enc: lintrans.EncodedStage, ct: Ciphertext) -> Ciphertext:
        del enc   # the workers encode the stage themselves, from its description
        work = StageWork.of(spec)
        key = (work.name, spec.level, spec.scale, spec.constant)
        session = self.sessions.get(key)
        if session is None:
            session = self.sessions[key] = StageSession(self.runner, self.backend, work, ct, workers=self.workers)
        else:
            self.load_s += session.load(ct)
        result = session.run(self.devices)
        self.runs.append((work.name, result))
        return self.backend.deserialize_ciphertext(result.result)

    def __enter__(self) -> "StagesOnWorkers":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the sessions, the latest first (each restores the switch interval it found)."""
        for session in reversed(list(self.sessions.values())):
            session.close()
        self.sessions.clear()


def bootstrap_on_workers(stages: StagesOnWorkers, ct: Ciphertext) -> tuple[Ciphertext, BootstrapRun]:
    """One bootstrap of ``ct`` by ``stages.backend`` (after its ``bootstrap_setup``), every
    CoeffToSlot/SlotToCoeff stage split over the workers (:class:`StagesOnWorkers`): the
    refreshed ciphertext -- the values the bootstrap in one process gives -- and the run's
    :class:`~cryptoffload.crypto.ckks.bootstrap.driver.BootstrapRun` (its CoeffToSlot and
    SlotToCoeff seconds include the round trips to the workers, and in the first bootstrap of
    ``stages`` the sessions' setup: their keys sent and plaintexts encoded on the workers)."""
    if not isinstance(stages.backend, Bootstraps):
        raise ConfigError(f"the {stages.backend.name} backend runs no bootstrap of ours (gpu, gpu-twin do)")
    return stages.backend.bootstrapper.run(ct, stage=stages)     # not set up: a one-line CkksError
