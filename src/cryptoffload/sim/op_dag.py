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

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cryptoffload.errors import ConfigError, ProfileError
from cryptoffload.profiles.loader import Profile, load_profile
from cryptoffload.sim.protocols import Device, Link, implements

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
        if self.busy_bandwidth_Bps is not None and not (self.busy_bandwidth_Bps > 0 and self.busy_latency_s >= 0):
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


@implements(Device, Link)  # list scheduling of an op DAG on devices joined by links
def schedule(dag: "OpDag", costs: DagCosts) -> Schedule:
    """List-schedule ``dag`` (see the module docstring): whenever a device is free it starts the
    ready op of best priority (ops another device waits for, received ciphertexts, its own baby
    steps, giant steps, then the rest; ties in issue order); a transfer starts when its
    sender's outgoing and receiver's incoming ports are free. A ``send`` is three parts: the
    sender serialises the value (once, however many devices it goes to), the bytes cross, the
    receiver deserialises. The makespan is when the result is complete on its device."""
    import heapq

    top = dag.split.shape.level
    n = dag.split.devices
    ops = dag.ops
    # devices that share one machine's cores run each op slower when several work at once
    slow = costs.concurrent_slowdown if len({op.device for op in ops}) > 1 else 1.0
    # parts: (resource, duration, prio); resource = device index, or -1 for a wire
    part_dev: list[int] = []
    part_dur: list[float] = []
    part_prio: list[tuple[int, int]] = []
    part_deps: list[list[int]] = []
    part_task: list[bool] = []      # the part starts a task of the execution
    # wires only: src, dst, (wire s, latency s) with the sender idle, and with it computing
    part_wire: list[tuple[int, int, tuple[float, float], tuple[float, float]]] = []
    done_part: dict[int, int] = {}       # op id -> part whose completion makes the op's value available
    first_part: dict[int, int] = {}      # op id -> its first part (its start)
    serialized: dict[int, int] = {}      # source op id -> its serialisation part
    sent_sources = {d for op in ops if op.kind == "send" for d in op.deps}
    by_kind: dict[str, float] = {}
    wire_total = moved = 0.0
    transfers = 0

    def add_part(dev: int, dur: float, prio: tuple[int, int], deps: list[int],
                 wire: tuple[int, int, tuple[float, float], tuple[float, float]] = (-1, -1, (0.0, 0.0), (0.0, 0.0)),
                 task: bool = False) -> int:
        part_dev.append(dev)
        part_task.append(task)
        part_dur.append(dur)
        part_prio.append(prio)
        part_deps.append(deps)
        part_wire.append(wire)
        return len(part_dev) - 1

    batch_parts: dict[int, tuple[int, int]] = {}     # batch -> (wire part, receive part)
    batch_ops: dict[int, list[Op]] = {}
    for op in ops:
        if op.kind == "send" and op.batch is not None:
            batch_ops.setdefault(op.batch, []).append(op)
    for op in ops:
        deps = [done_part[d] for d in op.deps]
        if op.kind == "send":
            src, dst = op.device, op.dst
            assert dst is not None
            if op.batch is not None and op.batch in batch_parts:     # sent with its batch
                w, recv = batch_parts[op.batch]
            else:
                group = batch_ops[op.batch] if op.batch is not None else [op]
                sers = []
                for o in group:      # each value is serialised once, however many devices it goes to
                    source = o.deps[0]
                    if source not in serialized:
                        serialized[source] = add_part(src, costs.serialize_s * slow, (_SENT, o.id),
                                                      [done_part[source]])
                    sers.append(serialized[source])
                wire = sum(costs.wire_s(o.level, top) for o in group)
                busy_wire = sum(costs.wire_s(o.level, top, busy=True) for o in group)
                busy_lat = costs.latency_s if costs.busy_latency_s is None else costs.busy_latency_s
                w = add_part(-1, wire, (0, op.id), sers, (src, dst, (wire, costs.latency_s), (busy_wire, busy_lat)))
                recv = add_part(dst, len(group) * costs.deserialize_s * slow, (_RECV, op.id), [w], task=True)
                if op.batch is not None:
                    batch_parts[op.batch] = (w, recv)
                wire_total += wire
                moved += sum(costs.ciphertext_bytes(o.level, top) for o in group)
                transfers += len(group)
            first_part[op.id], done_part[op.id] = serialized[op.deps[0]], recv
            continue
        dur = 0.0
        for kind, level, count in op.work:
            c = count * costs.op_s(kind, level, top) * slow
            dur += c
            by_kind[kind] = by_kind.get(kind, 0.0) + c
        if op.id in sent_sources:
            cls = _SENT
        elif op.kind in ("rotate", "hoisted_rotate") and op.label.startswith("baby") or op.label == "babies":
            cls = _BABY
        elif op.label.startswith(("giant", "diag", "partial")):
            cls = _GIANT
        else:
            cls = _OTHER
        part = add_part(op.device, dur, (cls, op.id), deps, task=op.new_task)
        first_part[op.id] = done_part[op.id] = part

    m = len(part_dev)
    waiting = [len(d) for d in part_deps]
    users: list[list[int]] = [[] for _ in range(m)]
    for p, deps in enumerate(part_deps):
        for d in deps:
            users[d].append(p)
    pstart = [0.0] * m
    pend = [0.0] * m          # when the part's output is available (wires: after the latency)
    ready_at = [0.0] * m
    free_at = [0.0] * n
    busy_dev = [False] * n
    started = [False] * n
    queues: list[list[tuple[tuple[int, int], int]]] = [[] for _ in range(n)]
    out_free = [0.0] * n
    in_free = [0.0] * n
    busy = [0.0] * n
    events: list[tuple[float, int, int, int]] = []   # (time, order, kind 0=done 1=ready, part)
    seq = 0

    def push(t: float, kind: int, p: int) -> None:
        nonlocal seq
        heapq.heappush(events, (t, seq, kind, p))
        seq += 1

    def dispatch(dev: int, now: float) -> None:
        if busy_dev[dev] or not queues[dev]:
            return
        _, p = heapq.heappop(queues[dev])
        t = max(now, free_at[dev])
        if part_task[p] or not started[dev]:     # a scheduler round trip before each task
            t += costs.task_s
            started[dev] = True
        pstart[p] = t
        pend[p] = t + part_dur[p]
        busy_dev[dev] = True
        busy[dev] += part_dur[p]
        push(pend[p], 0, p)

    for p in range(m):
        if waiting[p] == 0:
            push(0.0, 1, p)
    dirty: set[int] = set()
    wires: list[int] = []
    while events:
        now, _, kind, p = heapq.heappop(events)
        if kind == 1:                                    # p became ready
            dev = part_dev[p]
            if dev < 0:
                wires.append(p)                          # started once the devices have chosen
            else:
                heapq.heappush(queues[dev], (part_prio[p], p))
                dirty.add(dev)
        else:
            dev = part_dev[p]                            # p finished
            if dev >= 0:
                busy_dev[dev] = False
                free_at[dev] = now
                dirty.add(dev)
            for u in users[p]:
                waiting[u] -= 1
                ready_at[u] = max(ready_at[u], now)
                if waiting[u] == 0:
                    push(ready_at[u], 1, u)
        if not events or events[0][0] > now:            # everything of this instant is known:
            for dev in sorted(dirty):                    # now choose by priority
                dispatch(dev, now)
            dirty.clear()
            for w in wires:                              # a sender that computes now sends slower
                src, dst, idle, computing = part_wire[w]
                wire, lat = computing if busy_dev[src] else idle
                t0 = max(now, out_free[src], in_free[dst])
                out_free[src] = in_free[dst] = t0 + wire
                pstart[w], pend[w] = t0, t0 + wire + lat
                push(pend[w], 0, w)
            wires.clear()
    if any(waiting):
        raise ConfigError("the op DAG has a cycle or a dangling dependency")
    start = [pstart[first_part[op.id]] for op in ops]
    end = [pend[done_part[op.id]] for op in ops]
    return Schedule(start, end, end[dag.result], busy, wire_total, transfers, moved, by_kind)
