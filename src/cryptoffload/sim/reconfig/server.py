"""Reference model of the encrypting web server of Niwa, Maeda and Yamaguchi (IPSJ TACS 2005),
on the SimPy core.

A host CPU (:class:`~.devices.Device`) and an FPGA with cipher slots
(:class:`~.devices.ReconfigurableDevice`); a request process per request; a policy
(:mod:`cryptoffload.policies.reconfig`) decides at the moment the request may start. Without
the parallel policy one encryption runs at a time ("wait while anything is encrypting", the
paper's Fig. 6), modelled by a one-slot lock; reconfiguration runs beside software encryption.

This model is the readable specification. It is slow (a SimPy process per request), so the
studies use :mod:`cryptoffload.sim.reconfig.fast`, which tests hold to identical results.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol

import numpy as np
import simpy

from cryptoffload.sim.reconfig import fast
from cryptoffload.sim.core import Simulation
from cryptoffload.sim.devices import FifoDevice, ReconfigurableDevice


@dataclass(frozen=True)
class FpgaView:
    """What the proxy library knows when a request may start (given to a policy's ``decide``)."""

    now: float
    loaded: tuple[int, int]
    reconfig_until: float  # the FPGA is unusable before this time
    fpga_free: float = 0.0  # parallel mode: when the FPGA's queue drains
    sw_free: float = 0.0  # parallel mode: when the host's queue drains


@dataclass(frozen=True)
class Decision:
    """A policy's answer for one request."""

    run_on: str  # "software" or "fpga"
    reconfigure_to: tuple[int, int] | None = None
    blocking: bool = False  # Hardware: the request waits for the reconfiguration


class ServerPolicy(Protocol):
    """What this model needs of a policy (``cryptoffload.policies.reconfig`` implements it):
    the fast kernel's mode, the circuits loaded at start (and, for the fixed modes, which are
    resident), and the decision rule."""

    mode: int
    initial: tuple[int, int]
    fixed: np.ndarray | None

    def decide(self, i: int, cipher: int, view: FpgaView,
               cost: Callable[[str], float] | None = None) -> Decision: ...


@dataclass
class ServerCosts:
    """Seconds per byte for each cipher in software and on the FPGA, and the fixed costs."""

    sw_seconds_per_byte: np.ndarray
    fpga_seconds_per_byte: np.ndarray
    packet_overhead: float
    reconfig_time: float

    def software(self, cipher: int, size: float) -> float:
        return float(size) * float(self.sw_seconds_per_byte[cipher]) + self.packet_overhead

    def fpga(self, cipher: int, size: float) -> float:
        return float(size) * float(self.fpga_seconds_per_byte[cipher]) + self.packet_overhead


def _make_fpga(sim: Simulation, costs: ServerCosts, policy: ServerPolicy) -> ReconfigurableDevice:
    """The FPGA a policy runs on: two slots starting with ``policy.initial``, or for Fix5 /
    Fix-All a (hypothetically) larger FPGA holding the resident circuits, never rewritten."""
    if policy.mode == fast.FIXED:
        assert policy.fixed is not None, "a fixed-mode policy names its resident circuits"
        resident = [int(x) for x in np.flatnonzero(policy.fixed)]
        return ReconfigurableDevice(sim, "fpga", slots=max(1, len(resident)),
                                    reconfig_time=costs.reconfig_time, initial=resident)
    return ReconfigurableDevice(sim, "fpga", slots=2, reconfig_time=costs.reconfig_time, initial=policy.initial)


class _Server:
    """One run of the server model: the devices, what the proxy library knows (the loaded pair,
    when the reconfiguration ends, when each queue drains), and a process per request."""

    def __init__(self, n: int, costs: ServerCosts, policy: ServerPolicy) -> None:
        self.sim = Simulation()
        self.env = self.sim.env
        self.costs = costs
        self.policy = policy
        self.host = FifoDevice(self.sim, "host-cpu")
        self.fpga = _make_fpga(self.sim, costs, policy)
        self.lock = simpy.Resource(self.env, capacity=1)
        self.latency = np.empty(n)
        self.service = np.empty(n)
        self.on_fpga = np.zeros(n, dtype=bool)
        first, second = policy.initial
        self.pair: tuple[int, int] = (first, second)
        self.reconf: simpy.Process | None = None
        self.until = -np.inf
        self.sw_free = 0.0
        self.fpga_free = 0.0
        self.last_use: dict[int, float] = {}
        self.finish_last = 0.0

    def start_reconfig(self, pair: tuple[int, int]) -> simpy.Process:
        # Policies reconfigure only an idle FPGA, so it starts now; the device sets its own
        # reconfig_until only once its process runs, later in this same instant.
        self.pair = pair
        self.until = self.env.now + self.costs.reconfig_time
        proc = self.env.process(self.fpga.reconfigure(pair))
        self.reconf = proc
        return proc

    def view(self) -> FpgaView:
        return FpgaView(self.env.now, self.pair, self.until, self.fpga_free, self.sw_free)

    def finished(self, i: int, t: float, dur: float) -> None:
        self.service[i] = dur
        self.latency[i] = self.env.now - t
        self.finish_last = max(self.finish_last, self.env.now)

    def request(self, i: int, c: int, s: float, t: float):
        yield self.env.timeout(t)  # scheduled at time 0: lands exactly on t
        if self.policy.mode == fast.PARALLEL:
            yield from self.serve_parallel(i, c, s, t)
        else:
            yield from self.serve_one_at_a_time(i, c, s, t)

    def mru_pair(self, c: int) -> tuple[int, int]:
        """Hardware's full reconfiguration: the request's cipher and the most recently used
        of the loaded pair."""
        a, b = self.pair
        keep = a if self.last_use.get(a, -1.0) >= self.last_use.get(b, -2.0) else b
        return (c, keep)

    def serve_one_at_a_time(self, i: int, c: int, s: float, t: float):
        """Wait for the one-slot lock (one encryption at a time), let a reconfiguration ending
        now land, then do what the policy decides."""
        with self.lock.request() as slot:
            yield slot
            if self.fpga.reconfiguring and self.env.now >= self.until:
                yield self.reconf  # finishing at this very instant: let it land first
            d = self.policy.decide(i, c, self.view())
            if d.blocking:
                yield self.start_reconfig(self.mru_pair(c))
            elif d.reconfigure_to is not None:
                self.start_reconfig(d.reconfigure_to)
            if d.run_on == "fpga":
                self.last_use[c] = self.env.now
                dur = self.costs.fpga(c, s)
                yield from self.fpga.execute(c, dur)
                self.on_fpga[i] = True
            else:
                dur = self.costs.software(c, s)
                yield from self.host.execute(dur)
            self.finished(i, t, dur)

    def serve_parallel(self, i: int, c: int, s: float, t: float):
        """PARALLEL: no lock; the policy picks host or FPGA knowing when each queue drains."""
        sw, hw = self.costs.software(c, s), self.costs.fpga(c, s)
        cost = {"software": sw, "fpga": hw, "reconfig": self.costs.reconfig_time}.__getitem__
        d = self.policy.decide(i, c, self.view(), cost)
        if d.reconfigure_to is not None:
            self.start_reconfig(d.reconfigure_to)
        if d.run_on == "fpga":
            self.fpga_free = max(t, self.fpga_free, self.until) + hw
            yield from self.fpga.execute(c, hw)
            self.on_fpga[i] = True
            self.finished(i, t, hw)
        else:
            self.sw_free = max(t, self.sw_free) + sw
            yield from self.host.execute(sw)
            self.finished(i, t, sw)

    def result(self) -> fast.KernelResult:
        return fast.KernelResult(self.latency, self.service, self.on_fpga, self.host.busy_time, self.fpga.busy_time,
                                 self.fpga.reconfig_count, self.fpga.reconfig_time_spent, self.finish_last)


def simulate_simpy(time: np.ndarray, cipher: np.ndarray, size: np.ndarray, costs: ServerCosts,
                   policy: ServerPolicy) -> fast.KernelResult:
    """Run one policy over one trace as a SimPy model; same result type as the fast path."""
    server = _Server(len(time), costs, policy)
    for i in range(len(time)):
        server.env.process(server.request(i, int(cipher[i]), float(size[i]), float(time[i])))
    server.env.run()
    return server.result()
