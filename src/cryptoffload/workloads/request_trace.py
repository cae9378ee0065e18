"""A request trace: a stream of requests ``(time, client, cipher, size)`` arriving at an
encrypting server, which must encrypt ``size`` bytes with cipher ``cipher`` for ``client``.

Why a module of its own: a trace comes from several places -- the synthetic generator of the
fpga-reconfiguration paper (:mod:`cryptoffload.workloads.web_trace`), real server logs
(:mod:`cryptoffload.workloads.trace_log`) -- and is read by the policies and the simulator;
one immutable, validated class is what they all agree on. :meth:`Trace.rescaled` keeps the
request sequence and changes only the rate, so a study sweeps rates over one trace.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from cryptoffload.checks import RATE_PER_S
from cryptoffload.errors import ConfigError, TraceError

__all__ = ["MAX_BAD_EXAMPLES", "MAX_CIPHERS", "Trace"]

#: Most bad-line examples a loaded trace keeps.
MAX_BAD_EXAMPLES = 5
#: Largest number of ciphers a trace can name (``cipher`` is int8).
MAX_CIPHERS = 127


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
            ConfigError: ``rate`` is not a number of requests/s within
                :data:`~cryptoffload.checks.RATE_PER_S`, or the rescaled span overflows.
            TraceError: the trace has two or more requests but they all arrive at time 0.
        """
        rate_f = RATE_PER_S.check("rate", rate)
        n = len(self)
        if n < 2:
            return replace(self, time=self.time)
        span = self.span
        if span == 0.0:
            raise TraceError(f"cannot rescale {self.source}: all {n} requests arrive at the same time")
        new_span = (n - 1) / rate_f
        if not math.isfinite(new_span):
            raise ConfigError(f"rate {rate!r} is too small: the trace would last {new_span} s")
        # Divide first so that the last request lands on new_span exactly.
        time = (self.time / span) * new_span
        return replace(self, time=time, source=f"{self.source} @ {rate_f:g} req/s")

    def head(self, n: int) -> Trace:
        """The first ``n`` requests (all of them if ``n >= len(self)``)."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ConfigError(f"head() needs an integer n >= 0, got {n!r}")
        n = int(n)
        return replace(
            self, time=self.time[:n], client=self.client[:n], cipher=self.cipher[:n], size=self.size[:n]
        )

    def segment(self, start: int, stop: int | None = None) -> Trace:
        """Requests ``start .. stop - 1`` with times rebased so the first is at 0 (a later month
        of a log, a held-out half of a history)."""
        n = len(self)
        stop = n if stop is None else stop
        for name, v in (("start", start), ("stop", stop)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= v <= n:
                raise ConfigError(f"segment() needs integers in 0..{n}, got {name}={v!r}")
        if stop <= start:
            raise ConfigError(f"segment() needs start < stop, got {start} and {stop}")
        t = self.time[start:stop]
        return replace(self, time=t - t[0], client=self.client[start:stop], cipher=self.cipher[start:stop],
                             size=self.size[start:stop], source=f"{self.source}[{start}:{stop}]")

    def cipher_mix(self, weight: str = "count") -> np.ndarray:
        """Share of each cipher, an array of length ``n_ciphers`` summing to 1.

        Args:
            weight: ``"count"`` (share of requests) or ``"bytes"`` (share of requested bytes).

        An empty trace (or one of zero bytes, for ``"bytes"``) gives all zeros.
        """
        totals: np.ndarray
        if weight == "count":
            totals = np.bincount(self.cipher, minlength=self.n_ciphers).astype(np.float64)
        elif weight == "bytes":
            totals = np.bincount(self.cipher, weights=self.size.astype(np.float64), minlength=self.n_ciphers)
        else:
            raise ConfigError(f"cipher_mix weight must be 'count' or 'bytes', got {weight!r}")
        total = totals.sum()
        return totals / total if total > 0 else np.zeros(self.n_ciphers)
