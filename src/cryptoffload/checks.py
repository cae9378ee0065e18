"""Validators for numbers that come from outside (options, profiles, configs, messages).

Why one module: a count, a size or a duration is checked the same way everywhere -- ``True``
is not the integer 1, NaN and infinities are not sizes, and the message names what was wrong
and what was given -- so each layer calls these instead of keeping its own copy. Each returns
the value in its plain Python type (arguments: what the value is, as the message names it,
then the value), or raises ``error`` (a
:class:`~cryptoffload.errors.ConfigError` unless a caller needs its own subclass).
"""

from __future__ import annotations

import math
import numbers

from cryptoffload.errors import ConfigError, CryptoffloadError


def check_int(what: str, value: object, *, minimum: int = 1,
              error: type[CryptoffloadError] = ConfigError) -> int:
    """``value`` as an ``int`` >= ``minimum``; ``bool``, floats (even 3.0) and strings are refused.
    NumPy integers are accepted."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        if minimum == 1:
            raise error(f"{what} must be a positive integer, got {value!r}")
        if minimum == 0:
            raise error(f"{what} must be a non-negative integer, got {value!r}")
        raise error(f"{what} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_positive(what: str, value: object, *, allow_zero: bool = False,
                   error: type[CryptoffloadError] = ConfigError) -> float:
    """``value`` as a finite ``float`` > 0 (>= 0 with ``allow_zero``). A zero or NaN duration
    would silently break the models (NaN compares false with everything, so it never raises
    on its own); ``bool`` and strings are refused."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise error(f"{what} must be a number, got {value!r}")
    v = float(value)
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        kind = "non-negative" if allow_zero else "positive"
        raise error(f"{what} must be a {kind} finite number, got {value!r}")
    return v


def check_non_negative(what: str, value: object, *, error: type[CryptoffloadError] = ConfigError) -> float:
    """Like :func:`check_positive` but allowing zero (an idealised, free operation)."""
    return check_positive(what, value, allow_zero=True, error=error)


def parse_floats(what: str, text: str) -> list[float]:
    """Comma-separated numbers (``"100,1e3"``); empty items are skipped."""
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ConfigError(f"{what} must be comma-separated numbers, got '{text}'") from None


def parse_ints(what: str, text: str) -> list[int]:
    """Comma-separated positive integers (``"1,2,4"``), at least one."""
    try:
        vals = [int(v) for v in text.replace(" ", "").split(",") if v]
    except ValueError:
        raise ConfigError(f"{what} must be a comma-separated list of positive integers, got {text!r}") from None
    if not vals or any(v < 1 for v in vals):
        raise ConfigError(f"{what} must be a comma-separated list of positive integers, got {text!r}")
    return vals


def split_list(what: str, text: str) -> list[str]:
    """Comma-separated names, stripped, at least one."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise ConfigError(f"{what}: give at least one value")
    return items
