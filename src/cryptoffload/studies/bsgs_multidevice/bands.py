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

The same refit gives two more things: the naive row's own error at every point (the fit claim's
band: a fit is not a prediction, so its band shows the fit reproduces the row whatever the
assumed inputs, :func:`naive_fit_band`), and the ranges ``bsgs_u280.toml`` stores for the
fitted op costs -- the extremes of the refit over the assumed inputs' ranges (:func:`fit_ranges`),
computed, not an allowance.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Callable, Mapping

from cryptoffload.policies import bsgs_tuner as tuner
from cryptoffload.profiles.sensitivity import Input, band, profile_input
from cryptoffload.studies.bands import Banded, Memo
from cryptoffload.profiles.loader import Profile
from cryptoffload.studies.bsgs_multidevice.paper import (NAIVE_FIT_FIGURE, PaperSetup, Table1, fit_naive_row,
                                               naive_row_error)

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
    """Bands of the tuned time and the speedup at every N the paper has (issue 35: every cell
    beside a paper value is judged), and of the naive row's fit residual."""
    pairs = t1.pairs()
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
        out[speedup_label(o.devices)] = Banded(speedup_label(o.devices),
                                               band(memo.figure(speedup_label(o.devices)), moving), p.speedup, moving)
    return out | {NAIVE_FIT_FIGURE: naive_fit_band(setup, t1)}


def naive_fit_band(setup: PaperSetup, t1: Table1) -> Banded:
    """The naive row's largest |error| (%) against the paper's with the op costs refitted to it
    at every point of the assumed inputs' ranges: the table's error plus the refit's shift, as
    the other bands. No paper value: the fit's residual is ours alone."""
    def refit_error(overrides: Mapping[str, float]) -> float:
        baby = int(overrides.get(NAIVE_BABY, setup.naive_baby))
        latency = float(overrides.get(LATENCY, setup.costs.latency_s))
        fit = fit_naive_row(baby, setup.diagonals, latency, setup.costs.bandwidth_Bps)
        costs = replace(setup.costs, latency_s=latency, rotate_s=fit["rotate_s"], pmul_s=fit["pmul_s"],
                        add_s=fit["add_s"], bytes=fit["bytes"])
        return max(abs(tuner.naive(setup.base, o.devices, costs, baby=baby).predicted_s * 1e3 / p.naive_ms - 1)
                   for o, p in t1.pairs()) * 100

    ours, base = naive_row_error(t1), refit_error({})
    moving = inputs(setup)
    return Banded(NAIVE_FIT_FIGURE, band(lambda ov: ours + refit_error(ov) - base if ov else ours, moving),
                  None, moving)


#: the profile fields the naive-row fit writes (fit_naive_row's keys), and where they live
FITTED_FIELDS = {"rotate_s": "ops.rotate_s", "pmul_s": "ops.pmul_s", "add_s": "ops.add_s", "bytes": "ciphertext.bytes"}


def fit_points(profile: Profile) -> list[tuple[int, float]]:
    """The assumed inputs' points the stored ranges are the refit's extremes over: every power
    of two bs in ``shape.naive_baby``'s range (bs x gs = C admits no other) and ``link.latency_s``
    at its ends and nominal value (the fit is linear in it, so the ends are its extremes)."""
    low, high = profile.range("shape.naive_baby") or (profile.value("shape.naive_baby"),) * 2
    babies = [2 ** k for k in range(int(math.log2(low)), int(math.log2(high)) + 1)]
    lat_low, lat_high = profile.range("link.latency_s") or (profile.value("link.latency_s"),) * 2
    latencies = sorted({lat_low, profile.value("link.latency_s"), lat_high})
    return [(b, lat) for b in babies for lat in latencies]


def fit_ranges(profile: Profile) -> dict[str, tuple[float, float]]:
    """``{"ops.rotate_s": (low, high), ...}``: the extremes of the fitted op costs when the fit
    is redone at every point of :func:`fit_points` (the add = 3/7 pmul ratio is not moved: its
    basis is one SEAL measurement, with no spread known)."""
    fits = [fit_naive_row(b, int(profile.value("shape.diagonals")), lat, profile.value("link.bandwidth_Bps"))
            for b, lat in fit_points(profile)]
    return {field: (min(f[key] for f in fits), max(f[key] for f in fits)) for key, field in FITTED_FIELDS.items()}


def stored_rounding(field: str, value: float) -> float:
    """How ``bsgs_u280.toml`` stores a fitted value and its range: 4 significant digits, the
    wire size in whole bytes."""
    if field == "ciphertext.bytes":
        return float(round(value))
    return float(f"{value:.4g}")


NOTE = ("Each input over its range in bsgs_u280.toml (naive_baby: 128 .. 512, the powers of two beside OpenFHE's 256; "
        "latency_s: 0.5 .. 5 us), the op costs refitted to the naive row at every point (fit_naive_row), all 4 "
        "corners; a band is the table's value plus the refit's shift. The naive row's error is the fit's own "
        "residual (no paper value: a fit, not a prediction). Quick and full runs compute the same band.")

__all__ = ["FITTED_FIELDS", "LATENCY", "NAIVE_BABY", "NOTE", "fit_points", "fit_ranges", "inputs", "naive_fit_band",
           "refit_run", "speedup_label", "stored_rounding", "table1_bands", "tuned_label"]
