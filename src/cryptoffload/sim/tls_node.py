"""A management node serving file requests over TLS: SimPy simulation and clients-per-core planner.

Why its own module: :mod:`cryptoffload.sim.smartnic` says what one request costs in each mode
(the cost model); this module says what a stream of them does to ``C`` cores and one SmartNIC
port. The node: ``C`` cores (a FIFO :class:`~cryptoffload.sim.devices.Device`, one nginx worker
per core) serve an open-loop Poisson stream of requests drawn from a file-size mix; each request
holds a core for its modelled CPU time, waits any non-CPU hand-off time, then sends its wire bytes
through the NIC (:class:`SmartNicDevice`: a processor-sharing :class:`~cryptoffload.sim.links.Link`
at the wire rate). CPU work and transmission are sequential, which over-states the latency of one
large file a little and changes no capacity. The planner :func:`clients_per_core` bisects on the
client count for the highest one whose simulated p99 stays under a latency target, below 95 % of
the closed-form capacity; every run of one search uses the same random draws (common random
numbers), so the simulated p99 is monotone in the client count and bisection is exact.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Iterable

import numpy as np

from cryptoffload.checks import JsonDict
from cryptoffload.errors import ConfigError
from cryptoffload.sim.core import (
    LatencyStats,
    ProcessGenerator,
    Simulation,
    check_count,
    check_non_negative,
    check_positive,
)
from cryptoffload.sim.devices import FifoDevice
from cryptoffload.sim.links import SharedLink
from cryptoffload.sim.protocols import Link
from cryptoffload.sim.smartnic import SERVING_MODES, FileMix, TlsCostModel, check_mode, normalise_mix

__all__ = ["SmartNicDevice", "ManagementNodeModel", "NodeRunResult", "simulate_node", "ClientPlan",
           "clients_per_core", "plan_modes"]


class SmartNicDevice:
    """The BlueField-2 port as the host sees it: a link at the TCP payload rate of the line
    rate, shared fairly by concurrent responses, and -- only when the profile gives a record
    rate -- a crypto engine that processes ``ktls-nic`` records one after the other."""

    def __init__(self, sim: Simulation, model: TlsCostModel, name: str = "nic") -> None:
        self.model = model
        self.link: Link = SharedLink(sim, name, bandwidth=model.wire_rate_Bps)
        rate = model.params.max_records_per_s
        self.engine = None if rate is None else FifoDevice(sim, f"{name}-crypto", servers=1)

    def send(self, mode: str, size: int) -> ProcessGenerator:
        check_mode(mode)
        wire = self.model.wire_bytes(mode, size)
        records = self.model.records(size)
        return self._send(mode, wire, records)

    def _send(self, mode: str, wire: float, records: int) -> ProcessGenerator:
        rate = self.model.params.max_records_per_s  # an engine exactly when the NIC has a record rate
        if self.engine is not None and rate is not None and mode == "ktls-nic":
            yield from self.engine.execute(records / rate)
        timing = yield from self.link.transfer(wire)
        return timing


@dataclass(frozen=True)
class NodeRunResult:
    """One simulated run; latencies are from arrival to the last byte leaving the NIC."""

    mode: str
    cores: int
    arrival_rate: float
    offered_cpu_load: float
    requests: int
    throughput_rps: float
    mean_latency_s: float
    p99_latency_s: float
    latency: LatencyStats
    cpu_utilisation: float
    nic_utilisation: float
    provenance: str
    method: str = "simulated"

    def as_dict(self) -> JsonDict:
        d = asdict(self)
        d["latency"] = self.latency.as_dict()
        return d


class ManagementNodeModel:
    """``cores`` cores and one SmartNIC port serving a Poisson stream of file requests."""

    def __init__(self, model: TlsCostModel, mode: str, file_mix: FileMix, cores: int = 1,
                 seed: int = 0) -> None:
        if not isinstance(model, TlsCostModel):
            raise ConfigError("model must be a TlsCostModel")
        self.model = model
        self.mode = check_mode(mode)
        self.mix = normalise_mix(file_mix)
        self.cores = check_count("cores", cores)
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ConfigError(f"seed must be a non-negative integer, got {seed!r}")
        self.seed = int(seed)
        self._costs = {s: model.cost(mode, s) for s, _ in self.mix}
        self.capacity = model.capacity(mode, dict(self.mix), cores)

    def run(self, arrival_rate: float, n_requests: int = 20000,
            warmup_fraction: float = 0.1) -> NodeRunResult:
        rate = check_positive("arrival_rate", arrival_rate)
        n = check_count("n_requests", n_requests)
        wf = check_non_negative("warmup_fraction", warmup_fraction)
        if wf >= 1.0:
            raise ConfigError(f"warmup_fraction must be below 1, got {warmup_fraction!r}")
        skip = int(n * wf)
        if n - skip < 1:
            raise ConfigError("no request left after the warm-up; raise n_requests")
        sim = Simulation(self.seed)
        env = sim.env
        cpu = FifoDevice(sim, "cpu", servers=self.cores)
        nic = SmartNicDevice(sim, self.model)
        # Common random numbers: the same unit draws for every rate, so runs at different
        # rates (or core counts, or modes) see the same requests in the same order.
        gaps = sim.rng.exponential(1.0, n) / rate
        cum = np.cumsum([w for _, w in self.mix])
        idx = np.minimum(np.searchsorted(cum, sim.rng.random(n), side="right"), len(self.mix) - 1)
        sizes = [self.mix[i][0] for i in idx]
        arrival = np.zeros(n)
        finish = np.zeros(n)
        mode = self.mode

        def request(i: int, size: int) -> ProcessGenerator:
            c = self._costs[size]
            arrival[i] = env.now
            yield from cpu.execute(c.cpu_s)
            if c.delay_s > 0.0:
                yield env.timeout(c.delay_s)
            yield from nic.send(mode, size)
            finish[i] = env.now

        def source() -> ProcessGenerator:
            for i in range(n):
                yield env.timeout(float(gaps[i]))
                env.process(request(i, sizes[i]))

        env.process(source())
        sim.run()
        a, f = arrival[skip:], finish[skip:]
        lat = LatencyStats.from_latencies(f - a)
        span = float(f.max() - a.min())
        mean_cpu = sum(w * self._costs[s].cpu_s for s, w in self.mix)
        return NodeRunResult(
            mode=mode, cores=self.cores, arrival_rate=rate,
            offered_cpu_load=rate * mean_cpu / self.cores, requests=int(a.size),
            throughput_rps=a.size / span if span > 0 else float("inf"),
            mean_latency_s=lat.mean, p99_latency_s=lat.p99, latency=lat,
            cpu_utilisation=cpu.utilisation(sim.now), nic_utilisation=nic.link.utilisation(sim.now),
            provenance=self.model.provenance(mode),
        )


def simulate_node(model: TlsCostModel, mode: str, file_mix: FileMix, arrival_rate: float,
                  cores: int = 1, n_requests: int = 20000, seed: int = 0,
                  warmup_fraction: float = 0.1) -> NodeRunResult:
    return ManagementNodeModel(model, mode, file_mix, cores, seed).run(
        arrival_rate, n_requests, warmup_fraction)


# -- planner ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ClientPlan:
    """How many clients ``cores`` cores serve in ``mode`` with p99 under the target."""

    mode: str
    cores: int
    clients: int
    clients_per_core: float
    request_rate_per_client: float
    latency_target_s: float
    p99_latency_s: float | None
    capacity_clients: float
    bound: str
    max_utilisation: float
    provenance: str
    runs: int

    def as_dict(self) -> JsonDict:
        return asdict(self)


def clients_per_core(
    mode: str,
    file_mix: FileMix,
    latency_target_s: float,
    request_rate_per_client: float,
    *,
    model: TlsCostModel,
    cores: int = 1,
    n_requests: int = 4000,
    seed: int = 0,
    warmup_fraction: float = 0.1,
    max_utilisation: float = 0.95,
) -> ClientPlan:
    """The most clients (each a Poisson source of ``request_rate_per_client`` requests/s)
    whose simulated p99 latency stays at or under ``latency_target_s``.

    Client counts whose load exceeds ``max_utilisation`` of the closed-form capacity are not
    simulated and count as infeasible: at the capacity the queue grows without bound, and
    close to it a run of ``n_requests`` cannot reach steady state, so it would under-state the
    tail. 0.95 is operating headroom chosen for the planner, not a measured figure; pass 1.0
    to search right up to the capacity. Below that bound the search bisects, every run using
    the same random draws (so the simulated p99 grows monotonically with the client count).
    """
    target = check_positive("latency_target_s", latency_target_s)
    per_client = check_positive("request_rate_per_client", request_rate_per_client)
    umax = check_positive("max_utilisation", max_utilisation)
    if umax > 1.0:
        raise ConfigError(f"max_utilisation must be in (0, 1], got {max_utilisation!r}")
    node = ManagementNodeModel(model, mode, file_mix, cores, seed)
    cap = node.capacity
    limit = umax * cap.requests_per_s
    n_max = math.floor(limit / per_client)
    while n_max > 0 and n_max * per_client >= cap.requests_per_s:  # never at the capacity
        n_max -= 1
    hi = n_max + 1  # smallest client count not allowed
    lo, lo_p99, runs = 0, None, 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        r = node.run(mid * per_client, n_requests, warmup_fraction)
        runs += 1
        if r.p99_latency_s <= target:
            lo, lo_p99 = mid, r.p99_latency_s
        else:
            hi = mid
    return ClientPlan(mode, node.cores, lo, lo / node.cores, per_client, target, lo_p99,
                      cap.requests_per_s / per_client, cap.bound, umax, model.provenance(mode),
                      runs)


def plan_modes(file_mix: FileMix, latency_target_s: float, request_rate_per_client: float, *,
               model: TlsCostModel, cores: int = 1, modes: Iterable[str] = SERVING_MODES,
               n_requests: int = 4000, seed: int = 0,
               max_utilisation: float = 0.95) -> dict[str, ClientPlan]:
    """:func:`clients_per_core` for each mode: clients per core with and without the DPU."""
    return {m: clients_per_core(m, file_mix, latency_target_s, request_rate_per_client,
                                model=model, cores=cores, n_requests=n_requests, seed=seed,
                                max_utilisation=max_utilisation)
            for m in modes}


