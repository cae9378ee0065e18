"""Choosing the scale a constant is encoded at, so that two ciphertexts meet at one scale.

Why: CKKS adds only ciphertexts of one level and one scale (every backend refuses a mismatch
beyond a float's last bit, as SEAL does), but a polynomial evaluation combines terms with
different histories -- ``T_5`` and ``T_3`` went through different products and rescales, so
their scales are different products of primes. A term is brought to the scale another term
has by multiplying it by 1 (or by its coefficient) *encoded at the right scale*: the
constant's scale is a free parameter of ``mul_const`` (the result's scale is the product), so
the algorithm picks it. These helpers pick it in floating point the way the backends compute
scales (``a * b`` for a product, ``a / q`` for a rescale by the float of the prime), trying the
neighbouring floats so the result lands on the wanted float exactly where one does.
"""

from __future__ import annotations

import math
from typing import Callable

__all__ = ["factor_for", "prescale_for"]

#: neighbouring floats tried on each side
_TRIES = 4


def _nearest(start: float, result: Callable[[float], float], want: float) -> float:
    """The float near ``start`` whose ``result`` is closest to ``want`` (exact where possible)."""
    best, best_err = start, abs(result(start) - want)
    lo = hi = start
    for _ in range(_TRIES):
        if best_err == 0.0:
            break
        lo, hi = math.nextafter(lo, 0.0), math.nextafter(hi, math.inf)
        for cand in (lo, hi):
            err = abs(result(cand) - want)
            if err < best_err:
                best, best_err = cand, err
    return best


def factor_for(have: float, want: float) -> float:
    """The scale ``s`` to encode a constant at so that a ciphertext of scale ``have`` times it
    has scale ``want`` (``have * s == want`` in floats where a neighbour allows)."""
    return _nearest(want / have, lambda s: have * s, want)


def prescale_for(want: float, divisor: float) -> float:
    """The scale ``P`` a sum must have so that rescaling it by ``divisor`` (the float of the
    level's prime) gives exactly ``want`` where a neighbour allows (``P / divisor == want``)."""
    return _nearest(want * divisor, lambda p: p / divisor, want)
