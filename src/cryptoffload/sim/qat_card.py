"""The QAT card of the Paillier offload model: compute engines behind one bounded, order-preserving
request/response ring pair (a :class:`~cryptoffload.sim.devices.Device`-like resource that is
not SimPy: its timing is computed in closed form at submission, see :class:`QatDevice`).

Why its own module: the card is one concept (what a request costs on the accelerator and when
its response can be seen); the clients that drive it are :mod:`cryptoffload.sim.qat`.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass
from typing import Any

from cryptoffload.checks import JsonDict
from cryptoffload.errors import ConfigError
from cryptoffload.sim.core import Simulation, check_count, check_name, check_positive

__all__ = ["QatDevice", "QatRequest"]


@dataclass(slots=True)
class QatRequest:
    """One modexp on the card: when it was submitted, ran, finished, and became visible.

    ``visible`` is not ``finish``: with order preservation a response is visible only when
    every earlier request on the ring has finished, which is what a poll can see.
    """

    seq: int
    submit: float
    start: float
    finish: float
    visible: float
    owner: Any = None


class QatDevice:
    """``engines`` FIFO compute engines behind one bounded, order-preserving ring pair.

    Start, finish and visibility are computed when a request is submitted: requests are
    dispatched in submission order to the engine that frees first, which is exact for a FIFO
    multi-server queue, and in-order delivery is a running maximum of finish times. Submission
    instants must not decrease (they are the core's clock). The ring holds a request from its
    submission until a poll retrieves its response, as the QAT driver's in-flight count does.
    """

    resource_type = "qat"

    def __init__(self, sim: Simulation, name: str, engines: int, ring_capacity: int) -> None:
        self.sim = sim
        self.name = check_name(name)
        self.engines = check_count("engines", engines)
        self.ring_capacity = check_count("ring_capacity", ring_capacity)
        self._free = [0.0] * self.engines  # min-heap of engine free times
        self._ring: deque[QatRequest] = deque()
        self._recent: deque[QatRequest] = deque()  # requests possibly still running at sim.now
        self._last_submit = -math.inf
        self._last_visible = 0.0
        self._busy_total = 0.0
        self.submitted = 0
        self.refused = 0
        self.retrieved = 0
        self.max_outstanding = 0
        sim.metrics.register(self)

    @property
    def outstanding(self) -> int:
        return len(self._ring)

    @property
    def full(self) -> bool:
        return len(self._ring) >= self.ring_capacity

    @property
    def next_visible(self) -> float | None:
        """When the oldest outstanding response becomes visible (``None`` if none is out)."""
        return self._ring[0].visible if self._ring else None

    def try_submit(self, at: float, service: float, owner: Any = None) -> QatRequest | None:
        """Put one modexp on the request ring at ``at``; ``None`` means refused (ring full)."""
        if at < self._last_submit:
            raise ConfigError(f"{self.name}: submission at {at!r} is before the previous one ({self._last_submit!r})")
        self._last_submit = at
        if len(self._ring) >= self.ring_capacity:
            self.refused += 1
            return None
        start = max(at, self._free[0])
        finish = start + service
        heapq.heapreplace(self._free, finish)
        visible = finish if finish > self._last_visible else self._last_visible
        self._last_visible = visible
        req = QatRequest(self.submitted, at, start, finish, visible, owner)
        self.submitted += 1
        self._busy_total += service
        self._ring.append(req)
        self._recent.append(req)
        if len(self._ring) > self.max_outstanding:
            self.max_outstanding = len(self._ring)
        return req

    def poll(self, at: float) -> list[QatRequest]:
        """Retrieve, in submission order, every response visible at ``at``; frees their slots."""
        out: list[QatRequest] = []
        ring = self._ring
        while ring and ring[0].visible <= at:
            out.append(ring.popleft())
        self.retrieved += len(out)
        self._prune(self.sim.env.now)
        return out

    def _prune(self, now: float) -> None:
        """Forget requests that no longer matter to ``busy_time`` (visible, hence finished, by
        ``now``), so a long run does not keep every request alive."""
        recent = self._recent
        while recent and recent[0].visible <= now:
            recent.popleft()

    # -- accounting (the Accounted protocol of sim.core) -----------------------------------
    @property
    def busy_time(self) -> float:
        """Engine-seconds of service up to ``sim.now`` (exact also mid-run)."""
        now = self.sim.env.now
        self._prune(now)
        pending = sum(max(0.0, r.finish - max(r.start, now)) for r in self._recent)
        return self._busy_total - pending

    def utilisation(self, span: float) -> float:
        return self.busy_time / (self.engines * check_positive("span", span))

    def report(self, span: float | None) -> JsonDict:
        return {
            "type": self.resource_type,
            "servers": self.engines,
            "jobs": self.submitted,
            "busy_time": self.busy_time,
            "utilisation": None if span is None else self.utilisation(span),
            "ring_capacity": self.ring_capacity,
            "refused": self.refused,
            "max_outstanding": self.max_outstanding,
        }


