"""The tls-offload study's predicted single-fetch ratios with their bands (issue 26).

Why these inputs: a predicted ratio is the user-space TLS fetch measured here plus the modelled
server-side difference, over that fetch. So it moves with (1) the model's assumed and derived
fractions over their profile ranges (``tls_offload.toml``: the kTLS fraction, the NIC's, the
retransmit rate, the hand-off's CPU share, the kTLS break-even, the NIC set-up), (2) the
measured fetch, over its run-to-run noise (a 95 % t-interval of this run's fetches), and (3)
the noise of any ratio of two single fetches, which is what the paper's figure is: two fetch
series of one run, a t-interval of the combined relative standard error of this run's TLS
series and the series it stands beside (``ktls`` here runs as user-space TLS, so that pair is
two identical configurations), on one series' degrees of freedom. With fewer than five fetches
a series gives no noise band (``sensitivity.MIN_SAMPLES``) and the figure has no band.

A measured ratio (``tls/plain``: both series fetched here) is banded by (3) alone
(:func:`measured_ratio_band`).

The optimistic and pessimistic variants are themselves the ends of (1), so their bands move
(2) and (3) only (``model_fields=()``): the measured noise around that end.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from cryptoffload.profiles.loader import Profile
from cryptoffload.profiles.sensitivity import (
    CONFIDENCE,
    DEFAULT_SAMPLES,
    Band,
    Input,
    Swing,
    band,
    interval_text,
    measured_input,
    profile_input,
    t_multiplier,
    with_values,
)
from cryptoffload.sim.tls import smartnic as nic
from cryptoffload.studies.bands import Banded

#: the profile values a predicted fetch ratio reads, each over its range
MODEL_FIELDS = ("ktls.cpu_fraction", "nic.cpu_fraction_of_ktls", "nic.retransmit_rate", "handoff.cpu_share",
                "handoff.ktls_breakeven_bytes", "handoff.nic_setup_s")
FETCH, RATIO_NOISE = "measured tls fetch (s)", "noise of a two-series fetch ratio"
QUICK_SAMPLES = 32

Samples = Callable[[str, str, str], Sequence[float]]


@dataclass(frozen=True)
class FetchNoise:
    """This run's own noise for one file and client: the TLS fetch's relative standard error,
    the combined one of a ratio of two series, and how far two identical configurations
    (user-space TLS run as ``tls`` and as ``ktls``) differed here (``None``: not both ran)."""

    count: int
    tls_se: float
    ratio_se: float
    identical_diff: float | None


def relative_se(samples: Sequence[float]) -> float:
    """Standard error of the mean over the mean (0 for fewer than two samples)."""
    if len(samples) < 2:
        return 0.0
    return statistics.stdev(samples) / math.sqrt(len(samples)) / statistics.fmean(samples)


def fetch_noise(samples: Samples, fname: str, client: str, ktls_is_tls: bool) -> FetchNoise:
    """The noise of this run's fetches of ``fname`` with ``client`` (see :class:`FetchNoise`)."""
    tls = list(samples("tls", fname, client))
    twin = list(samples("ktls", fname, client)) if ktls_is_tls else []
    se = relative_se(tls)
    other = relative_se(twin) if twin else se
    diff = statistics.fmean(twin) / statistics.fmean(tls) - 1 if twin and tls else None
    return FetchNoise(len(tls), se, math.hypot(se, other), diff)


def _model_at(profile: Profile, measured: nic.MeasuredCosts) -> Callable[[Mapping[str, float]], nic.TlsCostModel]:
    cache: dict[tuple[tuple[str, float], ...], nic.TlsCostModel] = {}

    def model(ov: Mapping[str, float]) -> nic.TlsCostModel:
        key = tuple(sorted((k, v) for k, v in ov.items() if k in MODEL_FIELDS))
        if key not in cache:
            cache[key] = nic.TlsCostModel(measured, nic.TlsOffloadParams.from_profile(with_values(profile, dict(key))))
        return cache[key]
    return model


def figure_label(ratio: str, fname: str, client: str) -> str:
    return f"{ratio} {fname} {client}"


def ratio_noise(noise: FetchNoise) -> Input | None:
    """The noise of a ratio of two fetch series, as a multiplier around 1: a t-interval of their
    combined relative standard error (``None`` below the minimum fetches: no band)."""
    k = t_multiplier(noise.count)
    if k is None:
        return None
    return Input(RATIO_NOISE, 1.0, 1 - k * noise.ratio_se, 1 + k * noise.ratio_se,
                 f"measured: {interval_text(noise.count)} x the combined relative standard error of two series of "
                 f"{noise.count} fetches ({100 * noise.ratio_se:.2g} %)", "measured")


def measured_ratio_band(label: str, ratio: float, noise: FetchNoise, paper: float | None) -> Banded | None:
    """The band of a ratio measured here (both series fetched in this run): the ratio times the
    t-interval of the two series' combined noise; ``None`` with fewer than the minimum fetches."""
    n = ratio_noise(noise)
    if n is None:
        return None
    lo, hi = ratio * n.low, ratio * n.high
    b = Band(ratio, lo, hi, (Swing(RATIO_NOISE, n.low, n.high, lo, hi),), interval_text(noise.count))
    return Banded(label, b, paper, [n])


def ratio_band(profile: Profile, model: nic.TlsCostModel, key: Sequence[str], size: int,
               tls_samples: Sequence[float], noise: FetchNoise, paper: float | None, quick: bool,
               model_fields: Sequence[str] = MODEL_FIELDS) -> Banded | None:
    """The band of one predicted ratio (``key``: ratio ``ktls/tls`` or ``ktls-nic/ktls``, file,
    client) on a file of ``size`` bytes; ``model_fields``: the profile values moved (none for a
    variant, which is already an end of their ranges); ``None`` when the run has too few fetches
    for a noise band."""
    ratio = key[0]
    at = _model_at(profile, model.measured)
    fetch, noisy = measured_input(FETCH, tls_samples), ratio_noise(noise)
    if fetch is None or noisy is None:
        return None
    inputs = [profile_input(profile, f) for f in model_fields] + [fetch, noisy]

    def predict(ov: Mapping[str, float]) -> float:
        m = model if not any(k in MODEL_FIELDS for k in ov) else at(ov)
        tls = ov.get(FETCH, fetch.nominal)
        k = m.predicted_fetch_s("ktls", size, tls)
        r = k / tls if ratio == "ktls/tls" else m.predicted_fetch_s("ktls-nic", size, tls) / k
        return r * ov.get(RATIO_NOISE, 1.0)

    b = band(predict, inputs, samples=QUICK_SAMPLES if quick else DEFAULT_SAMPLES)
    return Banded(figure_label(*key), b, paper, inputs)


def note(quick: bool, variant: str = "nominal") -> str:
    """The bands table's note: what moved and how (a variant moves the measured noise only)."""
    if variant != "nominal":
        return (f"The {variant} variant is itself an end of the model's ranges, so its ratios move over this run's "
                f"noise only: the measured TLS fetch over a {CONFIDENCE * 100:g} % t-interval of its fetches and the noise "
                "of a ratio of two fetch series (a t-interval of their combined standard error); two inputs, all 4 "
                "corners.")
    return ("Each predicted ratio over the tls_offload.toml ranges of the model's six fractions and costs, the "
            f"measured TLS fetch over a {CONFIDENCE * 100:g} % t-interval of this run's fetches, and the noise of a ratio "
            "of two fetch series (a t-interval of the combined standard error of this run's series); eight inputs, "
            "so a Latin hypercube of "
            f"{QUICK_SAMPLES if quick else DEFAULT_SAMPLES} points (seed 1) with every tornado end"
            + (" (a quick run: fewer points than a full run's 64)." if quick else "."))


__all__ = ["FETCH", "figure_label", "MODEL_FIELDS", "QUICK_SAMPLES", "RATIO_NOISE", "FetchNoise", "fetch_noise",
           "measured_ratio_band", "note", "ratio_band", "ratio_noise", "relative_se"]
