"""The three QAT model values no source gives, fitted to three of the paper's figures.

Why exactly three, each to one figure: the paper's Table 1 is not in our copy, only ratios in
its text; everything else in the model is cited or measured (``sim/qat/params.py``). What no
public source gives is (1) how long one request takes on an idle card, (2) what the QAT driver
costs the CPU per request, and (3) how many coroutines QHCS keeps in flight. Each is fitted to
the one figure it dominates, so the others stay predictions:

* card latency  -> QAT+S1 throughput (one synchronous caller waits for every modexp);
* driver cost   -> QAT+S2 throughput (1,000 threads keep the card busy, the CPU limits them);
* coroutines    -> QHCS1 latency (Little's law: latency = coroutines / throughput).

``benchmarks/fit_qat_unsourced.py`` runs :func:`fit_unsourced` and prints the values that
``profiles/qat_dh8970.toml`` then carries with the source "fitted".
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from cryptoffload.sim.qat.model import PAPER_TARGETS, simulate_mode
from cryptoffload.sim.qat.params import QatParams

__all__ = ["FIT_TARGETS", "QatFit", "fit_unsourced", "with_latency"]

FIT_TARGETS = {
    "qat-s1 throughput_ops": PAPER_TARGETS["qat-s1"]["throughput_ops"],
    "qat-s2 throughput_ops": PAPER_TARGETS["qat-s2"]["throughput_ops"],
    "qhcs1 mean_latency_s": PAPER_TARGETS["qhcs1"]["mean_latency_s"],
}


@dataclass(frozen=True)
class QatFit:
    modexp_latency_s: float
    request_s: float
    qhcs_coroutines: int
    achieved: dict[str, float]


def with_latency(p: QatParams, latency_s: float) -> QatParams:
    """``p`` with a card latency of ``latency_s`` and as many engines as the card's rate needs."""
    return replace(p, modexp_s=latency_s, engines=max(1, round(p.card_modexp_per_s * latency_s)))


def _bisect(f: Callable[[float], float], lo: float, hi: float, target: float, increasing: bool, steps: int = 30,
            geometric: bool = True) -> float:
    for _ in range(steps):
        mid = (lo * hi) ** 0.5 if geometric else (lo + hi) / 2
        above = f(mid) > target
        if above == increasing:
            hi = mid
        else:
            lo = mid
    return (lo * hi) ** 0.5 if geometric else (lo + hi) / 2


def fit_unsourced(p: QatParams, n: int = 6000, seed: int = 0, rounds: int = 2,
                  progress: Callable[[str], None] | None = None) -> QatFit:
    """Fit card latency, driver cost and coroutine count (see the module docstring)."""
    s1, s2, q1 = FIT_TARGETS.values()
    for r in range(rounds):
        def s2_rate(req: float) -> float:
            return simulate_mode("qat-s2", replace(p, request_s=req), n, seed=seed).throughput_ops

        p = replace(p, request_s=_bisect(s2_rate, 1e-7, 3e-4, s2, increasing=False, steps=18))
        if progress:
            progress(f"round {r + 1}: driver cost {p.request_s * 1e6:.2f} us")

        def s1_rate(lat: float) -> float:
            return simulate_mode("qat-s1", with_latency(p, lat), max(200, n // 20), seed=seed).throughput_ops

        p = with_latency(p, _bisect(s1_rate, 1e-5, 1e-2, s1, increasing=False, steps=25))
        if progress:
            progress(f"round {r + 1}: card latency {p.modexp_s * 1e3:.3f} ms")
    lo, hi = 2, 20_000
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lat = simulate_mode("qhcs1", replace(p, qhcs_coroutines=mid), n, seed=seed).mean_latency_s
        lo, hi = (lo, mid) if lat > q1 else (mid, hi)
    c = lo if abs(_q1(p, lo, n, seed) - q1) <= abs(_q1(p, hi, n, seed) - q1) else hi
    p = replace(p, qhcs_coroutines=c)
    achieved = {
        "qat-s1 throughput_ops": simulate_mode("qat-s1", p, max(200, n // 20), seed=seed).throughput_ops,
        "qat-s2 throughput_ops": simulate_mode("qat-s2", p, n, seed=seed).throughput_ops,
        "qhcs1 mean_latency_s": _q1(p, c, n, seed),
    }
    return QatFit(p.modexp_s, p.request_s, c, achieved)


def _q1(p: QatParams, c: int, n: int, seed: int) -> float:
    return simulate_mode("qhcs1", replace(p, qhcs_coroutines=c), n, seed=seed).mean_latency_s
