"""The fit of ``profiles/he_cnn_paper.toml``'s phase shares to the in-storage paper's Table 2,
and how far Table 2's printed precision moves each share (issue 26).

Why a function: the shares used to be fitted by hand, with a +-2 % "allowance" as their range.
Written out, the fit is a few lines of arithmetic, so the stored values and ranges can be
recomputed (a test holds the profile to them) instead of trusted.

The model the fit inverts: one device's latency at source bandwidth ``B`` is the max over the
program's ops of (bytes needed up to the op / B + compute from the op on). Phases need their
data and do their compute at an even rate, so the max is at a phase boundary, a *corner*
(data needed, compute left), and Table 2 is the upper envelope of the corners' lines
``D / B + C``. Adjacent Table 2 points (16-8, 8-4, 4-2 GB/s) fix the line between them:
``D = (L_slow - L_fast) / (1/B_slow - 1/B_fast)``, ``C = L_fast - D / B_fast``. The last corner
is pinned at all the data (the totals' weights + keys), so ``C = L(1 GB/s) - (W + K) / 1``.
Then each phase's compute share is the compute between its corners over ``compute_s``, and
its weights share the data between its corners less the keys first needed there (the keys'
split is assumed: Table 2 fixes how much data lies between two corners, not whether it is
weights or keys).

Table 2 prints its latencies to the ms: each is +-0.5 ms. Every share is linear in the five
latencies, so refitting at every corner of that box (32 fits) gives each share's exact
extremes; :func:`share_ranges` does that, rounded outward to :data:`RANGE_DIGITS` decimals.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Mapping

from cryptoffload.profiles.loader import Profile

#: Table 2's latencies are printed to the ms: each is its value +-0.5 ms.
TABLE2_HALF_MS = 0.5
#: The shares are stored to 4 decimals, their ranges rounded outward to 5.
VALUE_DIGITS, RANGE_DIGITS = 4, 5
SHARES = ("weights_share", "keys_share", "compute_share")


@dataclass(frozen=True)
class Corner:
    """A phase boundary: the data (GB) needed by the first op after it, the compute (s) left from it on."""

    data_gb: float
    compute_left_s: float


def corners(table2_ms: Mapping[float, float], total_gb: float) -> list[Corner]:
    """The corners, first to last, from Table 2's points (GB/s -> ms): the line through each
    pair of adjacent points, fastest first, then the last corner pinned at all ``total_gb``."""
    pts = sorted(((float(b), ms / 1e3) for b, ms in table2_ms.items()), reverse=True)
    out = []
    for (b_fast, l_fast), (b_slow, l_slow) in zip(pts[:-2], pts[1:-1]):
        data = (l_slow - l_fast) / (1 / b_slow - 1 / b_fast)
        out.append(Corner(data, l_fast - data / b_fast))
    b_last, l_last = pts[-1]
    out.append(Corner(total_gb, l_last - total_gb / b_last))
    return out


def fit_shares(table2_ms: Mapping[float, float], weights_gb: float, keys_gb: float, compute_s: float,
               first_weights_share: float, keys_shares: list[float]) -> list[dict[str, float]]:
    """Each phase's shares, in program order (one phase more than corners), given the assumed
    ones: the first phase's weights and every phase's keys.

    Compute: each phase does the compute between its corners. Data: the first phase needs what
    is assumed (the first corner's data does not fit in its compute on the FPGA model); the
    second, the data between the first two corners; each later one, what brings the data
    needed up to its corner; the last, nothing (the last corner holds all the data).
    """
    cs = corners(table2_ms, weights_gb + keys_gb)
    if len(keys_shares) != len(cs) + 1:
        raise ValueError(f"{len(cs) + 1} phases for {len(table2_ms)} Table 2 points, got {len(keys_shares)} keys shares")
    first = first_weights_share * weights_gb + keys_shares[0] * keys_gb
    needed = [0.0, first, first + cs[1].data_gb - cs[0].data_gb] + [c.data_gb for c in cs[2:]] + [weights_gb + keys_gb]
    left = [compute_s] + [c.compute_left_s for c in cs] + [0.0]
    return [{"weights_share": (needed[i + 1] - needed[i] - k * keys_gb) / weights_gb, "keys_share": k,
             "compute_share": (left[i] - left[i + 1]) / compute_s} for i, k in enumerate(keys_shares)]


def share_ranges(table2_ms: Mapping[float, float], weights_gb: float, keys_gb: float, compute_s: float,
                 first_weights_share: float, keys_shares: list[float],
                 half_ms: float = TABLE2_HALF_MS) -> list[dict[str, tuple[float, float]]]:
    """Each share's lowest and highest value over the fits at every corner of Table 2's
    precision box (each latency +-``half_ms``; the assumed shares held), rounded outward to
    :data:`RANGE_DIGITS` decimals."""
    points = sorted(table2_ms)
    fits = [fit_shares({b: table2_ms[b] + s * half_ms for b, s in zip(points, signs)}, weights_gb, keys_gb,
                       compute_s, first_weights_share, keys_shares)
            for signs in itertools.product((-1, 1), repeat=len(points))]
    return [{f: outward(min(fit[i][f] for fit in fits), max(fit[i][f] for fit in fits)) for f in SHARES}
            for i in range(len(keys_shares))]


def first_phase_ranges(table2_ms: Mapping[float, float], weights_gb: float, keys_gb: float,
                       first_weights_share: float, first_keys_share: float,
                       half_ms: float = TABLE2_HALF_MS) -> dict[str, tuple[float, float]]:
    """The assumed first phase's weights and keys shares: each from none to what the first
    corner's data at its highest (over Table 2's precision box) leaves beside the other."""
    points = sorted(table2_ms)
    most = max(corners({b: table2_ms[b] + s * half_ms for b, s in zip(points, signs)}, weights_gb + keys_gb)[0].data_gb
               for signs in itertools.product((-1, 1), repeat=len(points)))
    return {"weights_share": outward(0.0, (most - first_keys_share * keys_gb) / weights_gb),
            "keys_share": outward(0.0, (most - first_weights_share * weights_gb) / keys_gb)}


@dataclass(frozen=True)
class ProfileFit:
    """The profile's phases in program order, the shares the fit gives them, their ranges from
    Table 2's precision, and the assumed first phase's ranges."""

    phases: list[str]
    shares: list[dict[str, float]]
    ranges: list[dict[str, tuple[float, float]]]
    first_ranges: dict[str, tuple[float, float]]


def fit_profile(profile: Profile, table2_ms: Mapping[float, float]) -> ProfileFit:
    """Refit ``profile``'s phase shares (``he_cnn_paper.toml``) to ``table2_ms`` from its totals
    and its assumed shares (the first phase's weights, every phase's keys)."""
    phases = profile.section("phases")
    names = sorted(phases, key=lambda k: phases[k].get("order", 0.0))
    w, k, c = (profile.value(f"totals.{f}") for f in ("weights_gb", "keys_gb", "compute_s"))
    first_w, keys = phases[names[0]]["weights_share"], [phases[n]["keys_share"] for n in names]
    return ProfileFit(names, fit_shares(table2_ms, w, k, c, first_w, keys),
                      share_ranges(table2_ms, w, k, c, first_w, keys),
                      first_phase_ranges(table2_ms, w, k, first_w, keys[0]))


def outward(low: float, high: float, digits: int = RANGE_DIGITS) -> tuple[float, float]:
    """``[low, high]`` rounded outward to ``digits`` decimals (a bound never shrinks; 1e-9
    absorbs float noise, so an exact 0 stays 0)."""
    scale = 10 ** digits
    return math.floor(low * scale + 1e-9) / scale, math.ceil(high * scale - 1e-9) / scale


__all__ = ["Corner", "ProfileFit", "RANGE_DIGITS", "SHARES", "TABLE2_HALF_MS", "VALUE_DIGITS", "corners",
           "first_phase_ranges", "fit_profile", "fit_shares", "outward", "share_ranges"]
