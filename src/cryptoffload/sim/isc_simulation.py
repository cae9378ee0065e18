"""A compiled HE program run on an in-storage platform: ``k`` boards, each running inferences
one after another, fed over the platform's path (see :mod:`.isc_platform`).

Each board runs one inference at a time (query-level parallelism, no board-to-board traffic).
Within an inference, transfers are issued in program order as early as DRAM allows (HE is
data-oblivious, so the order is known: the paper lays data out for sequential reads and hides
transfer latency by prefetching): a reservation for a step's fetched data and outputs is taken
in program order before its last hop, and dead data is evicted as soon as its last reader has
run. Hops before the last one stage through host memory, which is assumed large enough
(the paper's assumption). Hops are store-and-forward per step and pipelined across steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cryptoffload.checks import JsonValue
from cryptoffload.errors import ConfigError
from cryptoffload.sim.core import ProcessGenerator, Simulation, check_count, check_positive
from cryptoffload.sim.device_dram import DeviceDRAM
from cryptoffload.sim.devices import FifoDevice
from cryptoffload.sim.isc_platform import GB, PLATFORMS, PlatformPreset
from cryptoffload.sim.links import SharedLink
from cryptoffload.sim.program_steps import CompiledProgram, prefetch_gates
from cryptoffload.sim.storage import NandFlash, Ssd, pcie_link


@dataclass
class IscRun:
    """What one simulation gives: per-inference latencies, the makespan, DRAM's peak (and
    occupancy over time when recorded) and every resource's report."""

    platform: str
    devices: int
    queries: int
    latencies_s: list[float]
    makespan_s: float
    dram_peak_bytes: float
    occupancy: list[tuple[float, float]] = field(default_factory=list)
    resources: JsonValue = field(default_factory=dict)

    @property
    def mean_latency_s(self) -> float:
        return sum(self.latencies_s) / len(self.latencies_s)

    @property
    def throughput_per_s(self) -> float:
        """Inferences completed per second over the whole run (all boards)."""
        return self.devices * self.queries / self.makespan_s


def _paths(sim: Simulation, preset: PlatformPreset, k: int, source_bps: float | None) -> list[list[SharedLink]]:
    lane = preset.lane_bps
    if preset.name == "csd":
        bw = source_bps or preset.nand_read_bps
        return [[NandFlash(sim, f"nand{d}", bw, preset.storage_bytes or 1.0)] for d in range(k)]
    def board_link(d: int) -> SharedLink:
        return pcie_link(sim, f"fpga{d}-x{preset.device_lanes}", preset.device_lanes, lane)

    if preset.name == "fpga_only":
        host = SharedLink(sim, "host-lanes", source_bps) if source_bps else pcie_link(sim, "host-lanes", preset.host_lanes, lane)
        return [[host, board_link(d)] for d in range(k)]
    if preset.name == "fpga_ssd":
        ssd = Ssd(sim, "ssd-lanes", source_bps or preset.ssd_lanes * lane, preset.storage_bytes or 1.0)
        pool = SharedLink(sim, "fpga-lanes", source_bps) if source_bps else pcie_link(sim, "fpga-lanes", preset.fpga_lanes, lane)
        return [[ssd, pool, board_link(d)] for d in range(k)]
    raise ConfigError(f"unknown platform {preset.name!r} (known: {', '.join(PLATFORMS)})")


def simulate(compiled: CompiledProgram, preset: PlatformPreset, devices: int = 1, queries: int = 1,
             source_gbps: float | None = None, record: bool = False, seed: int = 0) -> IscRun:
    """Run ``queries`` inferences back to back on each of ``devices`` boards, all starting at 0.

    ``source_gbps`` overrides the bandwidth of the storage side (NAND for a CSD, the host or
    SSD lane pools otherwise): Table 2's single-device sweep.
    """
    k = check_count("devices", devices)
    q = check_count("queries", queries)
    if k > preset.max_devices:
        raise ConfigError(f"{preset.label}: {k} boards do not fit on its lanes (at most {preset.max_devices})")
    source_bps = None if source_gbps is None else check_positive("source bandwidth", source_gbps) * GB
    sim = Simulation(seed)
    env = sim.env
    paths = _paths(sim, preset, k, source_bps)
    steps = compiled.steps
    n = len(steps)
    # a step's data may be fetched once the FPGA has finished its gate step (DRAM never overflows)
    gates = [min(g, m - 1) for m, g in enumerate(prefetch_gates(compiled, preset.dram_bytes))]
    fetch_idx = [j for j, s in enumerate(steps) if s.fetch_bytes > 0]
    latencies: list[float] = []
    drams = [DeviceDRAM(sim, f"dram{d}", preset.dram_bytes, record=record and d == 0) for d in range(k)]
    fpgas = [FifoDevice(sim, f"fpga{d}") for d in range(k)]

    def staging(link: SharedLink, prev: list | None, done: list) -> ProcessGenerator:
        for m, j in enumerate(fetch_idx):
            if prev is not None and not prev[m].processed:
                yield prev[m]
            yield from link.transfer(steps[j].fetch_bytes)
            done[m].succeed()

    def last_hop(link: SharedLink, prev: list | None, dram: DeviceDRAM, finished: list, ready: list) -> ProcessGenerator:
        for m, j in enumerate(fetch_idx):
            g = gates[j]
            if g >= 0 and not finished[g].processed:
                yield finished[g]
            if prev is not None and not prev[m].processed:
                yield prev[m]
            dram.hold(steps[j].fetch_bytes)
            yield from link.transfer(steps[j].fetch_bytes)
            ready[j].succeed()

    def board(d: int) -> ProcessGenerator:
        dram, fpga, path = drams[d], fpgas[d], paths[d]
        for _ in range(q):
            start = env.now
            dram.hold(compiled.initial_bytes)
            ready = [env.event() if s.fetch_bytes > 0 else None for s in steps]
            finished = [env.event() for _ in range(n)]
            prev = None
            for link in path[:-1]:
                done = [env.event() for _ in fetch_idx]
                sim.process(staging(link, prev, done))
                prev = done
            sim.process(last_hop(path[-1], prev, dram, finished, ready))
            for j, s in enumerate(steps):
                ev = ready[j]
                if ev is not None and not ev.processed:
                    yield ev
                dram.hold(s.out_bytes)
                if s.compute_s > 0:
                    yield from fpga.execute(s.compute_s)
                dram.free(s.free_bytes)
                finished[j].succeed()
            latencies.append(env.now - start)
            dram.free(dram.used)  # the result leaves; the next query starts empty

    for d in range(k):
        sim.process(board(d))
    sim.run()
    makespan = env.now
    if makespan <= 0:
        raise ConfigError("the program takes no time on this platform (no compute and no data)")
    return IscRun(preset.name, k, q, latencies, makespan, max(dr.peak for dr in drams),
                  list(drams[0].samples), sim.summary()["resources"])


__all__ = ["IscRun", "simulate"]
