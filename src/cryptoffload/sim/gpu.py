"""A GPU running Paillier batches, as a simulated device driven by a *measured* profile.

Why these parts: ``cryptoffload calibrate gpu`` times the real kernels (``crypto/paillier_gpu``)
and the host<->device copies, and this model composes exactly those measured pieces the way
:class:`~cryptoffload.engines.gpu.GpuEngine` composes them: each batch is copied in over PCIe
(a :class:`~cryptoffload.sim.links.Link`, host to device), computed by one kernel launch (the
GPU's compute, a one-server :class:`~cryptoffload.sim.devices.Device`: a batch large enough to
be worth a launch fills every multiprocessor, so batches run one after another), and copied
out over the other direction's link. ``streams`` batches are in flight at once, each stream
issuing its batches in order, so copies of one batch overlap the kernel of another, as the
engine's streams do.

Kernel time per batch of ``b`` instances: ``fixed_s + per_item_s * max(b, wave_items)`` -- a
launch cost, a cost per instance once the GPU is full, and ``wave_items``: below that many
instances the GPU is not full and a batch costs as much as ``wave_items`` would (one thread per
instance). The three numbers per operation are fitted by the calibration to the batch sizes it
measured; the study then compares this model's prediction with measured runs at *other* batch
sizes and mixes of operations (never the fitted ones), and reports the error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from cryptoffload.checks import JsonDict
from cryptoffload.errors import ConfigError
from cryptoffload.profiles.loader import Profile, load_profile
from cryptoffload.sim.core import ProcessGenerator, Simulation, check_count, check_positive
from cryptoffload.sim.devices import FifoDevice
from cryptoffload.sim.links import SharedLink
from cryptoffload.sim.protocols import Device

#: Operations a GPU profile prices: DJN encryption (per ciphertext), CRT decryption (per
#: ciphertext), aggregation (per ciphertext multiplied into a column product).
OPS = ("encrypt", "decrypt", "aggregate")
OP_FIELDS = ("fixed_s", "per_item_s", "wave_items", "bytes_in", "bytes_out")
LINK_FIELDS = ("h2d_bytes_per_s", "d2h_bytes_per_s", "latency_s")
REQUIRED_FIELDS: tuple[str, ...] = (tuple(f"ops.{op}.{f}" for op in OPS for f in OP_FIELDS)
                                    + tuple(f"link.{f}" for f in LINK_FIELDS))


@dataclass(frozen=True)
class GpuOpCost:
    """One operation's measured costs (seconds, instances, bytes per instance)."""

    fixed_s: float
    per_item_s: float
    wave_items: float
    bytes_in: float
    bytes_out: float

    def __post_init__(self) -> None:
        for name in ("fixed_s", "bytes_in", "bytes_out"):
            if getattr(self, name) < 0:
                raise ConfigError(f"GPU cost {name} must be >= 0, got {getattr(self, name)!r}")
        check_positive("per_item_s", self.per_item_s)
        if self.wave_items < 1:
            raise ConfigError(f"wave_items must be >= 1, got {self.wave_items!r}")

    def kernel_s(self, items: int) -> float:
        """Seconds of one launch over ``items`` instances."""
        return self.fixed_s + self.per_item_s * max(float(items), self.wave_items)


@dataclass(frozen=True)
class GpuParams:
    """A GPU's costs: per operation, and the two copy directions."""

    ops: dict[str, GpuOpCost]
    h2d_bytes_per_s: float
    d2h_bytes_per_s: float
    latency_s: float
    name: str = "GPU"

    @classmethod
    def from_profile(cls, profile: Profile) -> "GpuParams":
        ops = {op: GpuOpCost(**{f: profile.value(f"ops.{op}.{f}") for f in OP_FIELDS}) for op in OPS}
        gpu = profile.meta.get("gpu") or profile.name
        return cls(ops, profile.value("link.h2d_bytes_per_s"), profile.value("link.d2h_bytes_per_s"),
                   profile.value("link.latency_s"), str(gpu))

    def op(self, name: str) -> GpuOpCost:
        try:
            return self.ops[name]
        except KeyError:
            raise ConfigError(f"unknown GPU operation {name!r}; choose one of {', '.join(OPS)}") from None


def load_gpu_params(name_or_path: str) -> GpuParams:
    """A GPU profile (written by ``cryptoffload calibrate gpu``) as model parameters."""
    return GpuParams.from_profile(load_profile(name_or_path, REQUIRED_FIELDS))


class GpuDevice:
    """The model's GPU: host-to-device link, compute, device-to-host link (module docstring).
    A Device through its compute part: its busy time is the kernels' (:func:`as_device` has
    the type checker verify it)."""

    resource_type = "gpu"

    def __init__(self, sim: Simulation, name: str, params: GpuParams) -> None:
        self.sim = sim
        self.name = name
        self.params = params
        self.compute = FifoDevice(sim, f"{name}.compute", servers=1)
        self.h2d = SharedLink(sim, f"{name}.h2d", params.h2d_bytes_per_s, params.latency_s)
        self.d2h = SharedLink(sim, f"{name}.d2h", params.d2h_bytes_per_s, params.latency_s)

    @property
    def busy_time(self) -> float:
        return self.compute.busy_time

    def utilisation(self, span: float) -> float:
        return self.compute.utilisation(span)

    def report(self, span: float | None) -> JsonDict:
        return {**self.compute.report(span), "type": self.resource_type}

    def run_batch(self, op: str, items: int, kind: Any = None) -> ProcessGenerator:
        """Copy in, compute, copy out one batch of ``items`` instances of ``op``."""
        cost = self.params.op(op)
        check_count("items", items)

        def proc() -> ProcessGenerator:
            start = self.sim.env.now
            if cost.bytes_in:
                yield from self.h2d.transfer(cost.bytes_in * items)
            yield from self.compute.execute(cost.kernel_s(items))
            if cost.bytes_out:
                yield from self.d2h.transfer(cost.bytes_out * items)
            if kind is not None:
                self.sim.metrics.record(kind, start, self.sim.env.now)

        return proc()


def as_device(gpu: GpuDevice) -> Device:
    """``gpu`` as the vocabulary's Device: a type checker verifies that GpuDevice conforms."""
    return gpu


@dataclass(frozen=True)
class GpuPrediction:
    """What the model predicts for a list of batches."""

    makespan_s: float
    items: int
    compute_busy_s: float

    @property
    def throughput_ops(self) -> float:
        return self.items / self.makespan_s


def check_batches(batches: Sequence[tuple[str, int]]) -> list[tuple[str, int]]:
    out = []
    for b in batches:
        if not (isinstance(b, tuple) and len(b) == 2 and b[0] in OPS and isinstance(b[1], int) and b[1] >= 1):
            raise ConfigError(f"a GPU batch is (operation in {OPS}, positive instance count), got {b!r}")
        out.append(b)
    if not out:
        raise ConfigError("no batches to run")
    return out


def simulate_batches(params: GpuParams, batches: Sequence[tuple[str, int]], streams: int = 2) -> GpuPrediction:
    """Predict the time of ``batches`` (issued round-robin onto ``streams`` streams, each
    stream in order) on the modelled GPU."""
    batches = check_batches(batches)
    check_count("streams", streams)
    sim = Simulation()
    gpu = GpuDevice(sim, "gpu", params)

    def stream(mine: list[tuple[str, int]]) -> ProcessGenerator:
        for op, items in mine:
            yield from gpu.run_batch(op, items)

    for s in range(streams):
        mine = batches[s::streams]
        if mine:
            sim.process(stream(mine))
    sim.run()
    return GpuPrediction(sim.now, sum(b[1] for b in batches), gpu.compute.busy_time)


__all__ = ["GpuDevice", "GpuOpCost", "GpuParams", "GpuPrediction", "OPS", "REQUIRED_FIELDS", "as_device",
           "check_batches", "load_gpu_params", "simulate_batches"]
