"""Price an HE op DAG on N devices joined by links: list scheduling in issue order.

Why a scheduler and not a sum of op counts: on several devices the time of a BSGS product is
set by *waiting* -- for a baby step another device rotated, for a partial sum in the
reduction tree, for a busy link -- and those waits depend on which device does what. The model
here is deliberately simple and stated in full, so that it can be checked against real runs
(``engines/bsgs_run.py``) and against the closed forms it must reduce to:

* each device runs its ops one at a time, in the DAG's issue order; an op starts when the
  device is free and every input is available on that device;
* a ``send`` moves one ciphertext: the sender spends ``serialize_s`` of compute, then the bytes
  occupy the sender's outgoing port and the receiver's incoming port for ``bytes / bandwidth``
  (ports are full duplex, one transfer at a time per direction), and arrive ``latency_s``
  later; the receiver spends ``deserialize_s`` of compute on them before use;
* ``task_s`` (a scheduler's fixed cost per dependent task, measured for Dask; 0 for an FPGA)
  is charged once when a device starts (dispatch), once when its giant steps start after their
  baby steps (a new task that waited on others), and once per transfer, on the receiver --
  the task layout of ``engines/bsgs_run.py``.

An op may stand for a chain of identical or mixed ops (``Op.work``); the cost of a chain with no
outside dependency inside it is the sum of its parts, so merging such a chain does not change
the schedule (tested), which is what makes exhaustive searches over ``bs`` affordable.

Costs come from a profile (``[ops]``, ``[ciphertext]``, ``[link]``, optional ``[ring]`` and
``[overhead]``; see :class:`DagCosts`), either cited (``profiles/bsgs_u280.toml``) or measured
on this machine (``cryptoffload calibrate ckks``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

from cryptoffload.errors import ConfigError, ProfileError
from cryptoffload.profiles.loader import Profile, load_profile

if TYPE_CHECKING:
    from cryptoffload.workloads.bsgs import OpDag

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

    def wire_s(self, level: int, top: int) -> float:
        """Port occupancy of one ciphertext transfer (bytes / bandwidth)."""
        return self.ciphertext_bytes(level, top) / self.bandwidth_Bps


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


def schedule(dag: "OpDag", costs: DagCosts) -> Schedule:
    """List-schedule ``dag`` in issue order (see the module docstring); the makespan is when
    the result is complete on its device."""
    top = dag.split.shape.level
    n = dag.split.devices
    free = [0.0] * n
    out_free = [0.0] * n
    in_free = [0.0] * n
    started = [False] * n
    busy = [0.0] * n
    start = [0.0] * len(dag.ops)
    end = [0.0] * len(dag.ops)
    by_kind: dict[str, float] = {}
    wire_total = 0.0
    moved = 0.0
    transfers = 0
    for op in dag.ops:
        ready = max((end[d] for d in op.deps), default=0.0)
        if op.kind == "send":
            src, dst = op.device, op.dst
            assert dst is not None
            s0 = max(free[src], ready)
            s1 = s0 + costs.serialize_s
            free[src] = s1
            busy[src] += costs.serialize_s
            wire = costs.wire_s(op.level, top)
            t0 = max(s1, out_free[src], in_free[dst])
            out_free[src] = in_free[dst] = t0 + wire
            arrive = t0 + wire + costs.latency_s
            d0 = max(free[dst], arrive)
            d1 = d0 + costs.deserialize_s + costs.task_s
            free[dst] = d1
            busy[dst] += costs.deserialize_s
            start[op.id], end[op.id] = s0, d1
            wire_total += wire
            moved += costs.ciphertext_bytes(op.level, top)
            transfers += 1
            continue
        d = op.device
        t = max(free[d], ready)
        if not started[d]:
            t += costs.task_s
            started[d] = True
        if op.new_task:
            t += costs.task_s
        dur = 0.0
        for kind, level, count in op.work:
            c = count * costs.op_s(kind, level, top)
            dur += c
            by_kind[kind] = by_kind.get(kind, 0.0) + c
        start[op.id], end[op.id] = t, t + dur
        free[d] = t + dur
        busy[d] += dur
    return Schedule(start, end, end[dag.result], busy, wire_total, transfers, moved, by_kind)


def makespans(dags: Sequence["OpDag"], costs: DagCosts) -> list[float]:
    return [schedule(d, costs).makespan for d in dags]
