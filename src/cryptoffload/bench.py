"""Measuring throughput on a shared, noisy machine: interleaved rounds, medians.

Why interleave: on this 2-core shared host, back-to-back blocks of one case moved means by
20-30 %. Running every case for a short slice, round after round in rotating order, and
reporting each case's median exposes all cases to the same noise, so their *ratios* (which
is what the targets are about) are stable even when absolute rates drift.
"""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from cryptoffload.io import write_json


@dataclass
class Case:
    """A named operation: ``run()`` performs ``items`` operations per call."""

    name: str
    run: Callable[[], object]
    items: int
    rates: list[float] = field(default_factory=list)

    @property
    def median_rate(self) -> float:
        return statistics.median(self.rates) if self.rates else float("nan")

    @property
    def spread(self) -> float:
        """Relative half-range of the per-round rates (a noise indicator)."""
        if len(self.rates) < 2:
            return 0.0
        return (max(self.rates) - min(self.rates)) / 2 / self.median_rate


def time_case(case: Case, seconds: float) -> float:
    """Operations per second of ``case`` over at least ``seconds`` (at least one call)."""
    calls = 0
    t0 = time.perf_counter()
    while True:
        case.run()
        calls += 1
        dt = time.perf_counter() - t0
        if dt >= seconds:
            return calls * case.items / dt


def interleaved(cases: list[Case], seconds: float = 0.5, rounds: int = 3,
                progress: Callable[[str], None] | None = None) -> list[Case]:
    """Run every case ``rounds`` times for ``seconds`` each, rotating the order per round."""
    for case in cases:  # warm-up: tables, caches, lazy imports
        case.run()
    for r in range(rounds):
        order = cases[r % len(cases):] + cases[:r % len(cases)]
        for case in order:
            if progress:
                progress(f"round {r + 1}/{rounds}: {case.name}")
            case.rates.append(time_case(case, seconds))
    return cases


def pin_to_one_core() -> int | None:
    """Pin this process to one CPU (the one it runs on) so 'one core' means one core."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpus[0]})
        return cpus[0]
    except (AttributeError, OSError):
        return None


def unpin() -> None:
    try:
        os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))
    except (AttributeError, OSError):
        pass


def save_results(data: object, path: Path, say: Callable[[str], object] | None = None, note: str = "") -> Path:
    """A benchmark's results as JSON at ``path`` (its folder made), written atomically through
    :func:`cryptoffload.io.write_json` (numpy values as numbers, NaN as null); ``say`` is told
    ``wrote PATH`` and ``note``. The caller chooses the path: the package never knows where the
    repository's results folder is."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(path, data)
    if say is not None:
        say(f"wrote {path}{note}")
    return path

