"""Reference model of the encrypting web server of Niwa, Maeda and Yamaguchi (IPSJ TACS 2005),
on the SimPy core.

A host CPU (:class:`~.devices.Device`) and an FPGA with cipher slots
(:class:`~.devices.ReconfigurableDevice`); a request process per request; a policy
(:mod:`cryptoffload.policies.reconfig`) decides at the moment the request may start. Without
the parallel policy one encryption runs at a time ("wait while anything is encrypting", the
paper's Fig. 6), modelled by a one-slot lock; reconfiguration runs beside software encryption.

This model is the readable specification. It is slow (a SimPy process per request), so the
studies use :mod:`cryptoffload.sim.reconfig_fast`, which tests hold to identical results.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol

import numpy as np
import simpy

from cryptoffload.sim import reconfig_fast as fast
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


def simulate_simpy(time: np.ndarray, cipher: np.ndarray, size: np.ndarray, costs: ServerCosts,
                   policy: ServerPolicy) -> fast.KernelResult:
    """Run one policy over one trace as a SimPy model; same result type as the fast path."""
    n = len(time)
    sim = Simulation()
    env = sim.env
    host = FifoDevice(sim, "host-cpu")
    if policy.mode == fast.FIXED:  # Fix5 / Fix-All: a (hypothetically) larger FPGA, never rewritten
        resident = [int(x) for x in np.flatnonzero(policy.fixed)]
        fpga = ReconfigurableDevice(sim, "fpga", slots=max(1, len(resident)),
                                    reconfig_time=costs.reconfig_time, initial=resident)
    else:
        fpga = ReconfigurableDevice(sim, "fpga", slots=2, reconfig_time=costs.reconfig_time,
                                    initial=policy.initial)
    lock = simpy.Resource(env, capacity=1)
    parallel = policy.mode == fast.PARALLEL
    latency = np.empty(n)
    service = np.empty(n)
    on_fpga = np.zeros(n, dtype=bool)
    state = {"pair": tuple(policy.initial), "reconf": None, "until": -np.inf, "sw_free": 0.0, "fpga_free": 0.0,
             "last_use": {}, "finish_last": 0.0}

    def start_reconfig(pair: tuple[int, int]) -> simpy.Process:
        # Policies reconfigure only an idle FPGA, so it starts now; the device sets its own
        # reconfig_until only once its process runs, later in this same instant.
        state["pair"] = pair
        state["until"] = env.now + costs.reconfig_time
        proc = env.process(fpga.reconfigure(pair))
        state["reconf"] = proc
        return proc

    def view() -> FpgaView:
        return FpgaView(env.now, state["pair"], state["until"], state["fpga_free"], state["sw_free"])

    def request(i: int):
        c, s, t = int(cipher[i]), float(size[i]), float(time[i])
        yield env.timeout(t)  # scheduled at time 0: lands exactly on t
        if parallel:
            yield from serve_parallel(i, c, s, t)
            return
        with lock.request() as slot:
            yield slot
            if fpga.reconfiguring and env.now >= state["until"]:
                yield state["reconf"]  # finishing at this very instant: let it land first
            d = policy.decide(i, c, view())
            if d.blocking:  # Hardware: reconfigure to the request's cipher + the MRU circuit
                a, b = state["pair"]
                use = state["last_use"]
                keep = a if use.get(a, -1.0) >= use.get(b, -2.0) else b
                yield start_reconfig((c, keep))
            elif d.reconfigure_to is not None:
                start_reconfig(d.reconfigure_to)
            if d.run_on == "fpga":
                state["last_use"][c] = env.now
                dur = costs.fpga(c, s)
                yield from fpga.execute(c, dur)
                on_fpga[i] = True
            else:
                dur = costs.software(c, s)
                yield from host.execute(dur)
            service[i] = dur
            latency[i] = env.now - t
            state["finish_last"] = max(state["finish_last"], env.now)

    def serve_parallel(i: int, c: int, s: float, t: float):
        sw, hw = costs.software(c, s), costs.fpga(c, s)
        cost = {"software": sw, "fpga": hw, "reconfig": costs.reconfig_time}.__getitem__
        d = policy.decide(i, c, view(), cost)
        if d.reconfigure_to is not None:
            start_reconfig(d.reconfigure_to)
        if d.run_on == "fpga":
            state["fpga_free"] = max(t, state["fpga_free"], state["until"]) + hw
            yield from fpga.execute(c, hw)
            on_fpga[i] = True
            service[i] = hw
        else:
            state["sw_free"] = max(t, state["sw_free"]) + sw
            yield from host.execute(sw)
            service[i] = sw
        latency[i] = env.now - t
        state["finish_last"] = max(state["finish_last"], env.now)

    for i in range(n):
        env.process(request(i))
    env.run()
    return fast.KernelResult(latency, service, on_fpga, host.busy_time, fpga.busy_time,
                             fpga.reconfig_count, fpga.reconfig_time_spent, state["finish_last"])
