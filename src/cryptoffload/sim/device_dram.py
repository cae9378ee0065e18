"""A device's DRAM in the simulation: a capacity, FIFO reservations that wait for room, frees
of dead data, and its occupancy over time.

Why a resource of its own: in the in-storage study DRAM is what decides how far ahead
weights and keys may be fetched, and its occupancy curve is one of the study's figures; it
is neither a link (bytes do not flow through it) nor a device (it runs nothing).
"""

from __future__ import annotations

import simpy

from cryptoffload.checks import JsonDict
from cryptoffload.errors import ConfigError
from cryptoffload.sim.core import ProcessGenerator, Simulation, check_name, check_non_negative, check_positive


class DeviceDRAM:
    """Device DRAM: a capacity, FIFO reservations that wait for room, and frees of dead data.

    Utilisation (for the metrics registry) is the time-average fraction of the capacity in use;
    with ``record`` the occupancy is kept as a step function ``(time, bytes)`` for plotting.
    """

    resource_type = "memory"

    def __init__(self, sim: Simulation, name: str, capacity: float, record: bool = False) -> None:
        self.sim = sim
        self.name = check_name(name)
        self.capacity = check_positive("DRAM capacity", capacity)
        self.used = 0.0
        self.peak = 0.0
        self._waiting: list[tuple[float, simpy.Event]] = []
        self._area = 0.0
        self._t = 0.0
        self.record = record
        self.samples: list[tuple[float, float]] = [(0.0, 0.0)] if record else []
        sim.metrics.register(self)

    def _advance(self) -> None:
        now = self.sim.env.now
        self._area += (now - self._t) * self.used
        self._t = now

    def _set(self, used: float) -> None:
        self._advance()
        # rounding of float sums must not leave -1e-9 bytes in use
        self.used = 0.0 if used < 1.0 else used
        self.peak = max(self.peak, self.used)
        if self.record:
            self.samples.append((self.sim.env.now, self.used))

    def hold(self, nbytes: float) -> None:
        """Take ``nbytes`` without waiting (the caller has made sure they fit: prefetch gates)."""
        if nbytes > 0:
            self._set(self.used + nbytes)

    def try_reserve(self, nbytes: float) -> bool:
        if not self._waiting and self.used + nbytes <= self.capacity * (1 + 1e-12):
            self._set(self.used + nbytes)
            return True
        return False

    def reserve(self, nbytes: float) -> ProcessGenerator:
        """Wait (FIFO) until ``nbytes`` fit, then hold them."""
        n = check_non_negative("nbytes", nbytes)
        if n > self.capacity:
            raise ConfigError(f"{self.name}: {n / 1e9:.3g} GB can never fit in {self.capacity / 1e9:.3g} GB")
        return self._reserve(n)

    def _reserve(self, n: float) -> ProcessGenerator:
        if self.try_reserve(n):
            return
        ev = self.sim.env.event()
        self._waiting.append((n, ev))
        yield ev

    def free(self, nbytes: float) -> None:
        if nbytes <= 0:
            return
        if nbytes > self.used * (1 + 1e-9) + 1:
            raise ConfigError(f"{self.name}: freeing {nbytes:.0f} bytes with only {self.used:.0f} in use")
        self._set(max(0.0, self.used - nbytes))
        while self._waiting and self.used + self._waiting[0][0] <= self.capacity * (1 + 1e-12):
            n, ev = self._waiting.pop(0)
            self._set(self.used + n)
            ev.succeed()

    @property
    def busy_time(self) -> float:
        """Byte-seconds over capacity: time-average occupancy times the elapsed time."""
        return (self._area + (self.sim.env.now - self._t) * self.used) / self.capacity

    def utilisation(self, span: float) -> float:
        return self.busy_time / check_positive("span", span)

    def report(self, span: float | None) -> JsonDict:
        return {"type": self.resource_type, "capacity": self.capacity, "peak": self.peak,
                "busy_time": self.busy_time, "utilisation": None if span is None else self.utilisation(span)}


__all__ = ["DeviceDRAM"]
