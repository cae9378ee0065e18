"""EvalMod: bootstrapping's approximate reduction modulo ``q_0``, as a scaled cosine's Chebyshev
series followed by double-angle steps.

After the mod-raise, a coefficient is ``t = m + q_0 I`` with ``|I| <= K`` (``K = 16`` for the
sparse-secret encapsulation's weight-32 secret: a deterministic bound, so no failure
probability) and ``|m| << q_0``. With ``x = t / q_0 = I + m / q_0``,

    sin(2 pi x) / (2 pi) = sin(2 pi m / q_0) / (2 pi) ~ m / q_0

(relative error ``(2 pi m / q_0)^2 / 6``: why the message must be ``2^r`` times smaller than
``q_0``, :attr:`EvalModParams.message_ratio_bits`). CoeffToSlot hands EvalMod ``y = x / K'``
in ``[-1, 1]`` (``K' = K + 1/2``); EvalMod evaluates

    c_0(y) = cos(2 pi (K' y - 1/4) / 2^r)        (a Chebyshev series of degree d)
    c_(j+1) = 2 c_j^2 - 1                         (r double-angle steps)

so ``c_r = cos(2 pi (x - 1/4)) = sin(2 pi x)``, and then (:attr:`EvalModParams.arcsine`) the
first terms of the arcsine, ``u (6 + u^2) = 6 (u + u^3 / 6) ~ 6 arcsin(u)`` for ``u = c_r``: two
more levels that remove the sine's own error (``(2 pi m / q_0)^2 / 6`` relative, which a
constant message of 1 would meet in full) down to ``3 u^4 / 40`` -- so the message may enter at
``q_0 / 2^8`` instead of ``q_0 / 2^12``, and EvalMod's noise is amplified 16 times less on the
way back. The ``1 / (12 pi)`` (or ``1 / 2 pi`` without the arcsine) goes into SlotToCoeff's
constants. Why the double angle: ``cos(2 pi K' y)`` itself needs degree ~140 at ``K' = 16.5``;
``2^-r`` of the angle needs ~40 at ``r = 3`` (depth 7 + 3 double angles = 10 levels, as
OpenFHE's SPARSE_ENCAPSULATED bootstrapping: degree 32, 3 double angles), at the price of each
double angle amplifying an error by up to 4x.

:func:`choose` picks the degree: the smallest whose interpolation error (measured on a fine
grid) is below the target. Plaintext: :func:`reference` (numpy); on ciphertexts:
:func:`eval_mod` (written against the CKKS interface).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from cryptoffload.crypto.ckks.bootstrap.chebyshev import ChebyshevEvaluator, at_level, baby_size, depth, interpolate
from cryptoffload.crypto.ckks.errors import CkksError

if TYPE_CHECKING:
    from cryptoffload.crypto.ckks.backend import Ciphertext, CkksBackend, Plaintext

__all__ = ["EvalModParams", "choose", "eval_mod", "reference"]

#: interpolation error the default degree reaches (max over ``[-1, 1]``), before the double
#: angles amplify it: ~2^-44 keeps EvalMod's own error near the noise of a 58-bit scale
TARGET_ERROR_BITS = 44
MAX_DEGREE = 127


@dataclass(frozen=True)
class EvalModParams:
    """``overflow``: the bound ``K`` on ``|I|``; ``double_angles``: ``r``; ``degree``: the
    Chebyshev degree; ``message_ratio_bits``: ``log2(q_0 / scale)`` the message enters with;
    ``arcsine``: the arcsine's correction after the sine (two levels)."""

    overflow: int
    double_angles: int
    degree: int
    message_ratio_bits: int
    arcsine: bool = True

    def __post_init__(self) -> None:
        if self.overflow < 1 or not 0 <= self.double_angles <= 8 or not 2 <= self.degree <= MAX_DEGREE:
            raise CkksError(f"EvalMod parameters out of range: K = {self.overflow}, r = {self.double_angles}, "
                            f"degree {self.degree} (K >= 1, r 0..8, degree 2..{MAX_DEGREE})")

    @property
    def interval(self) -> float:
        """``K'``: the half-width of the interval of ``x = t / q_0`` covered (``|x| <= K + |m/q_0|``)."""
        return self.overflow + 0.5

    def cosine(self, y: np.ndarray) -> np.ndarray:
        """The function the series interpolates: ``cos(2 pi (K' y - 1/4) / 2^r)``."""
        return np.cos(2 * np.pi * (self.interval * y - 0.25) / 2.0 ** self.double_angles)

    @cached_property
    def coefficients(self) -> np.ndarray:
        return interpolate(self.cosine, self.degree)

    @property
    def baby(self) -> int:
        return baby_size(self.degree)

    @property
    def depth(self) -> int:
        """Levels EvalMod consumes: the series', one per double angle, two for the arcsine."""
        return depth(self.degree + 1, self.baby) + self.double_angles + (2 if self.arcsine else 0)

    @property
    def gain(self) -> float:
        """What EvalMod's output is per unit of ``sin(2 pi x) / 2 pi`` ~ ``m / q_0``: ``2 pi``, or
        ``12 pi`` with the arcsine (``u (6 + u^2)``); SlotToCoeff divides by it."""
        return (12.0 if self.arcsine else 2.0) * math.pi


def interpolation_error(params: EvalModParams, points: int = 1 << 15) -> float:
    """The largest ``|series - cosine|`` over a fine grid of ``[-1, 1]``."""
    y = np.linspace(-1.0, 1.0, points)
    return float(np.max(np.abs(np.polynomial.chebyshev.chebval(y, params.coefficients) - params.cosine(y))))


def choose(overflow: int, *, message_ratio_bits: int, double_angles: int = 3, arcsine: bool = True,
           target_bits: int = TARGET_ERROR_BITS) -> EvalModParams:
    """The lowest degree (odd and even tried alike) whose interpolation error is below
    ``2^-target_bits`` for this ``K`` and ``r``."""
    for degree in range(8, MAX_DEGREE + 1):
        p = EvalModParams(overflow, double_angles, degree, message_ratio_bits, arcsine)
        if interpolation_error(p) <= 2.0 ** -target_bits:
            return p
    raise CkksError(f"EvalMod: no Chebyshev degree up to {MAX_DEGREE} reaches 2^-{target_bits} for K = {overflow} "
                    f"with {double_angles} double angles; use more double angles")


def reference(params: EvalModParams, y: np.ndarray) -> np.ndarray:
    """EvalMod in plaintext, step by step as on ciphertexts: the series, the double angles (so
    ``u = sin(2 pi K' y)`` up to the series' error), the arcsine's ``u (6 + u^2)``."""
    c = np.polynomial.chebyshev.chebval(y, params.coefficients)
    for _ in range(params.double_angles):
        c = 2 * c * c - 1
    return c * (6 + c * c) if params.arcsine else c


def _double_angle(ev: CkksBackend, c: Ciphertext) -> Ciphertext:
    """``2 c^2 - 1``: one product, one rescale."""
    sq = ev.relinearize(ev.mul(c, c))
    return ev.add_const(ev.rescale(ev.add(sq, sq)), -1.0)


def _arcsine(ev: CkksBackend, u: Ciphertext) -> Ciphertext:
    """``u (6 + u^2)``: the square plus 6 (one rescale), times ``u`` (one more)."""
    sq = ev.relinearize(ev.mul(u, u))
    six_plus = ev.rescale(ev.add_const(sq, 6.0))
    low = at_level(ev, u, ev.level(six_plus))
    return ev.rescale(ev.relinearize(ev.mul(low, six_plus)))


def eval_mod(ev: CkksBackend, cts: list[Ciphertext], params: EvalModParams, scale: float) -> list[Ciphertext]:
    """EvalMod of each ciphertext (values ``y`` in ``[-1, 1]``): :func:`reference` per slot,
    :attr:`EvalModParams.depth` levels lower. The series comes out at ``scale``; each further
    product squares the scale and divides it by its level's prime (pick ``scale`` near the primes)."""
    out = []
    for ct in cts:
        c = ChebyshevEvaluator(ev, ct, params.baby).series(params.coefficients, scale)
        for _ in range(params.double_angles):
            c = _double_angle(ev, c)
        out.append(_arcsine(ev, c) if params.arcsine else c)
    return out


def amplification(params: EvalModParams) -> float:
    """The largest factor the double angles multiply an error of the series by (``4^r``)."""
    return math.pow(4.0, params.double_angles)
