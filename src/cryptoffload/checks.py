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
import json
import math
import numbers
import re
from typing import Any, Mapping, NoReturn, Sequence, TypeAlias

from cryptoffload.errors import ConfigError, CryptoffloadError

#: A value JSON can hold. ``Mapping`` and ``Sequence`` (read-only, so covariant): a
#: ``dict[str, float]`` or a ``list[list[int]]`` is one as it is. What results' ``to_dict`` give,
#: and what a JSON reader hands the code that validates it.
JsonValue: TypeAlias = "None | bool | int | float | str | Sequence[JsonValue] | Mapping[str, JsonValue]"
#: A JSON object.
JsonDict: TypeAlias = "dict[str, JsonValue]"


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


class Bound(tuple[float, float]):
    """One kind of number from outside: its ``(floor, ceiling)`` (a pair, so older callers
    unpack it), its ``unit`` ("" for a pure number), whether it is ``integer`` and whether 0
    is admitted besides the range (``zero``). For a float the floor is the smallest non-zero
    value that still means something; for an integer it is the least value admitted.

    Why a class and a table (:data:`BOUNDS`): every number a user types or a file holds has a
    floor and a ceiling in a unit, and the same kind of number (a wait, a rate, a count of
    requests) is bounded the same way wherever it enters; a test walks every option and field
    and finds its bound here."""

    name: str
    unit: str
    integer: bool
    zero: bool

    def __new__(cls, name: str, floor: float, ceiling: float, unit: str = "", *, integer: bool = False,
                zero: bool = False) -> "Bound":
        if not (math.isfinite(floor) and math.isfinite(ceiling) and floor <= ceiling):
            raise ValueError(f"bound {name}: floor {floor} and ceiling {ceiling} must be finite and ordered")
        self = super().__new__(cls, (floor, ceiling))
        self.name, self.unit, self.integer, self.zero = name, unit, integer, zero
        return self

    @property
    def floor(self) -> float:
        return self[0]

    @property
    def ceiling(self) -> float:
        return self[1]

    def check(self, what: str, value: object, *, maximum: float | None = None, allow_zero: bool | None = None,
              error: type[CryptoffloadError] = ConfigError) -> Any:
        """``value`` (a number already) within the bound, as an ``int`` or a ``float``; else
        ``error`` naming ``what``, the range and the unit."""
        high = self.ceiling if maximum is None else min(self.ceiling, maximum)
        zero = self.zero if allow_zero is None else allow_zero
        if self.integer:
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise error(f"{what} must be a whole number {self.text(maximum, zero)}, got {_shown(value)}")
            number = int(value)
            if not (self.floor <= number <= high or (zero and number == 0)):
                raise error(f"{what} must be {self.text(maximum, zero)}, got {_short(number)}")
            return number
        return check_positive(what, value, allow_zero=zero, minimum=self.floor, maximum=high, unit=self.unit,
                              error=error)

    def parse(self, what: str, text: object, *, maximum: float | None = None, allow_zero: bool | None = None,
              error: type[CryptoffloadError] = ConfigError) -> Any:
        """``text`` read by the one grammar (:func:`parse_int` or :func:`parse_float`), then
        checked against the bound; a number given as a number (a default) is only checked."""
        if isinstance(text, str):
            value: object = parse_int(what, text, error=error) if self.integer else parse_float(what, text, error=error)
        else:
            value = text
        return self.check(what, value, maximum=maximum, allow_zero=allow_zero, error=error)

    def text(self, maximum: float | None = None, allow_zero: bool | None = None) -> str:
        """The values admitted, in words: ``between 1 and 10,000,000 requests``."""
        high = self.ceiling if maximum is None else min(self.ceiling, maximum)
        zero = self.zero if allow_zero is None else allow_zero
        unit = f" {self.unit}" if self.unit else ""
        if self.integer:
            span = f"between {int(self.floor):,} and {int(high):,}{unit}"
            return f"0 or {span}" if zero and self.floor > 0 else span
        return _range_text(zero, self.floor, high, self.unit)


#: Every named bound, by name (see :class:`Bound`): the one table of floors and ceilings.
BOUNDS: dict[str, Bound] = {}


def _bound(name: str, floor: float, ceiling: float, unit: str = "", *, integer: bool = False,
           zero: bool = False) -> Bound:
    if name in BOUNDS:
        raise ValueError(f"bound {name!r} defined twice")
    BOUNDS[name] = Bound(name, floor, ceiling, unit, integer=integer, zero=zero)
    return BOUNDS[name]


# A floor is the smallest non-zero value that still means something (below it a wait, a rate or
# a size rounds to nothing: 1e-300 s is no timeout, a trace at 1e-300 requests/s spans 1e300 s),
# a ceiling the largest a run can use before it overflows, hangs or exhausts memory. An option
# lowers a ceiling (``maximum=``) where it needs less; none raises one.
WAIT_S = _bound("wait_s", 1e-3, 86_400.0, "s")  # timeouts, retries, pauses: a millisecond to a day
MEASURE_S = _bound("measure_s", 1e-3, 3600.0, "s")  # time spent measuring one case: up to an hour
DURATION_MS = _bound("duration_ms", 1e-6, 1e6, "ms")  # a modelled cost in ms: a nanosecond to 1000 s
RATE_PER_S = _bound("rate_per_s", 1e-3, 1e9, "requests/s")  # requests/s of a trace or a sweep
SIZE_MB = _bound("size_mb", 1e-6, 1e6, "MB")  # a window or a memory in MB/GB: a byte to a terabyte in MB
SIZE_GB = _bound("size_gb", 1e-6, 1e6, "GB")  # a device memory in GB (the same range, its own unit)
SIZE_TB = _bound("size_tb", 1e-6, 1e3, "TB")  # a storage size in TB: a megabyte to a petabyte
BOUND = _bound("data_bound", 1e-6, 1e9)  # a declared bound on |x| or |y| of the ridge data (its square must stay finite)
LAMBDA = _bound("lambda", 1e-9, 1e12, zero=True)  # a ridge regularisation, 0 or in this range
SEED = _bound("seed", 0, 2**63 - 1, "", integer=True)  # NumPy refuses negative seeds; JSON readers want int64
PORT = _bound("port", 1, 65535, "", integer=True, zero=True)  # 0: any free port
COUNT = _bound("count", 1, 1e9, "", integer=True)  # a count of things with no tighter bound of its own
REQUESTS = _bound("requests", 2, 100_000_000, "requests", integer=True)  # a generated trace (two for a rate)
LOG_REQUESTS = _bound("log_requests", 1, 10_000_000, "requests", integer=True)  # a log read: ~1 GB at the peak
REQUEST_BYTES = _bound("request_bytes", 1, 2**40, "bytes", integer=True)  # one request: a byte to a TiB
TRACE_TIME_S = _bound("trace_time_s", 0, 1e11, "s")  # |a request's time|: 3,000 years of seconds
WORKERS = _bound("workers", 1, 1024, "workers", integer=True)  # processes or threads started on this machine
THREADS = _bound("threads", 1, 4096, "threads", integer=True)  # threads of a modelled server
SEEDS = _bound("seeds", 1, 1000, "seeds", integer=True)  # seeds a study's distributions are drawn over
ENCRYPTIONS = _bound("encryptions", 1, 10_000_000, "encryptions", integer=True)  # jobs a run holds in memory
IN_FLIGHT = _bound("in_flight", 1, 1_000_000, "encryptions", integer=True)  # encryptions in flight at once
FETCHES = _bound("fetches", 2, 100_000, "fetches", integer=True)  # timed fetches per case (a spread needs 2)
QUERIES = _bound("queries", 1, 1_000_000, "inferences", integer=True)
CLIENT_RATE = _bound("client_rate", 1e-9, 1e6, "requests/s")  # one client's requests: one in 30 years to a million/s
MEMORY_MIB = _bound("memory_mib", 1, 2**30, "MiB", integer=True)  # a memory reservation: a MiB to a PiB
DEVICES = _bound("devices", 1, 4096, "devices", integer=True)  # devices of a simulated platform
REPEATS = _bound("repeats", 1, 10_000, "repeats", integer=True)  # repetitions of one measurement
KEY_BITS = _bound("key_bits", 512, 8192, "bits", integer=True)  # a Paillier modulus (crypto.paillier: 512 for a study)
CONNECTIONS = _bound("connections", 1, 1_000_000, "connections", integer=True, zero=True)
RECORDS = _bound("records", 1, 10**9, "records", integer=True)  # ridge records (a study holds at most 10^8)
PROVIDERS = _bound("providers", 1, 1_000_000, "providers", integer=True)  # ridge data providers
FEATURES = _bound("features", 1, 64, "features", integer=True)  # ridge features per record
FRACTION_BITS = _bound("frac_bits", 1, 64, "bits", integer=True)  # fixed-point fractional bits
STAT_BITS = _bound("stat_bits", 40, 256, "bits", integer=True)  # statistical hiding
IMAGES = _bound("images", 1, 1_000_000, "images", integer=True)  # images classified in one run
IMAGE_INDEX = _bound("image_index", 0, 1_000_000, "", integer=True)  # a held-out image's index
SESSIONS = _bound("sessions", 1, 1024, "sessions", integer=True)  # sessions a server holds
MEMORY_BYTES = _bound("memory_bytes", 1, 2**50, "bytes", integer=True)  # a memory budget: a byte to a PiB
EPOCHS = _bound("epochs", 1, 10_000, "epochs", integer=True)
GPU_INDEX = _bound("gpu_index", 0, 1023, "", integer=True)  # a CUDA device index
CIPHERS = _bound("ciphers", 1, 127, "ciphers", integer=True)  # a trace's cipher indices are int8
BATCH = _bound("batch", 1, 10_000_000, "records", integer=True)  # records per upload or per chunk
CLIENTS = _bound("clients", 1, 10**9, "clients", integer=True)
DIAGONALS = _bound("diagonals", 1, 2**20, "diagonals", integer=True)  # a BSGS matrix's diagonals
OBJECT_BYTES = _bound("object_bytes", 1, 2**40, "bytes", integer=True)  # one ciphertext, key or plaintext
LEVEL = _bound("level", 0, 1000, "", integer=True)  # a CKKS level (the parameters then bound it)
ROTATION_STEP = _bound("rotation_step", 0, 2**20, "slots", integer=True)  # |a rotation's step|
OP_S = _bound("op_s", 1e-12, 1e6, "s", zero=True)  # one operation's measured time (as a profile's duration)
RING_DEGREE = _bound("ring_degree", 1 << 10, 1 << 17, "", integer=True)  # a CKKS ring degree N (2^10 .. 2^17)
SLOTS = _bound("slots", 1, 1 << 16, "slots", integer=True, zero=True)  # CKKS slots (0: full packing)
LINK_GBPS = _bound("link_gbps", 1e-3, 1e5, "Gb/s")  # a modelled link: a megabit to 100 terabits per second
LINK_LATENCY_US = _bound("link_latency_us", 1e-6, 1e6, "us", zero=True)  # a modelled link's latency: 0 to a second
VALIDITY_DAYS = _bound("validity_days", 1, 3650, "days", integer=True)  # a certificate's validity: a day to ten years


def check_bounded(what: str, value: object, bounds: tuple[float, float], unit: str = "", *,
                  allow_zero: bool = False, maximum: float | None = None,
                  error: type[CryptoffloadError] = ConfigError) -> float:
    """:func:`check_positive` with a ``(floor, ceiling)`` pair from the table above (``maximum``
    lowers the ceiling for an option that needs less); a :class:`Bound` names its own unit."""
    low, high = bounds
    if not unit and isinstance(bounds, Bound):
        unit = bounds.unit
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


def shown(text: object) -> str:
    """``repr(text)`` cut to about 40 characters (a value quoted in a message)."""
    return _shown(text)


def _shown(text: object) -> str:
    shown = repr(text)
    return shown if len(shown) <= 42 else f"{shown[:40]}...({len(str(text))} characters)"


def is_number(text: str) -> bool:
    """Whether ``text`` reads as a number under :data:`FLOAT_RE` (how the CSV readers tell a
    header row from data)."""
    return _numeral(text, FLOAT_RE) is not None


def _refuse_spaces_between(what: str, items: list[str]) -> None:
    """A list item with a space inside (``--devices "1 2 4"``) is several values someone
    separated with spaces: refused with the list written as it should be."""
    spaced = next((v for v in items if len(v.split()) > 1), None)
    if spaced is not None:
        raise ConfigError(f"{what}: {spaced.strip()!r} holds a space; separate the values with commas: "
                          f"{','.join(spaced.split())}")


def parse_floats(what: str, text: str) -> list[float]:
    """Comma-separated numbers (``"100,1e3"``), at least one; empty items are skipped."""
    items = [x for x in text.split(",") if x.strip()]
    if not items:
        raise ConfigError(f"{what} must be comma-separated numbers, got '{text}' (none)")
    _refuse_spaces_between(what, items)
    if any(_numeral(x, FLOAT_RE) is None for x in items):
        raise ConfigError(f"{what} must be comma-separated numbers, got '{text}'")
    return [parse_float(what, x) for x in items]


def parse_ints(what: str, text: str) -> list[int]:
    """Comma-separated positive integers (``"1,2,4"``, spaces after the commas allowed), at
    least one. Spaces *inside* an item are refused with the fix: ``"1 2 4"`` was once read as
    124 (issue 37)."""
    items = [v.strip() for v in text.split(",") if v.strip()]
    _refuse_spaces_between(what, items)
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


# -- JSON from outside ---------------------------------------------------------------------------

#: Decimal digits of one JSON integer: Python's own default limit for ``int(str)`` (a ciphertext
#: of a 4,096-bit Paillier key, the largest the protocols send, is 2,467 digits), applied by the
#: parser itself so that no process-wide setting changes what is accepted.
MAX_JSON_INT_DIGITS = 4300


class JsonRefused(ValueError):
    """Text that is not the JSON a reader of outside input accepts; ``str()`` is the reason."""


def _json_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_JSON_INT_DIGITS:
        raise ValueError(f"an integer has {digits:,} digits (at most {MAX_JSON_INT_DIGITS} accepted)")
    if not INT_RE.fullmatch(text):  # the C scanner reads ASCII digits only; the pure-Python one \d
        raise ValueError(f"the integer {_shown(text)} is not ASCII digits")
    return int(text)


def _json_float(text: str) -> float:
    if len(text) > MAX_NUMERAL_CHARS or not FLOAT_RE.fullmatch(text):
        raise ValueError(f"the number {_shown(text)} is not a decimal number")
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is out of range")
    return value


def _json_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON (only finite numbers are)")


def _json_object(pairs: list[tuple[str, JsonValue]]) -> JsonDict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"the key {key[:60]!r} appears twice in one object")
            seen.add(key)
    return obj


def strict_json(data: bytes | bytearray | memoryview | str) -> Any:
    """``data`` (UTF-8 JSON) decoded as the standard writes it, or :class:`JsonRefused` with the
    reason: Python's ``json`` also reads ``NaN``, ``Infinity``, integers of any length (in
    quadratic time), numbers that overflow to an infinity and a key given twice (the last one
    wins, so two readers can see two different objects). Each is refused here, as is invalid
    UTF-8 and nesting too deep for the parser."""
    try:
        text = data if isinstance(data, str) else bytes(data).decode("utf-8")
        return json.loads(text, parse_int=_json_int, parse_float=_json_float, parse_constant=_json_constant,
                          object_pairs_hook=_json_object)
    except UnicodeDecodeError as exc:
        reason = f"it is not UTF-8 (byte {exc.start})"
    except RecursionError:
        reason = "it nests arrays or objects too deeply"
    except json.JSONDecodeError as exc:
        reason = f"{exc.msg} at character {exc.pos}; truncated or garbled"
    except ValueError as exc:
        reason = " ".join(str(exc).split())[:200]
    raise JsonRefused(reason)


def load_json(what: str, data: bytes | str, *, error: type[CryptoffloadError] = ConfigError) -> Any:
    """:func:`strict_json`, its refusal raised as ``error`` naming ``what`` (a file, a body)."""
    try:
        return strict_json(data)
    except JsonRefused as exc:
        raise error(f"{what} is not acceptable JSON: {exc}") from None
