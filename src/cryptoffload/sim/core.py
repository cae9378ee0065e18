"""The simulation environment and the numbers every model reports.

Why a thin layer over SimPy: every study needs the same three things beside the event loop --
a seeded random generator (so a ``--seed`` reproduces a run bit for bit), per-class latency
records (papers report p90 and throughput per request kind), and busy-time accounting for each
device and link (utilisation is how we explain a result). Keeping them in one object means a
model never has to thread three handles through its processes.

Times are seconds and sizes bytes (SI units, as in every ``result.json``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Generator, Hashable, Protocol, runtime_checkable

import numpy as np
import simpy
from numpy.typing import ArrayLike

from cryptoffload.checks import check_int as check_count  # noqa: F401  (re-exported for the models)
from cryptoffload.checks import JsonDict, check_non_negative, check_positive  # noqa: F401
from cryptoffload.errors import ConfigError

ProcessGenerator = Generator[simpy.Event, Any, Any]


def check_name(name: str) -> str:
    """Names key the metrics reports, so they must be non-empty strings."""
    if not isinstance(name, str) or not name:
        raise ConfigError(f"a device or link needs a non-empty name, got {name!r}")
    return name


@dataclass(frozen=True, slots=True)
class JobTiming:
    """When one job arrived at a resource, started being served and finished.

    Returned by every ``execute``/``transfer`` process so that a caller can measure queueing
    (``wait``) separately from service without keeping its own clock readings.
    """

    arrival: float
    start: float
    finish: float

    @property
    def wait(self) -> float:
        return self.start - self.arrival

    @property
    def service(self) -> float:
        return self.finish - self.start

    @property
    def sojourn(self) -> float:
        return self.finish - self.arrival


@dataclass(frozen=True, slots=True)
class LatencyStats:
    """Summary of a latency sample, in the shape the papers report it.

    Percentiles use numpy's ``"linear"`` method (the numpy default, type 7 of Hyndman & Fan)
    so that our numbers can be reproduced with one ``numpy.percentile`` call.
    """

    count: int
    mean: float
    p50: float
    p90: float
    p99: float
    max: float

    @classmethod
    def from_latencies(cls, latencies: ArrayLike) -> LatencyStats:
        a = np.asarray(latencies, dtype=float).ravel()
        if a.size == 0:
            raise ConfigError("no latencies recorded: cannot summarise an empty sample")
        if not np.all(np.isfinite(a)):
            raise ConfigError("latencies must be finite numbers")
        p50, p90, p99 = np.percentile(a, [50.0, 90.0, 99.0], method="linear")
        return cls(
            count=int(a.size),
            mean=float(a.mean()),
            p50=float(p50),
            p90=float(p90),
            p99=float(p99),
            max=float(a.max()),
        )

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


@runtime_checkable
class Accounted(Protocol):
    """What a device or link offers to the metrics registry.

    A protocol rather than a base class so that later models (storage, QAT rings) can be
    registered without inheriting from the models in this package.
    """

    name: str

    @property
    def busy_time(self) -> float: ...

    def utilisation(self, span: float) -> float: ...

    def report(self, span: float | None) -> JsonDict: ...


class Metrics:
    """Per-class job latencies plus the registry of accounted resources.

    Records are kept as plain Python lists and turned into arrays only when asked, because a
    simulation appends hundreds of thousands of records and reads them once at the end.
    """

    def __init__(self) -> None:
        self._arrivals: dict[Hashable, list[float]] = {}
        self._finishes: dict[Hashable, list[float]] = {}
        self.resources: dict[str, Accounted] = {}

    # -- jobs -------------------------------------------------------------------------------
    def record(self, kind: Hashable, arrival: float, finish: float) -> None:
        a, f = float(arrival), float(finish)
        if not (math.isfinite(a) and math.isfinite(f)) or f < a:
            raise ConfigError(
                f"job of kind {kind!r}: finish ({finish!r}) must be finite and not before "
                f"arrival ({arrival!r})"
            )
        self._arrivals.setdefault(kind, []).append(a)
        self._finishes.setdefault(kind, []).append(f)

    @property
    def kinds(self) -> list[Hashable]:
        return list(self._arrivals)

    def count(self, kind: Hashable | None = None) -> int:
        return sum(len(self._arrivals[k]) for k in self._select(kind))

    def latencies(self, kind: Hashable | None = None) -> np.ndarray:
        """All recorded latencies of ``kind`` (every kind when ``None``), in record order."""
        kinds = self._select(kind)
        if not kinds:
            return np.empty(0)
        return np.concatenate(
            [np.asarray(self._finishes[k]) - np.asarray(self._arrivals[k]) for k in kinds]
        )

    def latency(self, kind: Hashable | None = None) -> LatencyStats:
        lat = self.latencies(kind)
        if lat.size == 0:
            raise ConfigError(f"no jobs recorded{'' if kind is None else f' of kind {kind!r}'}")
        return LatencyStats.from_latencies(lat)

    def throughput(self, kind: Hashable | None = None) -> float:
        """Completed jobs per second over the window from the first arrival to the last finish.

        That window (rather than the simulated horizon) makes the number independent of how
        long the caller let the clock run after the last job.
        """
        kinds = self._select(kind)
        n = sum(len(self._arrivals[k]) for k in kinds)
        if n == 0:
            raise ConfigError(f"no jobs recorded{'' if kind is None else f' of kind {kind!r}'}")
        first = min(min(self._arrivals[k]) for k in kinds)
        last = max(max(self._finishes[k]) for k in kinds)
        if last <= first:
            raise ConfigError("throughput is undefined: all jobs finished at their arrival time")
        return n / (last - first)

    def _select(self, kind: Hashable | None) -> list[Hashable]:
        if kind is None:
            return list(self._arrivals)
        if kind not in self._arrivals:
            return []
        return [kind]

    # -- resources --------------------------------------------------------------------------
    def register(self, resource: Accounted) -> None:
        """Add a device or link; names must be unique so that reports can be keyed by them."""
        if resource.name in self.resources:
            raise ConfigError(f"a device or link named {resource.name!r} already exists")
        self.resources[resource.name] = resource

    def busy_time(self) -> dict[str, float]:
        return {name: r.busy_time for name, r in self.resources.items()}

    def utilisation(self, span: float) -> dict[str, float]:
        return {name: r.utilisation(span) for name, r in self.resources.items()}

    def summary(self, span: float | None) -> JsonDict:
        """Plain dicts (JSON-ready) for every job class and every registered resource.

        ``span`` is the horizon utilisation is measured over; with ``None`` (or zero) the
        resources report busy time and counters but no utilisation.
        """
        if span is not None and span <= 0:
            span = None
        jobs: dict[str, Any] = {}
        for k in self.kinds:
            entry: dict[str, Any] = self.latency(k).as_dict()
            try:
                entry["throughput"] = self.throughput(k)
            except ConfigError:
                entry["throughput"] = None
            jobs[str(k)] = entry
        return {
            "jobs": jobs,
            "resources": {name: r.report(span) for name, r in self.resources.items()},
        }


class Simulation:
    """One simulated run: the event loop, its random generator and its metrics.

    The generator is created here, from ``seed``, and nowhere else, so that every random draw
    in a model comes from one reproducible stream.
    """

    def __init__(self, seed: int = 0) -> None:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ConfigError(f"seed must be a non-negative integer, got {seed!r}")
        self.seed = int(seed)
        self.env = simpy.Environment(initial_time=0.0)  # float clock: JSON-clean times
        self.rng = np.random.default_rng(self.seed)
        self.metrics = Metrics()

    @property
    def now(self) -> float:
        return float(self.env.now)

    def process(self, generator: ProcessGenerator) -> simpy.Process:
        return self.env.process(generator)

    def run(self, until: float | simpy.Event | None = None) -> Any:
        return self.env.run(until=until)

    def summary(self) -> JsonDict:
        """Metrics over the whole simulated horizon ``[0, now]``."""
        return {"seed": self.seed, "now": self.now, **self.metrics.summary(self.now)}
