"""Request traces for an encrypting web server: a synthetic generator and a log loader.

A :class:`Trace` is a stream of requests ``(time, client, cipher, size)``: the server receives
a request from ``client`` at ``time`` and must encrypt ``size`` bytes with cipher ``cipher``.

Synthetic traces (seed 002)
---------------------------
:func:`generate_trace` follows section 4 of the source paper (a month of the web server log of
the University of Tsukuba's media centre, December 2003), which fitted three inverse CDFs to the
log (``u`` uniform)::

    run length      Fa^-1(u) = -0.72549  / (u - 0.976927)   consecutive requests of one client
    gap             Fb^-1(u) = -0.475263 / (u - 0.995667)   seconds between two requests
    return time     Fc^-1(u) = -0.444219 / (u - 0.995429)   seconds until the same client is back

and says that file sizes are roughly exponential with a mean of 24 KB, and that a client's id
modulo 10 picks its cipher. The paper leaves several things open; our choices:

* **The pole.** Each fitted ``F^-1(u) = a / (c - u)`` is a Pareto law with shape 1 and minimum
  ``a / c``; it reaches infinity at ``u = c < 1`` and is negative above, i.e. the fitted CDF
  stops short of 1. The paper does not say how it handled this. We *renormalise*: ``u`` is
  drawn uniform in ``[0, c)`` (so the CDF becomes ``F(x) = 1 - a / (c x)`` for ``x >= a / c``),
  and the value is then *capped* (gaps and return times at ``max_gap`` seconds, default one
  hour; run lengths at ``max_run`` requests, default 1000). The cap keeps a month-long trace
  from containing a single gap of weeks; without it the mean of a shape-1 Pareto law is
  infinite. :func:`sample_inverse_cdf` is the one place this is done.
* **Run length** ``L = max(1, floor(v + 0.5))`` of a draw ``v`` from Fa (``v >= 0.743``).
* **Arrival times.** The first request is at ``t = 0``; ``n - 1`` gaps from Fb are summed.
* **Clients.** We walk over the arrivals run by run. At the start of a run at position ``p``
  (time ``t_p``), if some client is *due back* (its return time ``<= t_p``), the run belongs
  to the client that has been due longest (a heap of ``(return_time, client)``); otherwise it
  is a new client with a random id, uniform in ``[0, 2**31)`` and unique. The run covers
  positions ``p .. p + L - 1`` (cut at ``n``); when it ends at ``t_end`` the client is pushed
  back with return time ``t_end + Fc``. One refinement: the client of the run that has just
  ended is never given the next run (if it is the longest-due, the next due client or a new
  one takes the run, and it waits in the heap). Fa counts *consecutive* requests of one client,
  so two adjacent runs of one client would be a single longer run; with this rule the maximal
  same-client runs of the trace are exactly the drawn run lengths.
* **Cipher** = client id mod ``n_ciphers`` (the paper's "client id -> cipher, id mod 10").
* **Sizes** are exponential with mean ``mean_size`` bytes, rounded to integers, minimum 1.

Consequences worth knowing:

* Times are in *log time* (seconds of the original log; the mean gap is about 4.7 s with the
  default cap, so 610,000 requests span about a month). :meth:`Trace.rescaled` multiplies the
  times to reach a target rate. Client assignment compares log times only with log times, so
  ``generate_trace(...).rescaled(rate)`` is the *same request sequence* at every rate: the
  study sweeps rates over one trace, as the paper does.
* **Without leaving (``max_wait=inf``) the client population is tiny.** Returning clients take precedence and never leave, and
  return times (median 0.9 s) are short compared with the time between runs (a run starts
  every ~29 s on average), so some client is almost always due and a new client appears only
  when every known client is away. 610,000 requests end up shared by 7-9 clients (seed 1: 8,
  each with ~13 % of the requests) which take turns; the cipher mix covers at most that many
  ciphers and is uneven. The paper's Table 7 (one cipher at 0.246, the other nine at
  0.07-0.10) is a mix of the same kind with somewhat more clients.
* **Realised return times are much longer than Fc.** A due client waits for a run start and for
  every client due before it: in the trace of seed 1 the median time from the end of a
  client's run to the start of its next one is ~49 s, not Fc's 0.89 s. Gaps and run lengths,
  in contrast, are exactly as drawn.
* ``max_wait`` (not in the paper; default 60 s of log time) lets a client that has
  waited that many seconds past its return time leave for good; ``math.inf`` is the model
  above without leaving. We default to 60 s because without leaving the tiny population makes
  the history trace (another seed) share no clients, often no ciphers, with the evaluated one,
  which no real server log does; with 60 s the mix is near-uniform like the paper's Table 7. Finite values give many more
  clients and realised return times closer to Fc (seed 1, 610,000 requests: ``max_wait=60``
  -> ~12,000 clients, median return 7.5 s, near-uniform cipher mix).
* Each quantity comes from its own random stream (``default_rng(seed).spawn``), so a shorter
  trace of the same seed is a prefix of a longer one.

Loading logs
------------
:func:`load_trace` reads a user's own server log: CSV (``time, client, bytes[, cipher]``) or the
Common/Combined Log Format; see its docstring. :func:`save_trace_csv` writes the CSV format.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import heapq
import ipaddress
import math
import os
import re
import tempfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np

from cryptoffload.errors import ConfigError, TraceError

__all__ = [
    "Trace",
    "InverseCdf",
    "RUN_LENGTH",
    "GAP",
    "RETURN_TIME",
    "generate_trace",
    "sample_inverse_cdf",
    "load_trace",
    "save_trace_csv",
    "client_id",
]

#: Most bad-line examples a loaded trace keeps.
MAX_BAD_EXAMPLES = 5
#: Largest number of ciphers a trace can name (``cipher`` is int8).
MAX_CIPHERS = 127
_ID_SPACE = 2**31
_ID_CHUNK = 1024


# --------------------------------------------------------------------------------------------
# The trace
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Trace:
    """A request stream, sorted by time, starting at 0.

    Attributes:
        time: float64 seconds, non-decreasing, ``time[0] == 0.0`` (when not empty).
        client: int64 client ids.
        cipher: int8 cipher indices in ``0 .. n_ciphers - 1``.
        size: int64 request sizes in bytes (``>= 0``).
        source: where the trace came from (a path, or a description of the generator call).
        n_ciphers: number of ciphers the indices refer to.
        bad_lines: number of lines the loader rejected (0 for generated traces).
        bad_examples: up to five of them, as ``"line N: reason"``.

    The arrays are copied on construction and made read-only; the object is immutable.
    Equality is identity (compare the arrays to compare contents).
    """

    time: np.ndarray
    client: np.ndarray
    cipher: np.ndarray
    size: np.ndarray
    source: str
    n_ciphers: int = 10
    bad_lines: int = 0
    bad_examples: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not isinstance(self.n_ciphers, (int, np.integer)) or not (
            1 <= int(self.n_ciphers) <= MAX_CIPHERS
        ):
            raise ConfigError(f"n_ciphers must be an integer in 1..{MAX_CIPHERS}, got {self.n_ciphers!r}")
        object.__setattr__(self, "n_ciphers", int(self.n_ciphers))
        arrays = {}
        for name, dtype in (("time", np.float64), ("client", np.int64), ("cipher", np.int8), ("size", np.int64)):
            raw = np.asarray(getattr(self, name))
            if raw.ndim != 1:
                raise TraceError(f"trace {name} must be one-dimensional, got shape {raw.shape}")
            if name != "time" and raw.size and not np.issubdtype(raw.dtype, np.integer):
                raise TraceError(f"trace {name} must hold integers, got dtype {raw.dtype}")
            if name == "cipher" and raw.size and (raw.min() < 0 or raw.max() >= self.n_ciphers):
                raise TraceError(
                    f"trace cipher indices must lie in 0..{self.n_ciphers - 1}, "
                    f"got {int(raw.min())}..{int(raw.max())}"
                )
            arr = np.array(raw, dtype=dtype, copy=True)
            arr.flags.writeable = False
            arrays[name] = arr
        n = arrays["time"].size
        if any(a.size != n for a in arrays.values()):
            sizes = {k: v.size for k, v in arrays.items()}
            raise TraceError(f"trace arrays differ in length: {sizes}")
        t = arrays["time"]
        if n:
            if not np.all(np.isfinite(t)):
                raise TraceError("trace times must be finite")
            if t[0] != 0.0:
                raise TraceError(f"trace must start at time 0.0, starts at {t[0]!r}")
            if n > 1 and np.any(np.diff(t) < 0):
                raise TraceError("trace times must be non-decreasing")
            if arrays["size"].min() < 0:
                raise TraceError("trace sizes must be >= 0")
        for name, arr in arrays.items():
            object.__setattr__(self, name, arr)
        object.__setattr__(self, "bad_lines", int(self.bad_lines))
        object.__setattr__(self, "bad_examples", list(self.bad_examples))

    def __len__(self) -> int:
        return int(self.time.size)

    def __repr__(self) -> str:
        return (
            f"Trace(n={len(self)}, span={self.span:.6g} s, offered_rate={self.offered_rate:.6g}/s, "
            f"n_ciphers={self.n_ciphers}, bad_lines={self.bad_lines}, source={self.source!r})"
        )

    @property
    def span(self) -> float:
        """Time of the last request (the first is at 0); 0.0 for an empty trace."""
        return float(self.time[-1]) if len(self) else 0.0

    @property
    def offered_rate(self) -> float:
        """Mean arrival rate ``(n - 1) / span`` in requests per second.

        0.0 for fewer than two requests; ``inf`` if two or more requests all arrive at once.
        """
        n = len(self)
        if n < 2:
            return 0.0
        span = self.span
        return math.inf if span == 0.0 else (n - 1) / span

    def rescaled(self, rate: float) -> Trace:
        """The same requests with times multiplied so that ``offered_rate == rate``.

        Order, clients, ciphers and sizes are unchanged. A trace of fewer than two requests has
        no rate and is returned unchanged (as a copy).

        Raises:
            ConfigError: ``rate`` is not a finite number > 0, or the rescaled span overflows.
            TraceError: the trace has two or more requests but they all arrive at time 0.
        """
        try:
            rate_f = float(rate)
        except (TypeError, ValueError):
            raise ConfigError(f"rate must be a number of requests per second, got {rate!r}") from None
        if not math.isfinite(rate_f) or rate_f <= 0.0:
            raise ConfigError(f"rate must be finite and > 0 requests per second, got {rate!r}")
        n = len(self)
        if n < 2:
            return self._replace(time=self.time)
        span = self.span
        if span == 0.0:
            raise TraceError(f"cannot rescale {self.source}: all {n} requests arrive at the same time")
        new_span = (n - 1) / rate_f
        if not math.isfinite(new_span):
            raise ConfigError(f"rate {rate!r} is too small: the trace would last {new_span} s")
        # Divide first so that the last request lands on new_span exactly.
        time = (self.time / span) * new_span
        return self._replace(time=time, source=f"{self.source} @ {rate_f:g} req/s")

    def head(self, n: int) -> Trace:
        """The first ``n`` requests (all of them if ``n >= len(self)``)."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ConfigError(f"head() needs an integer n >= 0, got {n!r}")
        n = int(n)
        return self._replace(
            time=self.time[:n], client=self.client[:n], cipher=self.cipher[:n], size=self.size[:n]
        )

    def cipher_mix(self, weight: str = "count") -> np.ndarray:
        """Share of each cipher, an array of length ``n_ciphers`` summing to 1.

        Args:
            weight: ``"count"`` (share of requests) or ``"bytes"`` (share of requested bytes).

        An empty trace (or one of zero bytes, for ``"bytes"``) gives all zeros.
        """
        if weight == "count":
            totals = np.bincount(self.cipher, minlength=self.n_ciphers).astype(np.float64)
        elif weight == "bytes":
            totals = np.bincount(self.cipher, weights=self.size.astype(np.float64), minlength=self.n_ciphers)
        else:
            raise ConfigError(f"cipher_mix weight must be 'count' or 'bytes', got {weight!r}")
        total = totals.sum()
        return totals / total if total > 0 else np.zeros(self.n_ciphers)

    def _replace(self, **changes: Any) -> Trace:
        fields = dict(
            time=self.time,
            client=self.client,
            cipher=self.cipher,
            size=self.size,
            source=self.source,
            n_ciphers=self.n_ciphers,
            bad_lines=self.bad_lines,
            bad_examples=self.bad_examples,
        )
        fields.update(changes)
        return Trace(**fields)


# --------------------------------------------------------------------------------------------
# The generator
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class InverseCdf:
    """A fitted inverse CDF ``F^-1(u) = -a / (u - c)`` of the paper (Pareto, shape 1)."""

    name: str
    a: float
    c: float

    @property
    def minimum(self) -> float:
        """Smallest value, ``F^-1(0) = a / c``."""
        return self.a / self.c

    def cdf(self, x: np.ndarray | float, cap: float = math.inf) -> np.ndarray:
        """The renormalised CDF (``u`` uniform in ``[0, c)``) of values capped at ``cap``."""
        x = np.asarray(x, dtype=np.float64)
        f = np.clip(1.0 - self.a / (self.c * np.maximum(x, self.minimum)), 0.0, 1.0)
        return np.where(x >= cap, 1.0, f)


#: Eq. (1): run length of consecutive requests from one client.
RUN_LENGTH = InverseCdf("run length", 0.72549, 0.976927)
#: Eq. (2): gap between two requests, seconds.
GAP = InverseCdf("gap", 0.475263, 0.995667)
#: Eq. (3): time until the same client returns, seconds.
RETURN_TIME = InverseCdf("return time", 0.444219, 0.995429)


def sample_inverse_cdf(rng: np.random.Generator, fit: InverseCdf, size: int, cap: float) -> np.ndarray:
    """Draw ``size`` values of ``fit``: ``u`` uniform in ``[0, c)``, value ``a / (c - u)``, capped."""
    u = fit.c * rng.random(size)
    return np.minimum(fit.a / (fit.c - u), cap)


def _check_positive(name: str, value: Any, *, integer: bool = False) -> None:
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if ok and integer:
        ok = float(value).is_integer()
    if not ok or not math.isfinite(float(value)) or float(value) <= 0:
        kind = "an integer" if integer else "a finite number"
        raise ConfigError(f"{name} must be {kind} > 0, got {value!r}")


def generate_trace(
    n: int,
    seed: int | None,
    mean_size: float = 24 * 1024,
    n_ciphers: int = 10,
    max_gap: float = 3600.0,
    max_run: int = 1000,
    max_wait: float = 60.0,
) -> Trace:
    """A synthetic web-server trace of ``n`` requests in log time (see the module docstring).

    Args:
        n: number of requests (>= 0).
        seed: seed of ``numpy.random.default_rng``; the same seed gives the same trace.
        mean_size: mean request size in bytes (exponential).
        n_ciphers: cipher = client id mod ``n_ciphers``.
        max_gap: cap, in seconds, of the gaps and return times drawn from Fb and Fc.
        max_run: cap of the run lengths drawn from Fa.
        max_wait: a client still waiting this many seconds after its return time leaves for
            good (not in the paper; the default, infinity, keeps every client forever). See
            the module docstring for why a finite value changes the client population.

    Raises:
        ConfigError: an argument is out of range.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ConfigError(f"n must be an integer >= 0, got {n!r}")
    n = int(n)
    _check_positive("mean_size", mean_size)
    _check_positive("max_gap", max_gap)
    _check_positive("max_run", max_run, integer=True)
    if not isinstance(max_wait, (int, float, np.integer, np.floating)) or isinstance(max_wait, bool) or not (
        max_wait >= 0
    ):
        raise ConfigError(f"max_wait must be a number >= 0 (seconds, inf allowed), got {max_wait!r}")
    if isinstance(n_ciphers, bool) or not isinstance(n_ciphers, (int, np.integer)) or not (
        1 <= n_ciphers <= MAX_CIPHERS
    ):
        raise ConfigError(f"n_ciphers must be an integer in 1..{MAX_CIPHERS}, got {n_ciphers!r}")
    try:
        root = np.random.default_rng(seed)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"seed must be a non-negative integer, got {seed!r}: {exc}") from None
    gap_rng, run_rng, ret_rng, size_rng, id_rng = root.spawn(5)

    source = (
        f"generate_trace(n={n}, seed={seed!r}, mean_size={mean_size!r}, n_ciphers={n_ciphers}, "
        f"max_gap={max_gap!r}, max_run={max_run!r}"
        + (f", max_wait={max_wait!r})" if max_wait != math.inf else ")")
    )
    if n == 0:
        empty = np.empty(0)
        return Trace(empty, empty.astype(np.int64), empty.astype(np.int8), empty.astype(np.int64),
                     source, int(n_ciphers))

    time = np.empty(n)
    time[0] = 0.0
    np.cumsum(sample_inverse_cdf(gap_rng, GAP, n - 1, float(max_gap)), out=time[1:])
    # At most n runs; one run length and one return time per run, drawn up front.
    run_len = np.maximum(1, np.floor(sample_inverse_cdf(run_rng, RUN_LENGTH, n, float(max_run)) + 0.5))
    run_len = run_len.astype(np.int64).tolist()
    ret = sample_inverse_cdf(ret_rng, RETURN_TIME, n, float(max_gap)).tolist()
    size = np.maximum(1, np.rint(size_rng.exponential(float(mean_size), n))).astype(np.int64)

    client = _assign_clients(time, run_len, ret, id_rng, float(max_wait))
    cipher = (client % n_ciphers).astype(np.int8)
    return Trace(time, client, cipher, size, source, int(n_ciphers))


def _assign_clients(
    time: np.ndarray, run_len: list[int], ret: list[float], id_rng: np.random.Generator, max_wait: float
) -> np.ndarray:
    """Give each run a client: the longest-due returning client, else a new one."""
    n = time.size
    t = time.tolist()
    client = np.empty(n, dtype=np.int64)
    heap: list[tuple[float, int]] = []  # (return time, client id); ids are unique, so no ties
    used: set[int] = set()
    fresh: list[int] = []
    pos = 0
    run = 0
    prev = -1
    while pos < n:
        tp = t[pos]
        cid = -1
        held = None
        while heap and heap[0][0] <= tp:
            due = heapq.heappop(heap)
            if tp - due[0] > max_wait:  # waited too long: gone for good
                continue
            if due[1] == prev:  # the client that just finished may not continue its own run
                held = due
                continue
            cid = due[1]
            break
        if held is not None:
            heapq.heappush(heap, held)
        if cid < 0:
            while True:
                if not fresh:
                    fresh = id_rng.integers(0, _ID_SPACE, size=_ID_CHUNK).tolist()[::-1]
                cid = fresh.pop()
                if cid not in used:
                    break
            used.add(cid)
        end = min(pos + run_len[run], n)
        client[pos:end] = cid
        heapq.heappush(heap, (t[end - 1] + ret[run], cid))
        prev = cid
        pos = end
        run += 1
    return client


# --------------------------------------------------------------------------------------------
# Loading and saving
# --------------------------------------------------------------------------------------------

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MONTHS = {m: i + 1 for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"])}
_INT64_MAX = 2**63 - 1
_INT64_MIN = -(2**63)
_INT_RE = re.compile(r"[+-]?[0-9]+\Z")

# host ident authuser [timestamp] "request" status bytes [referer agent ...]
_CLF_RE = re.compile(
    r'^(?P<host>\S+)\s+(?P<ident>\S+)\s+(?P<user>.*?)\s+\[(?P<ts>[^\]]*)\]\s+'
    r'"(?P<req>(?:[^"\\]|\\.)*)"\s+(?P<status>\S+)\s+(?P<bytes>\S+)(?:\s.*)?$'
)
_CLF_DETECT_RE = re.compile(r'^\S+\s+\S+\s+.*?\s+\[[^\]]*\]\s+"')
_CLF_TS_RE = re.compile(
    r"^(\d{1,2})/([A-Za-z]{3})/(\d{4}):(\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,6}))?"
    r"(?:\s*([+-])(\d{2}):?(\d{2}))?$"
)


class _BadLine(ValueError):
    """A reason why one line is rejected."""


def client_id(text: str) -> int:
    """The int64 client id of a log's client field.

    An integer (fitting int64) is itself; an IPv4 address is ``int(ip_address)``; an IPv6
    address is its IPv4 address if it maps one (``::ffff:a.b.c.d``), else a 63-bit hash of its
    16 bytes; any other string (a host name, a user name) is a 63-bit hash of its UTF-8 bytes.
    Hashes are BLAKE2b (8 bytes, shifted right by one), stable across runs and machines.
    """
    s = text.strip()
    if not s:
        raise _BadLine("empty client")
    if _INT_RE.match(s):
        v = int(s)
        if _INT64_MIN <= v <= _INT64_MAX:
            return v
    try:
        addr = ipaddress.ip_address(s)
    except ValueError:
        return _hash63(s.encode("utf-8", "surrogatepass"))
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped is not None:
            return int(addr.ipv4_mapped)
        return _hash63(addr.packed)
    return int(addr)


def _hash63(data: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big") >> 1


def _parse_bytes(text: str, *, dash_is_zero: bool) -> int:
    s = text.strip()
    if s == "-" and dash_is_zero:
        return 0
    try:
        v = int(s)
    except ValueError:
        try:
            f = float(s)
        except ValueError:
            raise _BadLine(f"bytes {s!r} is not an integer") from None
        if not (math.isfinite(f) and f.is_integer()):
            raise _BadLine(f"bytes {s!r} is not an integer") from None
        v = int(f)
    if v < 0:
        raise _BadLine(f"negative bytes {v}")
    if v > _INT64_MAX:
        raise _BadLine(f"bytes {v} out of range")
    return v


def _datetime_us(dt: datetime) -> int:
    """Microseconds since the epoch; naive datetimes are taken as UTC."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return (dt - _EPOCH) // timedelta(microseconds=1)


def _parse_csv_time(text: str) -> tuple[str, float | int]:
    """``("s", seconds)`` for a number, ``("us", microseconds since the epoch)`` for ISO-8601."""
    s = text.strip()
    if not s:
        raise _BadLine("empty time")
    try:
        v = float(s)
    except ValueError:
        pass
    else:
        if not math.isfinite(v):
            raise _BadLine(f"time {s!r} is not finite")
        return "s", v
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        raise _BadLine(f"time {s!r} is neither seconds nor an ISO-8601 datetime") from None
    return "us", _datetime_us(dt)


def _parse_clf_time(text: str) -> int:
    m = _CLF_TS_RE.match(text.strip())
    if not m:
        raise _BadLine(f"bad timestamp [{text}]")
    day, mon, year, hh, mm, ss, frac, sign, oh, om = m.groups()
    month = _MONTHS.get(mon.lower())
    if month is None:
        raise _BadLine(f"bad month {mon!r} in [{text}]")
    offset = timedelta(0)
    if sign:
        if int(oh) > 23 or int(om) > 59:
            raise _BadLine(f"bad time zone in [{text}]")
        offset = timedelta(hours=int(oh), minutes=int(om)) * (1 if sign == "+" else -1)
    try:
        dt = datetime(int(year), month, int(day), int(hh), int(mm), int(ss),
                      int((frac or "0").ljust(6, "0")), tzinfo=timezone(offset))
    except ValueError as exc:
        raise _BadLine(f"bad timestamp [{text}]: {exc}") from None
    return _datetime_us(dt)


def _cipher_index(text: str, n_ciphers: int, names: dict[str, int]) -> int | None:
    s = text.strip()
    if not s:
        return None
    if _INT_RE.match(s):
        idx = int(s)
    elif s.lower() in names:
        idx = names[s.lower()]
    elif names:
        raise _BadLine(f"unknown cipher {s!r}")
    else:
        raise _BadLine(f"cipher {s!r} is not an index (pass cipher_names to use names)")
    if not 0 <= idx < n_ciphers:
        raise _BadLine(f"cipher {idx} out of range 0..{n_ciphers - 1}")
    return idx


def _open_text(path: Path):
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace", newline="")
    return open(path, encoding="utf-8", errors="replace", newline="")


def _split_csv(line: str) -> list[str]:
    if '"' in line:
        return next(csv.reader([line]))
    return line.split(",")


_HEADER_ALIASES = {"time": "time", "timestamp": "time", "client": "client", "host": "client",
                   "bytes": "bytes", "size": "bytes", "cipher": "cipher"}


def load_trace(
    path: str | os.PathLike[str],
    n_ciphers: int = 10,
    fmt: str = "auto",
    cipher_names: Sequence[str] | None = None,
) -> Trace:
    """Read a request log into a :class:`Trace` (sorted by time, stable, starting at 0).

    Formats (``fmt``):

    * ``"csv"``: ``time,client,bytes[,cipher]``, one request per line. A header line is
      optional; with one (its first field is ``time``), columns are found by name (``time``/
      ``timestamp``, ``client``/``host``, ``bytes``/``size``, optional ``cipher``; others are
      ignored). ``time`` is seconds (any origin) or an ISO-8601 datetime (naive = UTC), not a
      mix of the two. ``client`` is an integer id, an IPv4/IPv6 address or any string (see
      :func:`client_id`). ``cipher`` is an index or, with ``cipher_names``, a name
      (case-insensitive); where it is absent or empty the cipher is client id mod ``n_ciphers``.
      Lines starting with ``#`` are comments.
    * ``"clf"``: Common or Combined Log Format,
      ``host ident authuser [10/Oct/2000:13:55:36 -0700] "GET /x HTTP/1.0" 200 2326 ...``;
      the timestamp's offset is applied, bytes ``-`` is 0, every line is a request whatever
      its status. The cipher is client id mod ``n_ciphers``.
    * ``"auto"``: CLF if the first non-empty line looks like CLF, else CSV.

    Files ending in ``.gz`` are decompressed. Empty lines are skipped. Lines that cannot be
    used (unparseable, bad time, negative bytes, cipher out of range) are counted in
    ``bad_lines``, and the first five kept in ``bad_examples`` as ``"line N: reason"``.

    Raises:
        TraceError: the file cannot be read, or no line is a valid request.
        ConfigError: ``fmt``, ``n_ciphers`` or ``cipher_names`` is invalid.
    """
    if fmt not in ("auto", "csv", "clf"):
        raise ConfigError(f"trace format must be 'auto', 'csv' or 'clf', got {fmt!r}")
    if isinstance(n_ciphers, bool) or not isinstance(n_ciphers, (int, np.integer)) or not (
        1 <= n_ciphers <= MAX_CIPHERS
    ):
        raise ConfigError(f"n_ciphers must be an integer in 1..{MAX_CIPHERS}, got {n_ciphers!r}")
    n_ciphers = int(n_ciphers)
    names: dict[str, int] = {}
    if cipher_names is not None:
        if isinstance(cipher_names, str):
            raise ConfigError("cipher_names must be a sequence of names, not one string")
        if len(cipher_names) > n_ciphers:
            raise ConfigError(f"{len(cipher_names)} cipher names given for n_ciphers={n_ciphers}")
        for i, name in enumerate(cipher_names):
            key = str(name).strip().lower()
            if not key or key in names or _INT_RE.match(key):
                raise ConfigError(f"cipher name {name!r} is empty, repeated or a number")
            names[key] = i
    path = Path(path)

    times: list[float | int] = []
    clients: list[int] = []
    ciphers: list[int] = []  # -1: client id mod n_ciphers
    sizes: list[int] = []
    bad = 0
    examples: list[str] = []
    time_kind: str | None = None
    mode: str | None = None if fmt == "auto" else fmt
    columns: dict[str, int] | None = None  # CSV header: column name -> field index
    first_line = True

    try:
        with _open_text(path) as fh:
            for lineno, raw in enumerate(fh, start=1):
                line = raw.rstrip("\r\n")
                if not line.strip():
                    continue
                if mode is None:
                    mode = "clf" if _CLF_DETECT_RE.match(line.strip()) else "csv"
                try:
                    if mode == "clf":
                        m = _CLF_RE.match(line.strip())
                        if not m:
                            raise _BadLine("not a Common/Combined Log Format line")
                        t: float | int = _parse_clf_time(m["ts"])
                        kind = "us"
                        cid = client_id(m["host"])
                        nbytes = _parse_bytes(m["bytes"], dash_is_zero=True)
                        cidx = None
                    else:
                        if line.lstrip().startswith("#"):
                            continue
                        fields = _split_csv(line)
                        if first_line and fields[0].strip().lower() in ("time", "timestamp"):
                            columns = _csv_header(fields, path, lineno)
                            first_line = False
                            continue
                        first_line = False
                        if columns is None:
                            if len(fields) not in (3, 4):
                                raise _BadLine(f"expected 3 or 4 fields (time,client,bytes[,cipher]), got {len(fields)}")
                            col = {"time": 0, "client": 1, "bytes": 2, "cipher": 3 if len(fields) == 4 else -1}
                        else:
                            col = columns
                            need = max(col.values()) + 1
                            if len(fields) < need:
                                raise _BadLine(f"expected {need} fields, got {len(fields)}")
                        kind, t = _parse_csv_time(fields[col["time"]])
                        cid = client_id(fields[col["client"]])
                        nbytes = _parse_bytes(fields[col["bytes"]], dash_is_zero=False)
                        cidx = _cipher_index(fields[col["cipher"]], n_ciphers, names) if col["cipher"] >= 0 else None
                    if time_kind is None:
                        time_kind = kind
                    elif kind != time_kind:
                        what = {"s": "seconds", "us": "an ISO-8601 datetime"}
                        raise _BadLine(f"time is {what[kind]} but earlier lines used {what[time_kind]}")
                except _BadLine as exc:
                    first_line = False
                    bad += 1
                    if len(examples) < MAX_BAD_EXAMPLES:
                        examples.append(f"line {lineno}: {exc}")
                    continue
                times.append(t)
                clients.append(cid)
                ciphers.append(-1 if cidx is None else cidx)
                sizes.append(nbytes)
    except OSError as exc:
        raise TraceError(f"{path}: cannot read trace: {exc.strerror or exc}") from None
    except UnicodeError as exc:  # only from a corrupt .gz stream
        raise TraceError(f"{path}: cannot read trace: {exc}") from None
    except (EOFError, zlib.error) as exc:  # a truncated or damaged .gz (EOFError is not an OSError)
        raise TraceError(f"{path}: the compressed trace is truncated or damaged ({exc}); "
                         "compress it again or use the uncompressed file") from None

    if not times:
        detail = f"{bad} bad, first: {examples[0]}" if bad else "the file has no request lines"
        raise TraceError(f"{path}: no valid request lines ({detail})")

    client = np.array(clients, dtype=np.int64)
    cipher = np.array(ciphers, dtype=np.int64)
    derived = cipher < 0
    cipher[derived] = client[derived] % n_ciphers
    if time_kind == "us":
        us = np.array(times, dtype=np.int64)
        order = np.argsort(us, kind="stable")
        time = (us[order] - us[order[0]]) / 1e6
    else:
        ts = np.array(times, dtype=np.float64)
        order = np.argsort(ts, kind="stable")
        time = ts[order] - ts[order[0]]
    return Trace(
        time=time,
        client=client[order],
        cipher=cipher[order].astype(np.int8),
        size=np.array(sizes, dtype=np.int64)[order],
        source=str(path),
        n_ciphers=n_ciphers,
        bad_lines=bad,
        bad_examples=examples,
    )


def _csv_header(fields: list[str], path: Path, lineno: int) -> dict[str, int]:
    col: dict[str, int] = {"cipher": -1}
    for i, name in enumerate(fields):
        key = _HEADER_ALIASES.get(name.strip().lower())
        if key is None:
            continue
        if key in col and col[key] >= 0:
            raise TraceError(f"{path}: line {lineno}: column {key!r} appears twice in the header")
        col[key] = i
    missing = [k for k in ("time", "client", "bytes") if k not in col]
    if missing:
        raise TraceError(f"{path}: line {lineno}: header lacks column(s) {', '.join(missing)}")
    return col


def save_trace_csv(
    trace: Trace, path: str | os.PathLike[str], cipher_names: Sequence[str] | None = None
) -> None:
    """Write ``trace`` as CSV (``time,client,bytes,cipher`` with a header), atomically.

    Times are written with ``repr`` so they read back exactly. The cipher column holds indices,
    or names when ``cipher_names`` is given (read them back with the same ``cipher_names``).
    The file is written to a temporary file beside ``path`` and moved into place.
    """
    path = Path(path)
    if cipher_names is not None and len(cipher_names) < trace.n_ciphers:
        raise ConfigError(f"{len(cipher_names)} cipher names given for n_ciphers={trace.n_ciphers}")
    labels = [str(x) for x in cipher_names] if cipher_names is not None else [str(i) for i in range(trace.n_ciphers)]
    for label in labels:
        if any(ch in label for ch in ',"\r\n'):
            raise ConfigError(f"cipher name {label!r} cannot be written to CSV")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    except OSError as exc:
        raise TraceError(f"{path}: cannot write trace: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write("time,client,bytes,cipher\n")
            t = trace.time.tolist()
            c = trace.client.tolist()
            s = trace.size.tolist()
            k = trace.cipher.tolist()
            step = 65536
            for lo in range(0, len(t), step):
                fh.write("".join(
                    f"{t[i]!r},{c[i]},{s[i]},{labels[k[i]]}\n" for i in range(lo, min(lo + step, len(t)))
                ))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        _unlink_quietly(tmp)
        raise TraceError(f"{path}: cannot write trace: {exc.strerror or exc}") from None
    except BaseException:
        _unlink_quietly(tmp)
        raise


def _unlink_quietly(p: str) -> None:
    try:
        os.unlink(p)
    except OSError:
        pass
