"""How far a prediction moves when its uncertain inputs move over their ranges (issue 26).

Why here, at layer 1: the ranges live in the profiles (``range = [low, high]`` per value), and a
band is arithmetic on a prediction, not a model. So this module takes the prediction as a
callable ``predict(overrides) -> float`` -- ``overrides`` maps input names to the values to use
instead of the nominal ones -- and imports nothing above the profiles; a study wraps its own
simulator in that callable.

Two views of the same ranges:

* the **tornado** (:func:`tornado`): each input alone at its low and its high end, the others
  nominal; the *swing* is how far the prediction moves. It names the input that moves a
  headline most, and the one that would close a divergence (:func:`closer`);
* the **band** (:func:`band`): all inputs together, at every corner of their box when there are
  few (``2^k`` runs, k <= :data:`MAX_CORNER_INPUTS`), or at a Latin-hypercube sample with a
  fixed seed when there are many; the band is the lowest and highest prediction seen
  (nominal and tornado runs included). Corners are exact for a prediction monotone in each
  input; a sample is a lower bound of the true spread, and says how many points it took.

A measured input carries its run-to-run noise (:func:`measured_input`): mean +- 2 standard
errors of its repeats.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
import statistics
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from cryptoffload.errors import ProfileError
from cryptoffload.profiles.loader import Profile, write_profile

#: Corners are enumerated up to this many inputs (64 runs); above it the band is sampled.
MAX_CORNER_INPUTS = 6
#: Latin-hypercube points when the band is sampled (a quick run may ask for fewer).
DEFAULT_SAMPLES = 64
#: A measured input's half-width, in standard errors of its mean (about a 95 % interval).
NOISE_STANDARD_ERRORS = 2.0

Predict = Callable[[Mapping[str, float]], float]


@dataclass(frozen=True)
class Input:
    """One uncertain input: its nominal value, its plausible ends and why, and its kind.
    ``integer`` inputs (counts) are sampled as whole numbers."""

    name: str
    nominal: float
    low: float
    high: float
    why: str = ""
    provenance: str = ""
    integer: bool = False

    def __post_init__(self) -> None:
        if not self.low <= self.nominal <= self.high:
            raise ValueError(f"input {self.name}: nominal {self.nominal:g} outside [{self.low:g}, {self.high:g}]")


@dataclass(frozen=True)
class Swing:
    """One input alone at each end (the others nominal): the prediction there."""

    input: str
    low_input: float
    high_input: float
    at_low: float
    at_high: float

    @property
    def swing(self) -> float:
        return abs(self.at_high - self.at_low)


@dataclass(frozen=True)
class Band:
    """A prediction, its joint band and its tornado (largest swing first); ``method`` says how
    the band was found (``"nominal"``, ``"4 corners"``, ``"Latin hypercube, 64 points, seed 1"``)."""

    nominal: float
    low: float
    high: float
    tornado: tuple[Swing, ...]
    method: str

    @property
    def most_sensitive(self) -> str:
        """The input with the largest swing (``""`` when nothing moves)."""
        return self.tornado[0].input if self.tornado and self.tornado[0].swing > 0 else ""

    @property
    def width(self) -> float:
        return self.high - self.low

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high


def profile_input(profile: Profile, dotted: str, name: str | None = None) -> Input:
    """The profile value ``dotted`` as an input over its range (a value without one is fixed)."""
    pv = profile.values[dotted]
    low, high = pv.range if pv.range is not None else (pv.value, pv.value)
    return Input(name or dotted, pv.value, low, high, pv.range_why, pv.provenance,
                 integer=float(pv.value).is_integer() and float(low).is_integer() and float(high).is_integer())


def with_values(profile: Profile, overrides: Mapping[str, float]) -> Profile:
    """A copy of ``profile`` with the dotted fields of ``overrides`` set to other values (one
    run of a band: a model that reads a profile reads this one instead)."""
    missing = sorted(set(overrides) - set(profile.values))
    if missing:
        raise ProfileError(f"{profile.path}: field '{missing[0]}' is missing")
    values = dict(profile.values)
    for dotted, v in overrides.items():
        values[dotted] = replace(values[dotted], value=float(v))
    return replace(profile, values=values)


def written_with_values(profile: Profile, overrides: Mapping[str, float], folder: Path) -> Path:
    """:func:`with_values` written to ``folder`` as a TOML file, for a model that reads a
    profile by name or path only."""
    moved = with_values(profile, overrides)
    tag = ";".join(f"{k}={v!r}" for k, v in sorted(overrides.items()))
    digest = hashlib.sha256(tag.encode()).hexdigest()[:12]
    return write_profile(folder / f"{profile.name}-{digest}.toml", moved.meta, moved.values)


def measured_input(name: str, samples: Sequence[float], k: float = NOISE_STANDARD_ERRORS) -> Input:
    """A measured input from its repeats: the mean, +- ``k`` standard errors (one sample: no
    spread known, so none is claimed)."""
    if not samples:
        raise ValueError(f"measured input {name}: no samples")
    mean = statistics.fmean(samples)
    se = statistics.stdev(samples) / math.sqrt(len(samples)) if len(samples) > 1 else 0.0
    return Input(name, mean, mean - k * se, mean + k * se,
                 f"measured: mean of {len(samples)} runs +- {k:g} standard errors ({se:.3g})", "measured")


def tornado(predict: Predict, inputs: Iterable[Input]) -> tuple[Swing, ...]:
    """Each input at its low and high end, the others nominal; largest swing first (ties in
    the given order)."""
    swings = [Swing(i.name, i.low, i.high, predict({i.name: i.low}), predict({i.name: i.high})) for i in inputs]
    return tuple(sorted(swings, key=lambda s: -s.swing))


def corners(inputs: Sequence[Input]) -> list[dict[str, float]]:
    """Every corner of the inputs' box (``2^k`` overrides)."""
    return [dict(zip([i.name for i in inputs], ends)) for ends in itertools.product(*[(i.low, i.high) for i in inputs])]


def latin_hypercube(inputs: Sequence[Input], samples: int, seed: int = 1) -> list[dict[str, float]]:
    """``samples`` points, each input's range cut into ``samples`` strata, one point per
    stratum, strata paired at random (a fixed ``seed``: the band is reproducible)."""
    rng = random.Random(seed)
    columns = []
    for i in inputs:
        strata = list(range(samples))
        rng.shuffle(strata)
        col = [i.low + (s + rng.random()) / samples * (i.high - i.low) for s in strata]
        columns.append([float(round(v)) for v in col] if i.integer else col)
    return [{i.name: columns[j][n] for j, i in enumerate(inputs)} for n in range(samples)]


def band(predict: Predict, inputs: Sequence[Input], samples: int = DEFAULT_SAMPLES, seed: int = 1,
         joint: bool = True) -> Band:
    """The prediction's joint band over ``inputs`` and its tornado (see the module's docstring);
    ``joint=False`` (a quick run whose prediction is slow) stops at the tornado's ends, a lower
    bound of the joint band, and says so in ``method``."""
    moving = [i for i in inputs if i.high > i.low]
    nominal = predict({})
    swings = tornado(predict, inputs)
    seen = [nominal] + [v for s in swings for v in (s.at_low, s.at_high)]
    if not moving:
        method = "nominal"
    elif not joint:
        method = f"tornado ends only ({2 * len(moving)} runs; corners skipped)"
    elif len(moving) <= MAX_CORNER_INPUTS:
        seen += [predict(c) for c in corners(moving)]
        method = f"{2 ** len(moving)} corners"
    else:
        seen += [predict(p) for p in latin_hypercube(moving, samples, seed)]
        method = f"Latin hypercube, {samples} points, seed {seed}"
    return Band(nominal, min(seen), max(seen), swings, method)


def closer(result: Band, target: float) -> str:
    """The input that, alone, moves the prediction furthest towards ``target`` (the one that
    would close a divergence); ``""`` when none moves it that way."""
    gap = target - result.nominal
    best, best_move = "", 0.0
    for s in result.tornado:
        move = max((v - result.nominal) * math.copysign(1.0, gap) for v in (s.at_low, s.at_high))
        if move > best_move:
            best, best_move = s.input, move
    return best


__all__ = ["Band", "DEFAULT_SAMPLES", "Input", "MAX_CORNER_INPUTS", "NOISE_STANDARD_ERRORS", "Predict", "Swing",
           "band", "closer", "corners", "latin_hypercube", "measured_input", "profile_input", "tornado",
           "with_values", "written_with_values"]
