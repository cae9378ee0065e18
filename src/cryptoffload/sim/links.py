"""Links: things that move bytes, with a bandwidth shared fairly among concurrent transfers.

Why processor sharing: PCIe lanes, NAND channels and network ports interleave concurrent
transfers at packet granularity, so at the time scale of a job each of ``n`` active flows
sees ``bandwidth / n``. Modelling that exactly (rather than as a FIFO queue of transfers)
matters because a small transfer behind a large one is delayed by sharing, not by waiting
for the whole large transfer.

How it stays exact: all active flows receive the same rate, so one number -- the *virtual
service* ``v``, the bytes each active flow has received since the link last became busy --
describes them all. A flow joining at ``v0`` with ``b`` bytes finishes when ``v`` reaches
``v0 + b``; flows therefore finish in the order of that key (a heap), and the next completion
is ``(key - v) * n / bandwidth`` seconds away. Every arrival or departure brings ``v`` up to
date and schedules one timer for the next completion; timers made stale by a later change are
recognised by a generation number and ignored. ``v`` never exceeds ``bandwidth`` times the
simulated time, so its rounding error is no worse than that of the clock itself.

A transfer takes ``latency`` seconds after its last byte leaves (propagation, completion
signalling), during which it no longer uses bandwidth: a single transfer of ``B`` bytes on an
idle link finishes ``latency + B / bandwidth`` after it starts.
"""

from __future__ import annotations

import heapq
import math
from contextlib import nullcontext
from functools import partial
from itertools import count
from typing import Hashable

import simpy

from cryptoffload.checks import JsonDict
from cryptoffload.sim.core import (
    JobTiming,
    ProcessGenerator,
    Simulation,
    check_count,
    check_name,
    check_non_negative,
    check_positive,
)


class _Flow:
    __slots__ = ("nbytes", "v_start", "v_finish", "done", "finished", "cancelled")

    def __init__(self, nbytes: float, v_start: float, done: simpy.Event) -> None:
        self.nbytes = nbytes
        self.v_start = v_start
        self.v_finish = v_start + nbytes
        self.done = done
        self.finished = False
        self.cancelled = False


class SharedLink:
    """A link of ``bandwidth`` bytes/s and ``latency`` seconds, shared fairly by its flows.

    With ``max_flows`` at most that many transfers share the bandwidth at once; the others
    wait in FIFO order (a DMA engine with a fixed number of channels, for instance).
    """

    resource_type = "link"

    def __init__(
        self,
        sim: Simulation,
        name: str,
        bandwidth: float,
        latency: float = 0.0,
        max_flows: int | None = None,
    ) -> None:
        self.sim = sim
        self.name = check_name(name)
        self.bandwidth = check_positive("bandwidth", bandwidth)
        self.latency = check_non_negative("latency", latency)
        self.max_flows = None if max_flows is None else check_count("max_flows", max_flows)
        self._slots = (
            None if self.max_flows is None else simpy.Resource(sim.env, capacity=self.max_flows)
        )
        self.transfers = 0
        self._heap: list[tuple[float, int, _Flow]] = []
        self._seq = count()
        self._n = 0
        self._v = 0.0
        self._t = 0.0
        self._sum_v_start = 0.0
        self._busy_done = 0.0
        self._bytes_done = 0.0
        self._generation = 0
        sim.metrics.register(self)

    # -- accounting -------------------------------------------------------------------------
    @property
    def active_flows(self) -> int:
        return self._n

    @property
    def queue_length(self) -> int:
        return 0 if self._slots is None else len(self._slots.queue)

    @property
    def busy_time(self) -> float:
        """Time during which at least one flow was moving bytes (latency not included)."""
        extra = self.sim.env.now - self._t if self._n else 0.0
        return self._busy_done + extra

    @property
    def bytes_moved(self) -> float:
        """Bytes sent so far, including the part already sent of flows still in progress."""
        if not self._n:
            return self._bytes_done
        v_now = self._v + (self.sim.env.now - self._t) * self.bandwidth / self._n
        return self._bytes_done + self._n * v_now - self._sum_v_start

    def utilisation(self, span: float) -> float:
        return self.busy_time / check_positive("span", span)

    def report(self, span: float | None) -> JsonDict:
        return {
            "type": self.resource_type,
            "transfers": self.transfers,
            "bytes_moved": self.bytes_moved,
            "busy_time": self.busy_time,
            "utilisation": None if span is None else self.utilisation(span),
        }

    # -- processes --------------------------------------------------------------------------
    def transfer(self, nbytes: float, kind: Hashable | None = None) -> ProcessGenerator:
        """Move ``nbytes`` bytes; returns a process generator yielding a :class:`JobTiming`.

        With a ``kind`` the transfer's latency (from call to arrival of the last byte) is
        recorded under that class in the simulation's metrics.
        """
        return self._transfer(check_positive("nbytes", nbytes), kind)

    def _transfer(self, nbytes: float, kind: Hashable | None) -> ProcessGenerator:
        env = self.sim.env
        arrival = env.now
        slot = None if self._slots is None else self._slots.request()
        with nullcontext() if slot is None else slot:  # a simpy request leaves the queue / frees its slot on exit
            if slot is not None:
                yield slot
            start = env.now
            flow = self._join(nbytes)
            try:
                yield flow.done
            finally:
                if not flow.finished:  # interrupted: stop sharing the bandwidth
                    self._abort(flow)
        if self.latency > 0.0:
            yield env.timeout(self.latency)
        self.transfers += 1
        finish = env.now
        if kind is not None:
            self.sim.metrics.record(kind, arrival, finish)
        return JobTiming(arrival, start, finish)

    # -- the processor-sharing manager ------------------------------------------------------
    def _advance(self) -> None:
        now = self.sim.env.now
        if self._n:
            dt = now - self._t
            self._busy_done += dt
            self._v += dt * self.bandwidth / self._n
        self._t = now

    def _join(self, nbytes: float) -> _Flow:
        self._advance()
        flow = _Flow(nbytes, self._v, self.sim.env.event())
        heapq.heappush(self._heap, (flow.v_finish, next(self._seq), flow))
        self._n += 1
        self._sum_v_start += flow.v_start
        self._schedule()
        return flow

    def _abort(self, flow: _Flow) -> None:
        self._advance()
        flow.cancelled = True
        self._n -= 1
        self._bytes_done += min(self._v - flow.v_start, flow.nbytes)
        self._sum_v_start -= flow.v_start
        self._reset_if_idle()
        self._schedule()

    def _schedule(self) -> None:
        self._generation += 1
        heap = self._heap
        while heap and heap[0][2].cancelled:
            heapq.heappop(heap)
        if heap:
            delay = max(0.0, (heap[0][0] - self._v) * self._n / self.bandwidth)
            timer = self.sim.env.timeout(delay)
            timer.callbacks.append(partial(self._on_timer, self._generation))

    def _on_timer(self, generation: int, _event: simpy.Event) -> None:
        if generation != self._generation:
            return  # superseded by a later arrival or departure
        self._advance()
        heap = self._heap
        # The timer was set for the head's completion: snap to it so rounding in ``_advance``
        # can never leave a sliver of work that would need another, zero-length step.
        self._v = max(self._v, heap[0][0])
        tie = self._v + 8 * math.ulp(self._v)
        while heap and (heap[0][2].cancelled or heap[0][0] <= tie):
            _, _, flow = heapq.heappop(heap)
            if flow.cancelled:
                continue
            flow.finished = True
            self._n -= 1
            self._sum_v_start -= flow.v_start
            self._bytes_done += flow.nbytes
            flow.done.succeed()
        self._reset_if_idle()
        self._schedule()

    def _reset_if_idle(self) -> None:
        # Starting each busy period at v = 0 keeps v small and drops accumulated rounding.
        if self._n == 0:
            self._heap.clear()
            self._v = 0.0
            self._sum_v_start = 0.0


__all__ = ["SharedLink"]
