"""The prediction interval of the interval-based policies, chosen on their own history.

Why: the paper (Niwa, Maeda and Yamaguchi) fixes the interval at 5 MB of requested data (about
200 requests) and notes that the interval "could be changed" if prediction accuracy dropped. In
our runs the fixed 5 MB interval makes Predict *lose* to Nopredict at 10 req/s: at that load a
reconfiguration costs nothing (the FPGA would sit idle), so Nopredict, which reconfigures to a
fresh random pair on every miss, catches a run of 20-200 requests after a few tries, while
Predict keeps the pair predicted for the current 5 MB state until the run has shifted that
state -- it lags by a good part of an interval. A shorter interval follows runs sooner but
reconfigures more often, which costs more the busier the FPGA is: the right interval depends
on the load.

A deployed proxy would choose it on its own logs, and so does :func:`tune_intervals`: the first
half of the history builds the 2-gram table, the second half is replayed at each rate with
Predict for every candidate interval, and the interval with the lowest p90 latency (the
paper's metric) is kept for that rate. The evaluated trace is never looked at.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from cryptoffload.errors import ConfigError
from cryptoffload.policies.reconfig import prepare_policies, run_policy
from cryptoffload.sim.reconfig.platform import ReconfigPlatform
from cryptoffload.workloads.request_trace import Trace

__all__ = ["CANDIDATE_WINDOWS", "IntervalChoice", "tune_intervals"]

MB = 1024 * 1024
#: Candidate intervals in bytes: from one request (16 KB, below the mean request of 24 KB, so
#: most intervals hold a single request) to the paper's 5 MB (about 200 requests).
CANDIDATE_WINDOWS: tuple[float, ...] = tuple(x * MB for x in (1 / 64, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0))


@dataclass(frozen=True)
class IntervalChoice:
    """The interval kept for ``rate`` and the held-out p90 (seconds) of every candidate."""

    rate: float
    window: float
    p90_by_window: dict[float, float]


def tune_intervals(history: Trace, platform: ReconfigPlatform, rates: Sequence[float], seed: int,
                   candidates: Sequence[float] = CANDIDATE_WINDOWS, policy: str = "predict",
                   quantile: float = 90.0, advance: Callable[[str], None] | None = None) -> dict[float, IntervalChoice]:
    """Per rate, the candidate interval whose ``policy`` has the lowest held-out latency quantile."""
    if len(history) < 4:
        raise ConfigError("interval tuning needs a history of at least 4 requests")
    if not candidates or any(not (w > 0 and np.isfinite(w)) for w in candidates):
        raise ConfigError("candidate intervals must be positive numbers of bytes")
    half = len(history) // 2
    train, held = history.head(half), history.segment(half)
    preds = {w: prepare_policies([policy], held, train, platform, seed, w)[policy] for w in candidates}
    out: dict[float, IntervalChoice] = {}
    for rate in rates:
        t = np.asarray(held.rescaled(rate).time, dtype=np.float64)
        scores = {w: float(np.percentile(run_policy(pol, t, held, platform).latency, quantile))
                  for w, pol in preds.items()}
        best = min(candidates, key=lambda w: (scores[w], w))
        out[float(rate)] = IntervalChoice(float(rate), float(best), scores)
        if advance:
            advance(f"interval for {rate:g} req/s: {best / MB:g} MB")
    return out
