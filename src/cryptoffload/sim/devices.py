"""Devices: things that execute jobs, one job per server at a time, first come first served.

Why FIFO servers and nothing cleverer: the accelerators we model (FPGA cipher cores, QAT
engines, GPU streams fed by one host thread) process requests in arrival order, and FIFO is
what the closed forms we test against (M/D/1, M/M/1) assume. Scheduling decisions belong to
``policies/``, which choose *which* device gets a job, not how a device orders its queue.

Every ``execute``/``reconfigure`` method validates its arguments when called and returns a
SimPy process generator, so a mistake raises at the call site rather than deep inside the
event loop. Use it as ``timing = yield from dev.execute(d)`` inside a process, or start it with
``sim.process(dev.execute(d))``; either way it returns a :class:`~.core.JobTiming`. The
place in the FIFO queue is taken at the call, so start the generator in the same instant (a
generator created and never run would hold its place, and possibly a server, for ever).
"""

from __future__ import annotations

from itertools import count
from typing import Callable, Hashable, Iterable

import simpy
from simpy.resources.resource import Request

from cryptoffload.checks import JsonDict
from cryptoffload.errors import ConfigError
from cryptoffload.sim.core import (
    JobTiming,
    ProcessGenerator,
    Simulation,
    check_count,
    check_name,
    check_non_negative,
    check_positive,
)


class _Server:
    """A FIFO queue in front of ``servers`` identical servers, with exact busy-time accounting.

    Busy time is the sum over servers of the time each spent serving, kept as completed
    service plus the elapsed part of jobs in service, so that it is exact at any instant
    (a report taken mid-run does not lag by the jobs still running).
    """

    resource_type = "device"

    def __init__(self, sim: Simulation, name: str, servers: int) -> None:
        self.sim = sim
        self.name = check_name(name)
        self.servers = check_count("servers", servers)
        self.jobs = 0
        self._res = simpy.Resource(sim.env, capacity=self.servers)
        self._busy_done = 0.0
        self._in_service: dict[int, float] = {}
        self._tokens = count()
        sim.metrics.register(self)

    @property
    def busy_time(self) -> float:
        now = self.sim.env.now
        return self._busy_done + sum(now - s for s in self._in_service.values())

    @property
    def in_service(self) -> int:
        return len(self._in_service)

    @property
    def queue_length(self) -> int:
        return len(self._res.queue)

    def utilisation(self, span: float) -> float:
        """Busy time over the capacity offered in ``span`` seconds (``servers * span``)."""
        return self.busy_time / (self.servers * check_positive("span", span))

    def report(self, span: float | None) -> JsonDict:
        return {
            "type": self.resource_type,
            "servers": self.servers,
            "jobs": self.jobs,
            "busy_time": self.busy_time,
            "utilisation": None if span is None else self.utilisation(span),
        }

    def _serve(
        self,
        duration: float,
        kind: Hashable | None,
        on_start: Callable[[], None] | None = None,
    ) -> ProcessGenerator:
        # The place in the FIFO queue is taken now, at call time, not when the returned
        # generator first runs: jobs and reconfigurations issued in one instant keep the order
        # in which they were issued.
        return self._serve_with(self._res.request(), self.sim.env.now, duration, kind, on_start)

    def _serve_with(
        self,
        request: Request,
        arrival: float,
        duration: float,
        kind: Hashable | None,
        on_start: Callable[[], None] | None,
    ) -> ProcessGenerator:
        env = self.sim.env
        with request as req:
            yield req
            if on_start is not None:
                on_start()
            start = env.now
            token = next(self._tokens)
            self._in_service[token] = start
            completed = False
            try:
                yield env.timeout(duration)
                completed = True
            finally:
                del self._in_service[token]
                # An interrupted job is charged what it really used, not its nominal duration.
                self._busy_done += duration if completed else env.now - start
        self.jobs += 1
        finish = env.now
        if kind is not None:
            self.sim.metrics.record(kind, arrival, finish)
        return JobTiming(arrival, start, finish)


class FifoDevice(_Server):
    """A multi-server FIFO device (CPU cores, QAT engines, GPU streams)."""

    def __init__(self, sim: Simulation, name: str, servers: int = 1) -> None:
        super().__init__(sim, name, servers)

    def execute(self, duration: float, kind: Hashable | None = None) -> ProcessGenerator:
        """Queue, then hold one server for ``duration`` seconds.

        With a ``kind`` the job's sojourn time (queueing + service) is recorded under that
        class in the simulation's metrics; without one nothing is recorded, which is what a
        caller timing a larger, composite job wants.
        """
        return self._serve(check_positive("duration", duration), kind)


def reconfig_time_from_bitstream(bits: float, bits_per_clock: float, clock_hz: float) -> float:
    """Seconds to load a full bitstream through a configuration port.

    Papers quote bitstream size, port width and configuration clock rather than a time, so a
    profile derives the time from those: a 29,063,072-bit Virtex-II bitstream loaded 8 bits
    per clock at 66 MHz takes about 55 ms.
    """
    return check_positive("bits", bits) / (
        check_positive("bits_per_clock", bits_per_clock) * check_positive("clock_hz", clock_hz)
    )


class ReconfigurableDevice(_Server):
    """An FPGA-like device holding at most ``slots`` functions, one job at a time.

    Reconfiguration is *full*: it replaces the whole loaded set and makes the device unusable
    for ``reconfig_time`` seconds, which is how devices without partial reconfiguration
    behave, and is the cost the reconfiguration policies try to hide. A reconfiguration waits
    its turn in the same FIFO queue as jobs, so a policy issuing ``reconfigure`` and then
    ``execute`` gets them in that order without further synchronisation. Reconfiguration time
    is counted apart from busy (executing) time.

    ``reconfig_time`` may be zero, to model an idealised device against which a policy's
    overhead is measured.
    """

    def __init__(
        self,
        sim: Simulation,
        name: str,
        slots: int,
        reconfig_time: float,
        initial: Iterable[Hashable] = (),
    ) -> None:
        super().__init__(sim, name, servers=1)
        self.slots = check_count("slots", slots)
        self.reconfig_time = check_non_negative("reconfig_time", reconfig_time)
        self._loaded = self._check_set(initial)
        self._pending: dict[int, frozenset[Hashable]] = {}
        self._reconfig_start: float | None = None
        self._incoming: frozenset[Hashable] | None = None
        self._reconfig_done = 0.0
        self.reconfig_count = 0
        self.reconfig_until = 0.0

    # -- state a policy reads ---------------------------------------------------------------
    @property
    def loaded(self) -> frozenset[Hashable]:
        """Functions usable right now (empty while a reconfiguration is in progress)."""
        return self._loaded

    @property
    def target(self) -> frozenset[Hashable]:
        """The set that will be loaded once every queued reconfiguration has run.

        ``execute`` checks a function against this, not against :attr:`loaded`, so that a job
        may be queued behind the reconfiguration that loads its function.
        """
        if self._pending:
            return next(reversed(self._pending.values()))
        if self._incoming is not None:  # being written right now
            return self._incoming
        return self._loaded

    @property
    def reconfiguring(self) -> bool:
        return self._reconfig_start is not None

    @property
    def busy(self) -> bool:
        return bool(self._in_service)

    @property
    def reconfig_time_spent(self) -> float:
        extra = 0.0 if self._reconfig_start is None else self.sim.env.now - self._reconfig_start
        return self._reconfig_done + extra

    def report(self, span: float | None) -> JsonDict:
        out = super().report(span)
        out.update(
            reconfig_count=self.reconfig_count,
            reconfig_time=self.reconfig_time_spent,
            loaded=sorted(map(str, self._loaded)),
        )
        return out

    # -- processes --------------------------------------------------------------------------
    def execute(
        self, function: Hashable, duration: float, kind: Hashable | None = None
    ) -> ProcessGenerator:
        """Run ``function`` for ``duration`` seconds; the function must be (or be queued to be)
        loaded, otherwise :class:`ConfigError` is raised at once."""
        d = check_positive("duration", duration)
        if function not in self.target:
            raise ConfigError(
                f"{self.name}: function {function!r} is not loaded "
                f"(loaded or queued: {sorted(map(str, self.target))})"
            )

        def still_loaded() -> None:
            # Only reachable if a queued reconfiguration was interrupted or reordered.
            if function not in self._loaded:
                raise ConfigError(f"{self.name}: function {function!r} was unloaded before it ran")

        return self._serve(d, kind, on_start=still_loaded)

    def reconfigure(self, new_set: Iterable[Hashable]) -> ProcessGenerator:
        """Replace the loaded set by ``new_set`` after the jobs already queued.

        The reconfiguration is registered, and its place in the FIFO queue taken, when this
        method is called (so that :attr:`target` and ``execute`` calls made afterwards, even
        in the same instant before the returned process first runs, queue behind it); start
        the returned generator at once.
        """
        fs = self._check_set(new_set)
        token = next(self._tokens)
        self._pending[token] = fs
        return self._reconfigure(token, fs, self._res.request())

    def _reconfigure(self, token: int, fs: frozenset[Hashable], request: Request) -> ProcessGenerator:
        env = self.sim.env
        arrival = env.now
        try:
            with request as req:
                yield req
                del self._pending[token]
                start = env.now
                self._loaded = frozenset()
                self._incoming = fs
                self._reconfig_start = start
                self.reconfig_until = start + self.reconfig_time
                self.reconfig_count += 1
                completed = False
                try:
                    yield env.timeout(self.reconfig_time)
                    completed = True
                finally:
                    self._reconfig_start = None
                    self._incoming = None
                    self._reconfig_done += self.reconfig_time if completed else env.now - start
                    if completed:
                        self._loaded = fs
                    else:
                        self.reconfig_until = env.now  # left blank: nothing usable
        finally:
            self._pending.pop(token, None)
        return JobTiming(arrival, start, env.now)

    def _check_set(self, functions: Iterable[Hashable]) -> frozenset[Hashable]:
        if isinstance(functions, (str, bytes)):
            raise ConfigError(
                f"{self.name}: give a collection of functions, not the single string "
                f"{functions!r}"
            )
        fs = frozenset(functions)
        if len(fs) > self.slots:
            raise ConfigError(
                f"{self.name}: {len(fs)} functions do not fit in {self.slots} slot(s)"
            )
        return fs


__all__ = ["FifoDevice", "ReconfigurableDevice", "reconfig_time_from_bitstream"]
