"""Request logs read into a :class:`~cryptoffload.workloads.request_trace.Trace`, and traces written back.

Why a module of its own: a user's own server log (CSV or the Common/Combined Log Format) is the
one outside input of the fpga-reconfig study, so every line is validated, bad lines are counted
and quoted (never silently dropped), and the file written back is atomic. The synthetic generator
(:mod:`cryptoffload.workloads.web_trace`) and the client population
(:mod:`cryptoffload.workloads.client_population`) do not depend on any of this.
"""

from __future__ import annotations

import csv
import gzip
from array import array
import hashlib
import io
import ipaddress
import math
import os
import re
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import IO

import numpy as np

from cryptoffload.checks import INT_RE, LOG_REQUESTS, REQUEST_BYTES, TRACE_TIME_S, is_number
from cryptoffload.errors import ConfigError, OutputError, TraceError
from cryptoffload.io import atomic_writer, open_input
from cryptoffload.workloads.request_trace import MAX_BAD_EXAMPLES, MAX_CIPHERS, Trace

__all__ = ["load_trace", "save_trace_csv", "client_id", "trace_from_text"]

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
_CLF_TS_RE = re.compile(  # ASCII: \d would also match other scripts' digits, which int() reads
    r"^(\d{1,2})/([A-Za-z]{3})/(\d{4}):(\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,6}))?"
    r"(?:\s*([+-])(\d{2}):?(\d{2}))?$", re.ASCII
)
#: Lines looked at, good and bad together: past it the file is no trace this reader can hold
#: (a log of 10^12 lines is refused after twice the request ceiling, not read to its end).
MAX_LINES = 2 * int(LOG_REQUESTS.ceiling)


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
    if _INT_RE.match(s) and len(s) <= 20:   # int64's 19 digits and a sign; longer is any other string
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


def _parse_bytes(text: str) -> int:
    """A request's size: ASCII digits (the one grammar: no ``1e3``, ``1_000`` or other scripts'
    digits), :data:`~cryptoffload.checks.REQUEST_BYTES` (a byte to a TiB). A record of 0
    bytes (CLF's ``-``, a 304 or a HEAD) has nothing to encrypt: a bad line, counted."""
    s = text.strip()
    if s == "-":
        raise _BadLine("bytes '-' (no body): a request with nothing to encrypt")
    if len(s) > 40 or not INT_RE.fullmatch(s):
        raise _BadLine(f"bytes {s[:40]!r} is not an integer (ASCII digits)")
    v = int(s)
    if not REQUEST_BYTES.floor <= v <= REQUEST_BYTES.ceiling:
        raise _BadLine(f"bytes {v:,} is outside 1..{int(REQUEST_BYTES.ceiling):,} bytes"
                       + (" (negative)" if v < 0 else " (a request with nothing to encrypt)" if v == 0 else ""))
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
    if is_number(s):
        v = float(s)
        if not abs(v) <= TRACE_TIME_S.ceiling:  # also NaN and 1e400, which float() reads as inf
            raise _BadLine(f"time {s[:40]!r} is outside +-{TRACE_TIME_S.ceiling:g} s")
        return "s", v
    if not s.isascii():
        raise _BadLine(f"time {s[:40]!r} is neither seconds nor an ISO-8601 datetime (ASCII digits)")
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        raise _BadLine(f"time {s[:40]!r} is neither seconds nor an ISO-8601 datetime") from None
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
    if len(s) <= 4 and _INT_RE.match(s):
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


@contextmanager
def _open_text(path: Path) -> Iterator[IO[str]]:
    """The log as text, streamed (a log may be larger than the memory): a regular file only
    (:func:`~cryptoffload.io.open_input`), gunzipped for ``.gz``."""
    with open_input(path, "trace", error=TraceError) as raw:
        if path.suffix == ".gz":
            with gzip.open(raw, "rt", encoding="utf-8", errors="replace", newline="") as fh:
                yield fh
        else:
            with io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline="") as fh:
                yield fh


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
    reader = _reader(n_ciphers, fmt, cipher_names)
    path = Path(path)
    _read_lines(path, reader)
    return reader.trace(path)


def trace_from_text(text: str, n_ciphers: int = 10, fmt: str = "auto", cipher_names: Sequence[str] | None = None,
                    source: str = "trace") -> Trace:
    """:func:`load_trace` of a log held as text (``source`` names it in messages): the same
    reader, line by line, for callers and tests that have the text rather than a file."""
    reader = _reader(n_ciphers, fmt, cipher_names)
    where = Path(source)
    for lineno, raw in enumerate(io.StringIO(text, newline=""), start=1):
        reader.read(lineno, raw, where)
    return reader.trace(where)


def _reader(n_ciphers: int, fmt: str, cipher_names: Sequence[str] | None) -> "_LogReader":
    if fmt not in ("auto", "csv", "clf"):
        raise ConfigError(f"trace format must be 'auto', 'csv' or 'clf', got {fmt!r}")
    n_ciphers = _check_n_ciphers(n_ciphers)
    return _LogReader(n_ciphers, _cipher_name_index(cipher_names, n_ciphers), None if fmt == "auto" else fmt)


def _check_n_ciphers(n_ciphers: int) -> int:
    if isinstance(n_ciphers, bool) or not isinstance(n_ciphers, (int, np.integer)) or not (
        1 <= n_ciphers <= MAX_CIPHERS
    ):
        raise ConfigError(f"n_ciphers must be an integer in 1..{MAX_CIPHERS}, got {n_ciphers!r}")
    return int(n_ciphers)


def _cipher_name_index(cipher_names: Sequence[str] | None, n_ciphers: int) -> dict[str, int]:
    """Lower-cased cipher name -> index, for a CSV ``cipher`` column given by name."""
    names: dict[str, int] = {}
    if cipher_names is None:
        return names
    if isinstance(cipher_names, str):
        raise ConfigError("cipher_names must be a sequence of names, not one string")
    if len(cipher_names) > n_ciphers:
        raise ConfigError(f"{len(cipher_names)} cipher names given for n_ciphers={n_ciphers}")
    for i, name in enumerate(cipher_names):
        key = str(name).strip().lower()
        if not key or key in names or _INT_RE.match(key):
            raise ConfigError(f"cipher name {name!r} is empty, repeated or a number")
        names[key] = i
    return names


# One parsed request: time kind ("s" or "us"), time, client id, bytes, cipher index (None: derived).
_Request = tuple[str, "float | int", int, int, "int | None"]


def _parse_clf_line(line: str) -> _Request:
    m = _CLF_RE.match(line.strip())
    if not m:
        raise _BadLine("not a Common/Combined Log Format line")
    return "us", _parse_clf_time(m["ts"]), client_id(m["host"]), _parse_bytes(m["bytes"]), None


def _csv_columns(fields: list[str], columns: dict[str, int] | None) -> dict[str, int]:
    """Where each field is on a CSV line: by the header's names, or by position without one."""
    if columns is None:
        if len(fields) not in (3, 4):
            raise _BadLine(f"expected 3 or 4 fields (time,client,bytes[,cipher]), got {len(fields)}")
        return {"time": 0, "client": 1, "bytes": 2, "cipher": 3 if len(fields) == 4 else -1}
    need = max(columns.values()) + 1
    if len(fields) < need:
        raise _BadLine(f"expected {need} fields, got {len(fields)}")
    return columns


def _parse_csv_fields(fields: list[str], col: dict[str, int], n_ciphers: int, names: dict[str, int]) -> _Request:
    kind, t = _parse_csv_time(fields[col["time"]])
    cid = client_id(fields[col["client"]])
    nbytes = _parse_bytes(fields[col["bytes"]])
    cidx = _cipher_index(fields[col["cipher"]], n_ciphers, names) if col["cipher"] >= 0 else None
    return kind, t, cid, nbytes, cidx


class _LogReader:
    """The requests read so far, line by line, and the lines refused (counted, five kept)."""

    def __init__(self, n_ciphers: int, names: dict[str, int], mode: str | None) -> None:
        self.n_ciphers = n_ciphers
        self.names = names
        self.mode = mode                # None until the first line says ("auto")
        # packed arrays, 8 bytes a value: reading 1 M requests peaked 97 MiB above the start, 211
        # MiB with Python lists (measured, issue 32); the times' type ("d" seconds, "q"
        # microseconds) is set by the first request
        self.times: array | None = None
        self.clients = array("q")
        self.ciphers = array("b")       # -1: client id mod n_ciphers
        self.sizes = array("q")
        self.bad = 0
        self.lines = 0
        self.examples: list[str] = []
        self.time_kind: str | None = None
        self.columns: dict[str, int] | None = None  # CSV header: column name -> field index
        self.first_line = True

    def read(self, lineno: int, raw: str, path: Path) -> None:
        line = raw.rstrip("\r\n")
        if not line.strip():
            return
        self.lines += 1
        if self.lines > MAX_LINES or len(self.clients) >= LOG_REQUESTS.ceiling:
            raise TraceError(f"{path}: more than {int(LOG_REQUESTS.ceiling):,} requests (or {MAX_LINES:,} lines) by line "
                             f"{lineno:,}; a trace holds at most {int(LOG_REQUESTS.ceiling):,} requests (cut the log)")
        if self.mode is None:
            self.mode = "clf" if _CLF_DETECT_RE.match(line.strip()) else "csv"
        try:
            req = _parse_clf_line(line) if self.mode == "clf" else self._csv_line(line, lineno, path)
            if req is None:
                return
            self._check_time_kind(req[0])
        except _BadLine as exc:
            self.first_line = False
            self.bad += 1
            if len(self.examples) < MAX_BAD_EXAMPLES:
                self.examples.append(f"line {lineno}: {exc}")
            return
        kind, t, cid, nbytes, cidx = req
        if self.times is None:
            self.times = array("d" if kind == "s" else "q")
        self.times.append(t)
        self.clients.append(cid)
        self.ciphers.append(-1 if cidx is None else cidx)
        self.sizes.append(nbytes)

    def _csv_line(self, line: str, lineno: int, path: Path) -> _Request | None:
        """A CSV request, or None for a comment or the header (read into ``columns``)."""
        if line.lstrip().startswith("#"):
            return None
        fields = _split_csv(line)
        if self.first_line and fields[0].strip().lower() in ("time", "timestamp"):
            self.columns = _csv_header(fields, path, lineno)
            self.first_line = False
            return None
        self.first_line = False
        return _parse_csv_fields(fields, _csv_columns(fields, self.columns), self.n_ciphers, self.names)

    def _check_time_kind(self, kind: str) -> None:
        """Seconds or datetimes, not a mix: the first line decides."""
        if self.time_kind is None:
            self.time_kind = kind
        elif kind != self.time_kind:
            what = {"s": "seconds", "us": "an ISO-8601 datetime"}
            raise _BadLine(f"time is {what[kind]} but earlier lines used {what[self.time_kind]}")

    def trace(self, path: Path) -> Trace:
        """The requests sorted by time (stable) from 0, ciphers derived where the log had none."""
        if self.times is None or not len(self.times):
            detail = f"{self.bad} bad, first: {self.examples[0]}" if self.bad else "the file has no request lines"
            raise TraceError(f"{path}: no valid request lines ({detail})")
        client = np.frombuffer(self.clients, dtype=np.int64)
        cipher = np.frombuffer(self.ciphers, dtype=np.int8).astype(np.int64)
        derived = cipher < 0
        cipher[derived] = client[derived] % self.n_ciphers
        if self.time_kind == "us":
            us = np.frombuffer(self.times, dtype=np.int64)
            order = np.argsort(us, kind="stable")
            time = (us[order] - us[order[0]]) / 1e6
        else:
            ts = np.frombuffer(self.times, dtype=np.float64)
            order = np.argsort(ts, kind="stable")
            time = ts[order] - ts[order[0]]
        return Trace(time=time, client=client[order], cipher=cipher[order].astype(np.int8),
                     size=np.frombuffer(self.sizes, dtype=np.int64)[order], source=str(path),
                     n_ciphers=self.n_ciphers, bad_lines=self.bad, bad_examples=self.examples)


def _read_lines(path: Path, reader: _LogReader) -> None:
    """Feed every line of ``path`` (``.gz`` decompressed) to ``reader``; a file that cannot be
    read is a one-line :class:`TraceError`."""
    try:
        with _open_text(path) as fh:
            for lineno, raw in enumerate(fh, start=1):
                reader.read(lineno, raw, path)
    except OSError as exc:
        raise TraceError(f"{path}: cannot read trace: {exc.strerror or exc}") from None
    except UnicodeError as exc:  # only from a corrupt .gz stream
        raise TraceError(f"{path}: cannot read trace: {exc}") from None
    except (EOFError, zlib.error) as exc:  # a truncated or damaged .gz (EOFError is not an OSError)
        raise TraceError(f"{path}: the compressed trace is truncated or damaged ({exc}); "
                         "compress it again or use the uncompressed file") from None


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
    Written through :func:`cryptoffload.io.atomic_writer`: all of it or nothing.
    """
    path = Path(path)
    if cipher_names is not None and len(cipher_names) < trace.n_ciphers:
        raise ConfigError(f"{len(cipher_names)} cipher names given for n_ciphers={trace.n_ciphers}")
    labels = [str(x) for x in cipher_names] if cipher_names is not None else [str(i) for i in range(trace.n_ciphers)]
    for label in labels:
        if any(ch in label for ch in ',"\r\n'):
            raise ConfigError(f"cipher name {label!r} cannot be written to CSV")
    try:
        with atomic_writer(path, text=True) as fh:
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
    except OutputError as exc:
        raise TraceError(f"cannot write the trace: {exc}") from None
