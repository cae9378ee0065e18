"""Validators for numbers that come from outside (options, profiles, configs, messages).

Why one module: a count, a size or a duration is checked the same way everywhere -- ``True``
is not the integer 1, NaN and infinities are not sizes, and the message names what was wrong
and what was given -- so each layer calls these instead of keeping its own copy. Each returns
the value in its plain Python type (arguments: what the value is, as the message names it,
then the value), or raises ``error`` (a
:class:`~cryptoffload.errors.ConfigError` unless a caller needs its own subclass).
"""

from __future__ import annotations

import ipaddress
import math
import numbers
import re

from cryptoffload.errors import ConfigError, CryptoffloadError


def check_int(what: str, value: object, *, minimum: int = 1, maximum: int | None = None,
              error: type[CryptoffloadError] = ConfigError) -> int:
    """``value`` as an ``int`` >= ``minimum`` (and <= ``maximum`` when given: every size a user
    types needs a ceiling, or a typo hangs the machine); ``bool``, floats (even 3.0) and strings
    are refused. NumPy integers are accepted."""
    number = int(value) if isinstance(value, numbers.Integral) and not isinstance(value, bool) else None
    if number is None or number < minimum:
        if minimum == 1:
            raise error(f"{what} must be a positive integer, got {value!r}")
        if minimum == 0:
            raise error(f"{what} must be a non-negative integer, got {value!r}")
        raise error(f"{what} must be an integer >= {minimum}, got {value!r}")
    if maximum is not None and number > maximum:
        raise error(f"{what} must be at most {maximum:,}, got {_short(value)}")
    return number


def _short(value: object) -> str:
    text = f"{value:,}" if isinstance(value, numbers.Integral) else repr(value)
    return text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"


def check_positive(what: str, value: object, *, allow_zero: bool = False, minimum: float | None = None,
                   maximum: float | None = None, unit: str = "",
                   error: type[CryptoffloadError] = ConfigError) -> float:
    """``value`` as a finite ``float`` > 0 (or 0 with ``allow_zero``), at least ``minimum`` (the
    floor: the smallest non-zero value that means something) and at most ``maximum`` (the
    ceiling) when given; ``unit`` is named in the message (``"s"``, ``"requests/s"``). A zero or
    NaN duration would silently break the models (NaN compares false with everything, so it
    never raises on its own), and 1e308 or 1e-300 pass every sign check yet overflow or round
    to nothing downstream: a value a user types has both bounds. ``bool`` and strings are
    refused; ``-0.0`` comes back as ``0.0``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise error(f"{what} must be a number, got {value!r}")
    v = float(value)
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        if minimum is not None or maximum is not None:
            raise error(f"{what} must be {_range_text(allow_zero, minimum, maximum, unit)}, got {value!r}")
        kind = "non-negative" if allow_zero else "positive"
        raise error(f"{what} must be a {kind} finite number, got {value!r}")
    if v != 0 and ((minimum is not None and v < minimum) or (maximum is not None and v > maximum)):
        raise error(f"{what} must be {_range_text(allow_zero, minimum, maximum, unit)}, got {value!r}")
    return v + 0.0


def _range_text(allow_zero: bool, minimum: float | None, maximum: float | None, unit: str) -> str:
    """``"0 or between 0.001 and 600 s"``: the values a bounded number admits, in words."""
    unit = f" {unit}" if unit else ""
    if minimum is None:
        text = f"{'non-negative' if allow_zero else 'positive'} and at most {maximum:g}{unit}"
        return text
    if maximum is None:
        text = f"at least {minimum:g}{unit}"
    else:
        text = f"between {minimum:g} and {maximum:g}{unit}"
    return f"0 or {text}" if allow_zero else text


def check_non_negative(what: str, value: object, *, minimum: float | None = None, maximum: float | None = None,
                       unit: str = "", error: type[CryptoffloadError] = ConfigError) -> float:
    """Like :func:`check_positive` but allowing zero (an idealised, free operation)."""
    return check_positive(what, value, allow_zero=True, minimum=minimum, maximum=maximum, unit=unit, error=error)


# Floors and ceilings of the numbers typed on the command line, per unit kind: (floor, ceiling).
# A floor is the smallest non-zero value that still means something (below it a wait, a rate or
# a size rounds to nothing: 1e-300 s is no timeout, a trace at 1e-300 requests/s spans 1e300 s),
# a ceiling the largest a run can use before it overflows, hangs or exhausts memory. Options keep
# their own tighter ceiling where they have one; every float option has both.
WAIT_S = (1e-3, 86_400.0)  # timeouts, retries, pauses: a millisecond to a day
DURATION_MS = (1e-6, 1e6)  # a modelled cost in ms: a nanosecond to 1000 s
RATE_PER_S = (1e-3, 1e9)  # requests/s of a trace or a sweep
SIZE_MB = (1e-6, 1e6)  # a window or a memory in MB/GB: a byte to a terabyte in MB
BOUND = (1e-6, 1e9)  # a declared bound on |x| or |y| of the ridge data (its square must stay finite)
LAMBDA = (1e-9, 1e12)  # a ridge regularisation, 0 or in this range


def check_bounded(what: str, value: object, bounds: tuple[float, float], unit: str = "", *,
                  allow_zero: bool = False, maximum: float | None = None,
                  error: type[CryptoffloadError] = ConfigError) -> float:
    """:func:`check_positive` with a ``(floor, ceiling)`` pair from the table above (``maximum``
    lowers the ceiling for an option that needs less)."""
    low, high = bounds
    return check_positive(what, value, allow_zero=allow_zero, minimum=low,
                          maximum=high if maximum is None else min(high, maximum), unit=unit, error=error)


MAX_SEED = 2**63 - 1


def check_seed(what: str, value: object) -> int:
    """A simulation seed: 0 .. 2^63 - 1 (NumPy refuses negative seeds; results store the seed
    as a JSON number, which other tools read as a 64-bit integer)."""
    return check_int(what, value, minimum=0, maximum=MAX_SEED)


def check_port(what: str, value: object, *, allow_zero: bool = True) -> int:
    """A TCP port: 1..65535, or 0 (any free port) with ``allow_zero``."""
    return check_int(what, value, minimum=0 if allow_zero else 1, maximum=65535)


_LABEL = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")


def check_host(what: str, host: object) -> str:
    """An IP address or a host name as RFC 1123 writes it (checked, not resolved: a name that
    does not resolve is the server's or the client's error to report, with its reason)."""
    if not isinstance(host, str) or not host:
        raise ConfigError(f"{what} must be a host name or an IP address, got {host!r}")
    name = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        ipaddress.ip_address(name)
        return name
    except ValueError:
        pass
    labels = name.rstrip(".").split(".")
    if (len(name) > 253 or not all(_LABEL.match(label) for label in labels)
            or all(label.isdigit() for label in labels)):
        raise ConfigError(f"{what} must be a host name or an IP address, got {host!r}")
    return name


def check_url(what: str, url: object, *, schemes: tuple[str, ...] = ("http", "https")) -> str:
    """A URL with one of ``schemes``, a valid host and a port in range (as the ridge parties
    and the HE-CNN client take them)."""
    from urllib.parse import urlsplit

    if not isinstance(url, str) or not url.strip():
        raise ConfigError(f"{what} must be a URL such as http://127.0.0.1:8000, got {url!r}")
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise ConfigError(f"{what}: {url!r} is not a valid URL ({exc})") from None
    if parts.scheme not in schemes or not parts.hostname:
        raise ConfigError(f"{what} must be a URL starting with {' or '.join(s + '://' for s in schemes)} "
                          f"and naming a host, got {url!r}")
    check_host(what, parts.hostname)
    if port is not None:
        check_port(what, port, allow_zero=False)
    return url.strip()


#: The one grammar of an integer a user types or a file holds: ASCII digits with an optional sign,
#: surrounding blanks allowed. Python's ``int()`` also takes ``1_000``, Arabic-Indic or full-width
#: digits and other Unicode forms -- a value two readers would parse differently is refused.
INT_RE = re.compile(r"[ \t]*[+-]?[0-9]+[ \t]*")
#: The one grammar of a decimal number: an integer part and/or a fraction, an optional exponent;
#: no ``nan``, ``inf``, underscores, hex or Unicode digits.
FLOAT_RE = re.compile(r"[ \t]*[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[ \t]*")
#: Longest numeral looked at: a 4096-bit integer is 1,234 digits; anything longer is refused
#: before Python's (quadratic) conversion runs.
MAX_NUMERAL_CHARS = 4096


def _numeral(text: object, pattern: re.Pattern[str]) -> str | None:
    if not isinstance(text, str) or len(text) > MAX_NUMERAL_CHARS or not pattern.fullmatch(text):
        return None
    return text.strip()


def parse_int(what: str, text: object, *, minimum: int | None = None, maximum: int | None = None,
              error: type[CryptoffloadError] = ConfigError) -> int:
    """``text`` as an integer under :data:`INT_RE` (and within ``minimum``..``maximum`` when
    given); anything else raises ``error`` naming ``what`` and showing what was given."""
    numeral = _numeral(text, INT_RE)
    if numeral is None:
        raise error(f"{what} must be an integer (ASCII digits, optional sign), got {_shown(text)}")
    value = int(numeral)
    if minimum is not None and value < minimum:
        raise error(f"{what} must be at least {minimum:,}, got {_short(value)}")
    if maximum is not None and value > maximum:
        raise error(f"{what} must be at most {maximum:,}, got {_short(value)}")
    return value


def parse_float(what: str, text: object, *, error: type[CryptoffloadError] = ConfigError) -> float:
    """``text`` as a finite float under :data:`FLOAT_RE` (a value too large for a float is refused)."""
    numeral = _numeral(text, FLOAT_RE)
    value = float(numeral) if numeral is not None else math.nan
    if not math.isfinite(value):
        raise error(f"{what} must be a finite decimal number, got {_shown(text)}")
    return value


def _shown(text: object) -> str:
    shown = repr(text)
    return shown if len(shown) <= 42 else f"{shown[:40]}...({len(str(text))} characters)"


def is_number(text: str) -> bool:
    """Whether ``text`` reads as a number under :data:`FLOAT_RE` (how the CSV readers tell a
    header row from data)."""
    return _numeral(text, FLOAT_RE) is not None


def parse_floats(what: str, text: str) -> list[float]:
    """Comma-separated numbers (``"100,1e3"``), at least one; empty items are skipped."""
    items = [x for x in text.split(",") if x.strip()]
    if not items:
        raise ConfigError(f"{what} must be comma-separated numbers, got '{text}' (none)")
    if any(_numeral(x, FLOAT_RE) is None for x in items):
        raise ConfigError(f"{what} must be comma-separated numbers, got '{text}'")
    return [parse_float(what, x) for x in items]


def parse_ints(what: str, text: str) -> list[int]:
    """Comma-separated positive integers (``"1,2,4"``), at least one."""
    items = [v for v in text.replace(" ", "").split(",") if v]
    vals = [int(v) for v in items if _numeral(v, INT_RE) is not None]
    if not items or len(vals) != len(items) or any(v < 1 for v in vals):
        raise ConfigError(f"{what} must be a comma-separated list of positive integers, got {text!r}")
    return vals


def split_list(what: str, text: str) -> list[str]:
    """Comma-separated names, stripped, at least one."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise ConfigError(f"{what}: give at least one value")
    return items
