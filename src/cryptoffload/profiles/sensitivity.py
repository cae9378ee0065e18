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

A measured input carries its run-to-run noise (:func:`measured_input`): its repeats' mean +- a
Student t-interval at :data:`CONFIDENCE` (:func:`t_half_width`), and only from at least
:data:`MIN_SAMPLES` repeats (issue 35): two samples give a standard error on one degree of
freedom, whose 95 % interval is 12.7 standard errors wide on each side, not 2.
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
#: The confidence of every noise band: a two-sided Student t-interval of a mean.
CONFIDENCE = 0.95
#: The fewest repeats a noise band is computed from (four degrees of freedom); fewer give none.
MIN_SAMPLES = 5

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


def _regularized_beta(x: float, a: float, b: float) -> float:
    """I_x(a, b), the regularized incomplete beta function, by its continued fraction (Lentz's
    method, as in Numerical Recipes' ``betai``): what the t distribution's tails are made of."""
    if x <= 0.0 or x >= 1.0:
        return 0.0 if x <= 0.0 else 1.0
    if x > (a + 1.0) / (a + b + 2.0):
        return 1.0 - _regularized_beta(1.0 - x, b, a)
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)) / a
    tiny, c, d = 1e-300, 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    f = d
    for m in range(1, 400):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            f *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return front * f


def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (``p`` in (0.5, 1)), by
    bisection on its CDF ``1 - I_{df/(df+t^2)}(df/2, 1/2) / 2``: no statistics package needed."""
    if not 0.5 < p < 1.0 or df < 1:
        raise ValueError(f"t quantile: need 0.5 < p < 1 and df >= 1, got p={p}, df={df}")
    lo, hi = 0.0, 1.0
    while 1.0 - 0.5 * _regularized_beta(df / (df + hi * hi), df / 2.0, 0.5) < p:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if 1.0 - 0.5 * _regularized_beta(df / (df + mid * mid), df / 2.0, 0.5) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def t_multiplier(n: int, confidence: float = CONFIDENCE) -> float | None:
    """How many standard errors of a mean of ``n`` repeats a two-sided t-interval at
    ``confidence`` spans on each side; ``None`` below :data:`MIN_SAMPLES` (no band claimed)."""
    if n < MIN_SAMPLES:
        return None
    return t_quantile((1.0 + confidence) / 2.0, n - 1)


def interval_text(n: int, confidence: float = CONFIDENCE) -> str:
    """How a noise band was made, in words (``"t-interval, 95 %, 9 degrees of freedom (t = 2.26)"``)."""
    k = t_multiplier(n, confidence)
    if k is None:
        return f"no noise band: {n} repeat(s), fewer than the {MIN_SAMPLES} a t-interval is computed from"
    return f"t-interval, {confidence * 100:g} %, {n - 1} degrees of freedom (t = {k:.3g})"


def measured_input(name: str, samples: Sequence[float], confidence: float = CONFIDENCE) -> Input | None:
    """A measured input from its repeats: the mean, +- the t-interval's half-width at
    ``confidence``; ``None`` with fewer than :data:`MIN_SAMPLES` repeats (no band can be claimed
    from them: the figure it moves is then inconclusive)."""
    if not samples:
        raise ValueError(f"measured input {name}: no samples")
    k = t_multiplier(len(samples), confidence)
    if k is None:
        return None
    mean = statistics.fmean(samples)
    se = statistics.stdev(samples) / math.sqrt(len(samples))
    return Input(name, mean, mean - k * se, mean + k * se,
                 f"measured: mean of {len(samples)} runs, {interval_text(len(samples), confidence)} x standard "
                 f"error {se:.3g}", "measured")


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


__all__ = ["Band", "CONFIDENCE", "DEFAULT_SAMPLES", "Input", "MAX_CORNER_INPUTS", "MIN_SAMPLES", "Predict", "Swing",
           "band", "closer", "corners", "interval_text", "latin_hypercube", "measured_input", "profile_input",
           "t_multiplier", "t_quantile", "tornado", "with_values", "written_with_values"]
