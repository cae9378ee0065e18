"""Seconds per named phase, for the steps of the protocol that a runner wants timed.

Why: the provider's and the aggregator's steps are written once (:mod:`.protocol`); a runner
that reports phase times (the in-process runner, a Dask chunk, the study) hands them a
:class:`Phases` instead of copying the steps to put timers around them.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Iterator


class Phases:
    """Adds the wall-clock seconds of each ``with phases("name"):`` block to ``seconds[name]``
    (the caller's dict when given, so a runner can keep its own keys and order)."""

    def __init__(self, seconds: dict[str, float] | None = None) -> None:
        self.seconds: dict[str, float] = seconds if seconds is not None else {}

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start

    def get(self, name: str) -> float:
        """Seconds recorded for ``name`` (0.0 if none)."""
        return self.seconds.get(name, 0.0)


def phases_or_new(phases: Phases | None) -> Phases:
    """The caller's recorder, or a fresh one whose times nobody reads."""
    return phases if phases is not None else Phases()
