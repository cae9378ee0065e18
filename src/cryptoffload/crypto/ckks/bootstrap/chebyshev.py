"""A polynomial in the Chebyshev basis, interpolated and evaluated: in plaintext (numpy) and on
ciphertexts, by baby steps and giant steps (OpenFHE's ``EvalChebyshevSeriesPS``, Lattigo's
polynomial evaluator).

Why Chebyshev: EvalMod approximates a cosine on ``[-1, 1]``, where the Chebyshev basis is
well conditioned (coefficients decay like Bessel functions, ``|T_k| <= 1``), so the
coefficients are small and a ciphertext's errors are not amplified the way a monomial basis of
degree 40 would amplify them.

The evaluation (depth ``ceil(log2(d + 1)) + 1`` for degree ``d``):

* baby powers ``T_1 .. T_k`` (``k`` a power of two) by ``T_2i = 2 T_i^2 - 1`` and
  ``T_2i+1 = 2 T_i T_i+1 - T_1``, each at depth ``ceil(log2 i)``; giant powers ``T_2k, T_4k, ..``
  by doubling;
* a polynomial of degree ``< k`` is ``sum a_i T_i``: one constant product per term, one rescale;
* a larger one is split at the largest giant power ``T_g`` below its degree,
  ``p = lo + T_g hi`` (:func:`split`, the Chebyshev division: ``T_g T_i = (T_g+i + T_g-i) / 2``),
  and ``hi`` and ``lo`` evaluated the same way.

Scales: every node is evaluated *to a target* (level, scale) chosen top-down, so the terms of
every sum meet at one scale exactly (:mod:`.scales`): a baby polynomial encodes each
coefficient at the scale that takes its power to the sum's, and ``hi`` is evaluated to the
scale that makes ``T_g hi`` land on ``lo``'s after the rescale.

Written against the CKKS interface (``mul``, ``relinearize``, ``rescale``, ``mod_switch_to``,
``mul_const``, ``add_const``, ``add``, ``sub``), so it runs on any backend and on the recording
backend; :func:`evaluate_split` runs the same recursion on plain numbers, which is how its
decomposition is tested against numpy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np

from cryptoffload.crypto.ckks.bootstrap.scales import factor_for, prescale_for

if TYPE_CHECKING:
    from cryptoffload.crypto.ckks.backend import Ciphertext, CkksBackend, Plaintext

__all__ = ["ChebyshevEvaluator", "baby_size", "depth", "evaluate", "evaluate_split", "interpolate", "split"]

#: coefficients below this (relative to the largest) are dropped: beyond double precision
_NEGLIGIBLE = 2.0 ** -60


def interpolate(f: Callable[[np.ndarray], np.ndarray], degree: int) -> np.ndarray:
    """Chebyshev coefficients ``c_0 .. c_degree`` of the interpolant of ``f`` at the ``degree + 1``
    Chebyshev nodes of the first kind (the discrete cosine transform of the samples)."""
    n = degree + 1
    theta = np.pi * (np.arange(n) + 0.5) / n
    samples = f(np.cos(theta))
    k = np.arange(n)[:, None]
    coeffs = (2.0 / n) * (np.cos(k * theta[None, :]) @ samples)
    coeffs[0] /= 2
    return np.asarray(coeffs, dtype=np.float64)


def evaluate(coeffs: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``sum c_k T_k(y)`` (numpy's ``chebval``: Clenshaw's recurrence)."""
    return np.polynomial.chebyshev.chebval(y, coeffs)


def split(coeffs: np.ndarray, g: int) -> tuple[np.ndarray, np.ndarray]:
    """``(lo, hi)`` with ``p = lo + T_g hi``, ``deg lo < g``, ``deg hi < len(coeffs) - g``, for a
    polynomial of degree below ``2g``."""
    c = np.asarray(coeffs, dtype=np.float64)
    if not g < len(c) <= 2 * g:
        raise ValueError(f"split at T_{g} needs a degree between {g} and {2 * g - 1}, got {len(c) - 1}")
    hi = np.zeros(len(c) - g)
    hi[0] = c[g]
    hi[1:] = 2.0 * c[g + 1:]
    lo = c[:g].copy()
    for i in range(1, len(hi)):          # T_g T_i contributes T_(g-i) / 2 per unit of hi_i
        lo[g - i] -= hi[i] / 2.0
    return lo, hi


def baby_size(degree: int) -> int:
    """Baby powers ``k``: the power of two near ``sqrt(degree + 1)`` (at least 2), so that the
    baby powers and the giant splits cost about the same."""
    return max(2, 1 << max(1, round(math.log2(degree + 1) / 2)))


def _giant(length: int, k: int) -> int:
    """The giant power a polynomial of ``length`` coefficients is split at: the largest
    ``k 2^j`` below its length."""
    g = k
    while 2 * g < length:
        g *= 2
    return g


def _power_depth(i: int) -> int:
    return 0 if i <= 1 else math.ceil(math.log2(i))


def depth(length: int, k: int) -> int:
    """Levels the evaluation of a polynomial of ``length`` coefficients with ``k`` baby powers
    consumes (its output is this many levels below its input)."""
    if length <= k:
        return 1 + _power_depth(length - 1)
    g = _giant(length, k)
    return max(depth(length - g, k) + 1, _power_depth(g) + 1, depth(g, k))


def evaluate_split(coeffs: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    """The homomorphic evaluation's recursion on plain numbers: the same baby powers, the
    same splits, the same sums (the test that the decomposition is the polynomial)."""
    powers = {0: np.ones_like(y), 1: y}
    for i in range(2, len(coeffs) + 1):
        a = i // 2
        powers[i] = 2 * powers[a] * powers[i - a] - powers[i - 2 * a]

    def node(c: np.ndarray) -> np.ndarray:
        if len(c) <= k:
            return sum((ci * powers[i] for i, ci in enumerate(c)), np.zeros_like(y))
        g = _giant(len(c), k)
        lo, hi = split(c, g)
        return node(lo) + powers[g] * node(hi)

    return node(np.asarray(coeffs, dtype=np.float64))


def at_level(ev: CkksBackend, ct: Ciphertext, level: int) -> Ciphertext:
    """``ct`` moved down to ``level`` (``mod_switch_to``; itself when it is there already)."""
    if ev.level(ct) == level:
        return ct
    out = ev.mod_switch_to(ct, level)
    if isinstance(out, type(ct)):
        return out
    raise AssertionError(f"mod_switch_to of a ciphertext gave a {type(out).__name__}")

@dataclass
class ChebyshevEvaluator:
    """Evaluates Chebyshev series on ciphertexts of one input ``y`` (values in ``[-1, 1]``) on a
    backend ``ev``: the powers are made once and shared by every series evaluated."""

    ev: CkksBackend
    y: Ciphertext
    k: int
    _powers: dict[int, Ciphertext] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._powers = {1: self.y}
        self._top = self.ev.level(self.y)

    def _divisor(self, level: int) -> float:
        return float(self.ev.primes[level])

    def _at(self, ct: Ciphertext, level: int) -> Ciphertext:
        return at_level(self.ev, ct, level)

    def _double_product(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        """``2 a b`` (relinearised, not rescaled) at the lower of the two levels."""
        ev = self.ev
        lv = min(ev.level(a), ev.level(b))
        prod = ev.relinearize(ev.mul(self._at(a, lv), self._at(b, lv)))
        return ev.add(prod, prod)

    def power(self, i: int) -> Ciphertext:
        """``T_i(y)``, made from smaller powers on first use (see the module docstring)."""
        got = self._powers.get(i)
        if got is not None:
            return got
        ev = self.ev
        a = i // 2
        if i == 2 * a:                         # T_2a = 2 T_a^2 - 1
            out = ev.add_const(ev.rescale(self._double_product(self.power(a), self.power(a))), -1.0)
        else:                                  # T_2a+1 = 2 T_a T_a+1 - T_1
            prod = self._double_product(self.power(a), self.power(a + 1))
            t1 = self.matched(self._at(self.power(1), ev.level(prod)), ev.scale(prod))
            out = ev.rescale(ev.sub(prod, t1))
        self._powers[i] = out
        return out

    def matched(self, ct: Ciphertext, scale: float) -> Ciphertext:
        """``ct`` at exactly ``scale`` (where floats allow: within its last bit), its values
        unchanged: times the integer 1 encoded at the ratio of the scales -- no level, one
        element-wise product, and only where the scales differ (see :mod:`.scales`)."""
        ev = self.ev
        for _ in range(2):   # the second product corrects a last bit the first could not reach
            if ev.scale(ct) == scale:
                break
            ct = ev.mul_const(ct, 1.0, scale=factor_for(ev.scale(ct), scale))
        return ct

    def output_level(self, length: int) -> int:
        """The level a series of ``length`` coefficients comes out at."""
        return self._top - depth(length, self.k)

    def series(self, coeffs: np.ndarray, scale: float) -> Ciphertext:
        """``sum c_i T_i(y)`` at :meth:`output_level` and ``scale`` (exactly, where floats allow)."""
        c = np.asarray(coeffs, dtype=np.float64)
        c = np.where(np.abs(c) > _NEGLIGIBLE * float(np.max(np.abs(c))), c, 0.0)
        return self._node(c, self.output_level(len(c)), scale)

    def _node(self, c: np.ndarray, level: int, scale: float) -> Ciphertext:
        if len(c) <= self.k:
            return self._baby(c, level, scale)
        ev = self.ev
        g = _giant(len(c), self.k)
        lo, hi = split(c, g)
        tg = self._at(self.power(g), level + 1)
        # hi's scale: the one that takes T_g hi to ``scale`` after the rescale at level + 1
        want = prescale_for(scale, self._divisor(level + 1))
        prod = ev.rescale(ev.relinearize(ev.mul(tg, self._node(hi, level + 1, factor_for(ev.scale(tg), want)))))
        if not np.any(lo):
            return prod
        return ev.add(prod, self.matched(self._node(lo, level, ev.scale(prod)), ev.scale(prod)))

    def _baby(self, c: np.ndarray, level: int, scale: float) -> Ciphertext:
        """``sum c_i T_i`` for ``i < k`` at (``level``, ``scale``): each power brought to
        ``level + 1``, times its coefficient encoded at the scale that takes it to the sum's,
        the constant term added, one rescale."""
        ev = self.ev
        total = prescale_for(scale, self._divisor(level + 1))
        terms: list[Ciphertext] = []
        for i in [i for i in range(1, len(c)) if c[i] != 0.0] or [1]:   # a constant: T_1 times 0
            t = self._at(self.power(i), level + 1)
            term = ev.mul_const(t, float(c[i]) if i < len(c) else 0.0, scale=factor_for(ev.scale(t), total))
            terms.append(self.matched(term, ev.scale(terms[0])) if terms else term)
        acc = ev.add_many(terms)
        if c[0] != 0.0:
            acc = ev.add_const(acc, float(c[0]))
        return ev.rescale(acc)
