"""Price an HE op DAG on N devices joined by links: list scheduling in issue order.

Why a scheduler and not a sum of op counts: on several devices the time of a BSGS product is
set by *waiting* -- for a baby step another device rotated, for a partial sum in the
reduction tree, for a busy link -- and those waits depend on which device does what. The model
here is deliberately simple and stated in full, so that it can be checked against real runs
(``engines/bsgs_run.py``) and against the closed forms it must reduce to:

* each device runs one op at a time; when it is free it starts, among the ops whose inputs are
  on it, the one of best priority -- values another device waits for, then received
  ciphertexts, its own baby steps, giant steps, the rest (the priorities the Dask execution
  gives its tasks); ties in issue order;
* a ``send`` moves one ciphertext: the sender spends ``serialize_s`` of compute (once per value,
  however many devices it goes to), then the bytes occupy the sender's outgoing port and the
  receiver's incoming port for ``bytes / bandwidth`` (ports are full duplex, one transfer at a
  time per direction), and arrive ``latency_s`` later; the receiver spends ``deserialize_s``
  of compute on them before use. Sends of one ``batch`` (``Op.batch``: the baby steps one task
  of the Dask execution made for one device) cross as one message when the last of them is
  serialised (one latency, their bytes back to back) and are deserialised in one task;
* ``task_s`` (a scheduler's fixed cost per task, measured for Dask; 0 for an FPGA) is paid
  before each task of the execution: a device's first (the submission reaching it), every
  op marked ``new_task`` (``build_dag`` marks where ``engines/bsgs_run.py`` cuts its tasks:
  each group of sent baby steps, the baby steps that stay, the giant steps) and every
  receiving task;
* ``concurrent_slowdown`` (measured by ``calibrate ckks``: op time with every worker busy over
  op time alone; 1 for separate accelerators) stretches compute when more than one device
  works, because here the "devices" are processes sharing one machine's cores.

An op may stand for a chain of identical or mixed ops (``Op.work``); the cost of a chain with no
outside dependency inside it is the sum of its parts, so merging such a chain does not change
the schedule (tested), which is what makes exhaustive searches over ``bs`` affordable.

Costs come from a profile (``[ops]``, ``[ciphertext]``, ``[link]``, optional ``[ring]`` and
``[overhead]``; see :class:`DagCosts`), either cited (``profiles/bsgs_u280.toml``) or measured
on this machine (``cryptoffload calibrate ckks``).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cryptoffload.errors import ConfigError, ProfileError
from cryptoffload.profiles.loader import Profile, load_profile
from cryptoffload.sim.protocols import Device, device_account

if TYPE_CHECKING:
    from cryptoffload.workloads.bsgs import Op, OpDag

REQUIRED_FIELDS = ("ops.rotate_s", "ops.pmul_s", "ops.add_s", "ciphertext.bytes",
                   "link.bandwidth_Bps", "link.latency_s")
_WHAT = {"ops.rotate_s": "the rotation (key switching) cost", "ops.pmul_s": "the plaintext-multiply cost",
         "ops.add_s": "the ciphertext-add cost", "ciphertext.bytes": "the ciphertext size",
         "link.bandwidth_Bps": "the link bandwidth", "link.latency_s": "the link latency"}


@dataclass(frozen=True)
class DagCosts:
    """Op and link costs at a reference level ``top`` (where the product's input is) and one
    level below (``low``: after the rescale). With ``limbs`` (RNS limbs at ``top``) other
    levels scale linearly with their limb count; without it costs do not depend on level."""

    rotate_s: float
    pmul_s: float
    add_s: float
    bytes: float
    bandwidth_Bps: float
    latency_s: float
    rotate_low_s: float | None = None
    hoisted_rotate_s: float | None = None
    add_low_s: float | None = None
    rescale_s: float = 0.0
    bytes_low: float | None = None
    serialize_s: float = 0.0
    deserialize_s: float = 0.0
    task_s: float = 0.0
    concurrent_slowdown: float = 1.0
    busy_latency_s: float | None = None
    busy_bandwidth_Bps: float | None = None
    limbs: int | None = None
    name: str = "costs"
    kind: str = "derived"

    def __post_init__(self) -> None:
        for f in ("rotate_s", "pmul_s", "add_s", "bytes", "bandwidth_Bps"):
            v = getattr(self, f)
            if not v > 0:
                raise ConfigError(f"{self.name}: {f} must be > 0, got {v!r}")
        for f in ("latency_s", "rescale_s", "serialize_s", "deserialize_s", "task_s"):
            if getattr(self, f) < 0:
                raise ConfigError(f"{self.name}: {f} must be >= 0, got {getattr(self, f)!r}")
        if (self.busy_latency_s is None) != (self.busy_bandwidth_Bps is None):
            raise ConfigError(f"{self.name}: busy_latency_s and busy_bandwidth_Bps go together (both or neither)")
        if (self.busy_bandwidth_Bps is not None and self.busy_latency_s is not None
                and not (self.busy_bandwidth_Bps > 0 and self.busy_latency_s >= 0)):
            raise ConfigError(f"{self.name}: busy_bandwidth_Bps must be > 0 and busy_latency_s >= 0, got "
                              f"{self.busy_bandwidth_Bps!r} and {self.busy_latency_s!r}")
        if not self.concurrent_slowdown >= 1.0:
            raise ConfigError(f"{self.name}: concurrent_slowdown must be >= 1, got {self.concurrent_slowdown!r}")

    @classmethod
    def from_profile(cls, profile: Profile | str) -> "DagCosts":
        """Read a profile; a missing required field is a one-line :class:`ProfileError`."""
        p = load_profile(profile) if isinstance(profile, str) else profile
        for f in REQUIRED_FIELDS:
            if f not in p.values:
                raise ProfileError(f"{p.path}: field '{f}' ({_WHAT[f]}) is missing")
        limbs = p.get("ring.limbs")
        return cls(
            rotate_s=p.value("ops.rotate_s"), pmul_s=p.value("ops.pmul_s"), add_s=p.value("ops.add_s"),
            bytes=p.value("ciphertext.bytes"), bandwidth_Bps=p.value("link.bandwidth_Bps"),
            latency_s=p.value("link.latency_s"), rotate_low_s=p.get("ops.rotate_low_s"),
            hoisted_rotate_s=p.get("ops.hoisted_rotate_s"), add_low_s=p.get("ops.add_low_s"),
            rescale_s=p.get("ops.rescale_s", 0.0) or 0.0, bytes_low=p.get("ciphertext.bytes_low"),
            serialize_s=p.get("ciphertext.serialize_s", 0.0) or 0.0,
            deserialize_s=p.get("ciphertext.deserialize_s", 0.0) or 0.0,
            task_s=p.get("overhead.task_s", 0.0) or 0.0,
            concurrent_slowdown=p.get("overhead.concurrent_slowdown", 1.0) or 1.0,
            busy_latency_s=p.get("link.busy_latency_s"), busy_bandwidth_Bps=p.get("link.busy_bandwidth_Bps"),
            limbs=int(limbs) if limbs else None, name=p.name, kind=p.kind)

    # -- per-op costs --------------------------------------------------------------------------
    def _at(self, top_value: float, low_value: float | None, level: int, top: int) -> float:
        if level == top or (level < top and low_value is None and self.limbs is None):
            return top_value
        if level == top - 1 and low_value is not None:
            return low_value
        if self.limbs is None:
            return top_value if level > top else (low_value if low_value is not None else top_value)
        # scale from the nearest measured point by the limb count
        ref_level, ref = (top - 1, low_value) if (level < top and low_value is not None) else (top, top_value)
        ref_limbs = self.limbs - (top - ref_level)
        return ref * (level + 1) / max(1, ref_limbs) if ref_limbs > 0 else ref

    def op_s(self, kind: str, level: int, top: int) -> float:
        """Seconds of one ``kind`` op at ``level`` in a product whose input is at ``top``.
        ``top`` is mapped to the profile's reference level (``limbs - 1``) when it has one."""
        if self.limbs is not None:
            level, top = level - top + self.limbs - 1, self.limbs - 1
        if kind == "rotate":
            return self._at(self.rotate_s, self.rotate_low_s, level, top)
        if kind == "hoisted_rotate":
            if self.hoisted_rotate_s is None:
                return self._at(self.rotate_s, self.rotate_low_s, level, top)
            return self._at(self.hoisted_rotate_s, None, level, top)
        if kind == "pmul":
            return self._at(self.pmul_s, None, level, top)
        if kind == "add":
            return self._at(self.add_s, self.add_low_s, level, top)
        if kind == "rescale":
            return self._at(self.rescale_s, None, level, top)
        raise ConfigError(f"no cost for op kind {kind!r}")

    def ciphertext_bytes(self, level: int, top: int) -> float:
        if self.limbs is not None:
            level, top = level - top + self.limbs - 1, self.limbs - 1
        return self._at(self.bytes, self.bytes_low, level, top)

    def wire_s(self, level: int, top: int, busy: bool = False) -> float:
        """Port occupancy of one ciphertext transfer (bytes / bandwidth); ``busy``: out of a
        device that is computing (``busy_bandwidth_Bps`` where the profile measured it)."""
        bw = self.busy_bandwidth_Bps if busy and self.busy_bandwidth_Bps else self.bandwidth_Bps
        return self.ciphertext_bytes(level, top) / bw


@dataclass
class Schedule:
    """When each op ran, and the totals a study reports."""

    start: list[float]
    end: list[float]
    makespan: float
    busy: list[float]                 # compute seconds per device
    wire: float                       # port-seconds of all transfers
    transfers: int
    bytes_moved: float
    compute_by_kind: dict[str, float] = field(default_factory=dict)


# Which ready op a free device runs first (Dask's priorities in engines/bsgs_run.py): baby steps
# another device waits for, then received ciphertexts, its own baby steps, giant steps, the rest.
_SENT, _RECV, _BABY, _GIANT, _OTHER = range(5)


# A wire part's endpoints and its (wire s, latency s) with the sender idle, and with it computing.
_Wire = tuple[int, int, tuple[float, float], tuple[float, float]]
_NO_WIRE: _Wire = (-1, -1, (0.0, 0.0), (0.0, 0.0))


@dataclass
class _PartGraph:
    """The DAG the scheduler runs: ops cut into *parts*, each on one resource (a device index,
    or -1 for a wire), with a duration, a priority and the parts it waits for. A compute op is
    one part; a ``send`` is three (serialise on the sender, the wire, deserialise on the
    receiver), shared by the sends of one batch and by the sends of one value."""

    dev: list[int] = field(default_factory=list)
    dur: list[float] = field(default_factory=list)
    prio: list[tuple[int, int]] = field(default_factory=list)
    deps: list[list[int]] = field(default_factory=list)
    task: list[bool] = field(default_factory=list)     # the part starts a task of the execution
    wire: list[_Wire] = field(default_factory=list)
    done_part: dict[int, int] = field(default_factory=dict)    # op id -> part that makes its value available
    first_part: dict[int, int] = field(default_factory=dict)   # op id -> its first part (its start)
    serialized: dict[int, int] = field(default_factory=dict)   # source op id -> its serialisation part
    batch_parts: dict[int, tuple[int, int]] = field(default_factory=dict)  # batch -> (wire, receive)
    by_kind: dict[str, float] = field(default_factory=dict)
    wire_total: float = 0.0
    moved: float = 0.0
    transfers: int = 0

    def add(self, dev: int, dur: float, prio: tuple[int, int], deps: list[int],
            wire: _Wire = _NO_WIRE, task: bool = False) -> int:
        self.dev.append(dev)
        self.task.append(task)
        self.dur.append(dur)
        self.prio.append(prio)
        self.deps.append(deps)
        self.wire.append(wire)
        return len(self.dev) - 1


def _concurrency_slowdown(ops: "list[Op]", costs: DagCosts) -> float:
    """Devices that share one machine's cores run each op slower when several work at once."""
    return costs.concurrent_slowdown if len({op.device for op in ops}) > 1 else 1.0


def _priority_class(op: "Op", sent_sources: set[int]) -> int:
    """Which of the scheduler's priority classes a compute op is in (see ``_SENT``)."""
    if op.id in sent_sources:
        return _SENT
    if op.kind in ("rotate", "hoisted_rotate") and op.label.startswith("baby") or op.label == "babies":
        return _BABY
    if op.label.startswith(("giant", "diag", "partial")):
        return _GIANT
    return _OTHER


def _add_compute(g: _PartGraph, op: "Op", costs: DagCosts, top: int, slow: float, sent_sources: set[int]) -> None:
    """One part for a compute op: the sum of its chain's op costs, on its device."""
    dur = 0.0
    for kind, level, count in op.work:
        c = count * costs.op_s(kind, level, top) * slow
        dur += c
        g.by_kind[kind] = g.by_kind.get(kind, 0.0) + c
    part = g.add(op.device, dur, (_priority_class(op, sent_sources), op.id), [g.done_part[d] for d in op.deps],
                 task=op.new_task)
    g.first_part[op.id] = g.done_part[op.id] = part


def _serialize_group(g: _PartGraph, group: "list[Op]", src: int, costs: DagCosts, slow: float) -> list[int]:
    """The serialisation parts the group's wire waits for: each value is serialised once,
    however many devices it goes to."""
    sers = []
    for o in group:
        source = o.deps[0]
        if source not in g.serialized:
            g.serialized[source] = g.add(src, costs.serialize_s * slow, (_SENT, o.id), [g.done_part[source]])
        sers.append(g.serialized[source])
    return sers


def _transfer_group(g: _PartGraph, op: "Op", group: "list[Op]", costs: DagCosts, top: int,
                    slow: float) -> tuple[int, int]:
    """The wire and receive parts of one message (a batch's sends, or one send): serialised,
    their bytes back to back on the wire, deserialised in one receiving task."""
    src, dst = op.device, op.dst
    assert dst is not None
    sers = _serialize_group(g, group, src, costs, slow)
    wire = sum(costs.wire_s(o.level, top) for o in group)
    busy_wire = sum(costs.wire_s(o.level, top, busy=True) for o in group)
    busy_lat = costs.latency_s if costs.busy_latency_s is None else costs.busy_latency_s
    w = g.add(-1, wire, (0, op.id), sers, (src, dst, (wire, costs.latency_s), (busy_wire, busy_lat)))
    recv = g.add(dst, len(group) * costs.deserialize_s * slow, (_RECV, op.id), [w], task=True)
    g.wire_total += wire
    g.moved += sum(costs.ciphertext_bytes(o.level, top) for o in group)
    g.transfers += len(group)
    return w, recv


def _add_send(g: _PartGraph, op: "Op", batch_ops: "dict[int, list[Op]]", costs: DagCosts, top: int,
              slow: float) -> None:
    """A send starts at its value's serialisation and is done when received; the first send of
    a batch makes the batch's message, the others are carried by it."""
    if op.batch is not None and op.batch in g.batch_parts:
        _, recv = g.batch_parts[op.batch]
    else:
        group = batch_ops[op.batch] if op.batch is not None else [op]
        w, recv = _transfer_group(g, op, group, costs, top, slow)
        if op.batch is not None:
            g.batch_parts[op.batch] = (w, recv)
    g.first_part[op.id], g.done_part[op.id] = g.serialized[op.deps[0]], recv


def _build_parts(dag: "OpDag", costs: DagCosts) -> _PartGraph:
    """Cut every op of ``dag``, in issue order, into the parts the scheduler runs."""
    top = dag.split.shape.level
    ops = dag.ops
    slow = _concurrency_slowdown(ops, costs)
    sent_sources = {d for op in ops if op.kind == "send" for d in op.deps}
    batch_ops: dict[int, list[Op]] = {}
    for op in ops:
        if op.kind == "send" and op.batch is not None:
            batch_ops.setdefault(op.batch, []).append(op)
    g = _PartGraph()
    for op in ops:
        if op.kind == "send":
            _add_send(g, op, batch_ops, costs, top, slow)
        else:
            _add_compute(g, op, costs, top, slow, sent_sources)
    return g


class _ListScheduler:
    """The event loop over a part graph: parts become ready when their inputs are done; at each
    instant, once every event of it is known, each free device starts its ready part of best
    priority and each ready wire starts when both its ports are free."""

    def __init__(self, g: _PartGraph, devices: int, task_s: float) -> None:
        m = len(g.dev)
        self.g = g
        self.task_s = task_s
        self.waiting = [len(d) for d in g.deps]
        self.users: list[list[int]] = [[] for _ in range(m)]
        for p, deps in enumerate(g.deps):
            for d in deps:
                self.users[d].append(p)
        self.pstart = [0.0] * m
        self.pend = [0.0] * m          # when the part's output is available (wires: after the latency)
        self.ready_at = [0.0] * m
        self.free_at = [0.0] * devices
        self.busy_dev = [False] * devices
        self.started = [False] * devices
        self.queues: list[list[tuple[tuple[int, int], int]]] = [[] for _ in range(devices)]
        self.out_free = [0.0] * devices
        self.in_free = [0.0] * devices
        self.busy = [0.0] * devices
        self.events: list[tuple[float, int, int, int]] = []   # (time, order, kind 0=done 1=ready, part)
        self.seq = 0
        self.dirty: set[int] = set()
        self.wires: list[int] = []

    def push(self, t: float, kind: int, p: int) -> None:
        heapq.heappush(self.events, (t, self.seq, kind, p))
        self.seq += 1

    def dispatch(self, dev: int, now: float) -> None:
        """Start the device's ready part of best priority, if it is free; a scheduler round trip
        (``task_s``) comes before each task and before the device's first part."""
        if self.busy_dev[dev] or not self.queues[dev]:
            return
        _, p = heapq.heappop(self.queues[dev])
        t = max(now, self.free_at[dev])
        if self.g.task[p] or not self.started[dev]:
            t += self.task_s
            self.started[dev] = True
        self.pstart[p] = t
        self.pend[p] = t + self.g.dur[p]
        self.busy_dev[dev] = True
        self.busy[dev] += self.g.dur[p]
        self.push(self.pend[p], 0, p)

    def on_ready(self, p: int) -> None:
        dev = self.g.dev[p]
        if dev < 0:
            self.wires.append(p)                          # started once the devices have chosen
        else:
            heapq.heappush(self.queues[dev], (self.g.prio[p], p))
            self.dirty.add(dev)

    def on_done(self, p: int, now: float) -> None:
        dev = self.g.dev[p]
        if dev >= 0:
            self.busy_dev[dev] = False
            self.free_at[dev] = now
            self.dirty.add(dev)
        for u in self.users[p]:
            self.waiting[u] -= 1
            self.ready_at[u] = max(self.ready_at[u], now)
            if self.waiting[u] == 0:
                self.push(self.ready_at[u], 1, u)

    def start_wires(self, now: float) -> None:
        """Start the ready wires; a sender that computes now sends slower."""
        for w in self.wires:
            src, dst, idle, computing = self.g.wire[w]
            wire, lat = computing if self.busy_dev[src] else idle
            t0 = max(now, self.out_free[src], self.in_free[dst])
            self.out_free[src] = self.in_free[dst] = t0 + wire
            self.pstart[w], self.pend[w] = t0, t0 + wire + lat
            self.push(self.pend[w], 0, w)
        self.wires.clear()

    def run(self) -> None:
        for p in range(len(self.g.dev)):
            if self.waiting[p] == 0:
                self.push(0.0, 1, p)
        while self.events:
            now, _, kind, p = heapq.heappop(self.events)
            if kind == 1:
                self.on_ready(p)
            else:
                self.on_done(p, now)
            if not self.events or self.events[0][0] > now:   # everything of this instant is known:
                for dev in sorted(self.dirty):                # now choose by priority
                    self.dispatch(dev, now)
                self.dirty.clear()
                self.start_wires(now)
        if any(self.waiting):
            raise ConfigError("the op DAG has a cycle or a dangling dependency")


def schedule(dag: "OpDag", costs: DagCosts) -> Schedule:
    """List-schedule ``dag`` (see the module docstring): whenever a device is free it starts the
    ready op of best priority (ops another device waits for, received ciphertexts, its own baby
    steps, giant steps, then the rest; ties in issue order); a transfer starts when its
    sender's outgoing and receiver's incoming ports are free. A ``send`` is three parts: the
    sender serialises the value (once, however many devices it goes to), the bytes cross, the
    receiver deserialises. The makespan is when the result is complete on its device."""
    g = _build_parts(dag, costs)
    run = _ListScheduler(g, dag.split.devices, costs.task_s)
    run.run()
    start = [run.pstart[g.first_part[op.id]] for op in dag.ops]
    end = [run.pend[g.done_part[op.id]] for op in dag.ops]
    return Schedule(start, end, end[dag.result], run.busy, g.wire_total, g.transfers, g.moved, g.by_kind)


def scheduled_devices(result: Schedule) -> list[Device]:
    """The devices of a schedule as the vocabulary's Devices (their compute seconds), so that a
    type checker verifies the scheduler's accounts conform to the protocol."""
    return [device_account(f"device{i}", "device", b) for i, b in enumerate(result.busy)]
