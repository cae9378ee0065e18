"""The bsgs-multidevice study's Table 1 figures with their bands (issue 26).

Why the op costs are refitted, not moved: rotation, product and reduction-round size are fitted
to the naive row *given* the assumed naive baby-step count (``shape.naive_baby``) and link
latency. Moving bs without refitting would price a naive row the paper never measured; so each
run refits the costs to the naive row at the moved inputs (``fit_naive_row``) and predicts the
tuned row from them, exactly as the study does at the nominal inputs. The fitted costs' own
ranges are not moved on top: the refit is what they would be.

A band is ours plus the model's shift: ``table value + (refit at the overrides - refit at the
nominal inputs)``, so the nominal end is the table's own number (the profile stores the fit
rounded to 4 digits) and the shift is the refit's.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Mapping

from cryptoffload.policies import bsgs_tuner as tuner
from cryptoffload.profiles.sensitivity import Input, band, profile_input
from cryptoffload.studies._bands import Banded, Memo
from cryptoffload.studies._bsgs_paper import PaperSetup, Table1, fit_naive_row

NAIVE_BABY, LATENCY = "naive_baby", "latency_s"


def inputs(setup: PaperSetup) -> list[Input]:
    """The assumed inputs the fit rests on, over their profile ranges."""
    return [profile_input(setup.profile, "shape.naive_baby", NAIVE_BABY),
            profile_input(setup.profile, "link.latency_s", LATENCY)]


def tuned_label(n: int) -> str:
    return f"tuned ms at N = {n}"


def speedup_label(n: int) -> str:
    return f"speedup at N = {n}"


def refit_run(setup: PaperSetup, devices: list[int]) -> Callable[[Mapping[str, float]], dict[str, float]]:
    """One refit at the nominal inputs (see the module's docstring); returns ``run(overrides)``."""
    def raw(overrides: Mapping[str, float]) -> dict[str, float]:
        baby = int(overrides.get(NAIVE_BABY, setup.naive_baby))
        latency = float(overrides.get(LATENCY, setup.costs.latency_s))
        fit = fit_naive_row(baby, setup.diagonals, latency, setup.costs.bandwidth_Bps)
        costs = replace(setup.costs, latency_s=latency, rotate_s=fit["rotate_s"], pmul_s=fit["pmul_s"],
                        add_s=fit["add_s"], bytes=fit["bytes"])
        out = {}
        for n in devices:
            best = tuner.exhaustive(setup.base, n, costs, strategies=("replicate",), space="pow2")[0]
            out[tuned_label(n)] = best.predicted_s * 1e3
            out[speedup_label(n)] = tuner.naive(setup.base, n, costs, baby=baby).predicted_s / best.predicted_s
        return out
    return raw


def table1_bands(setup: PaperSetup, t1: Table1) -> dict[str, Banded]:
    """Bands of the tuned time at every N > 1 the paper has, and of the speedup at its largest N."""
    pairs = [(o, p) for o, p in t1.pairs() if o.devices > 1]
    if not pairs:
        return {}
    raw = refit_run(setup, [o.devices for o, _ in pairs])
    base = raw({})
    ours = {tuned_label(o.devices): o.tuned_ms for o, _ in pairs} | {speedup_label(o.devices): o.speedup for o, _ in pairs}
    memo = Memo(lambda ov: {k: v - base[k] + ours[k] for k, v in raw(ov).items()} if ov else ours)
    moving = inputs(setup)
    out = {}
    for o, p in pairs:
        out[tuned_label(o.devices)] = Banded(tuned_label(o.devices), band(memo.figure(tuned_label(o.devices)), moving),
                                             p.tuned_ms, moving)
    o, p = max(pairs, key=lambda op: op[0].devices)
    out[speedup_label(o.devices)] = Banded(speedup_label(o.devices), band(memo.figure(speedup_label(o.devices)), moving),
                                           p.speedup, moving)
    return out


NOTE = ("Each input over its range in bsgs_u280.toml (naive_baby: 128 .. 512, the powers of two beside OpenFHE's 256; "
        "latency_s: 0.5 .. 5 us), the op costs refitted to the naive row at every point (fit_naive_row), all 4 "
        "corners; a band is the table's value plus the refit's shift. Quick and full runs compute the same band.")

__all__ = ["LATENCY", "NAIVE_BABY", "NOTE", "inputs", "refit_run", "speedup_label", "table1_bands", "tuned_label"]
