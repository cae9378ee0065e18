"""Request traces for an encrypting web server, and the synthetic generator of the fpga-reconfig paper.

A :class:`Trace` is a stream of requests ``(time, client, cipher, size)``: the server receives
a request from ``client`` at ``time`` and must encrypt ``size`` bytes with cipher ``cipher``.
Real logs are read by :mod:`cryptoffload.workloads.trace_log`.

Synthetic traces
----------------
:func:`generate_trace` follows section 4 of Niwa, Maeda and Yamaguchi (IPSJ TACS 2005; a month of
the web server log of the University of Tsukuba's media centre, December 2003), which fitted
three inverse CDFs to the log (``u`` uniform)::

    run length      Fa^-1(u) = -0.72549  / (u - 0.976927)   consecutive requests of one client
    gap             Fb^-1(u) = -0.475263 / (u - 0.995667)   seconds between two requests
    return time     Fc^-1(u) = -0.444219 / (u - 0.995429)   seconds until the same client is back

and says that file sizes are roughly exponential with a mean of 24 KB, and that a client's id
modulo 10 picks its cipher. The paper leaves several things open; our choices:

* **The pole.** Each fitted ``F^-1(u) = a / (c - u)`` is a Pareto law with shape 1 and minimum
  ``a / c``; it reaches infinity at ``u = c < 1`` and is negative above, i.e. the fitted CDF
  stops short of 1. The paper does not say how it handled this. We *renormalise*: ``u`` is
  drawn uniform in ``[0, c)`` (so the CDF becomes ``F(x) = 1 - a / (c x)`` for ``x >= a / c``)
  and cap gaps and return times at ``max_gap`` seconds (default one hour), so that a month-long
  trace has no single gap of weeks. Run lengths are *not* capped by default (``max_run=None``):
  their heavy tail is the paper's own input, and it is what makes one cipher dominate a trace
  (a single run of tens of thousands of requests), as the paper's Table 7 shows for TWOFISH
  (0.246). Because of these poles one trace is one draw: studies report distributions over
  seeds. :func:`sample_inverse_cdf` is the one place the renormalisation is done.
* **Run length** ``L = max(1, floor(v + 0.5))`` of a draw ``v`` from Fa (``v >= 0.743``).
* **Arrival times.** The first request is at ``t = 0``; ``n - 1`` gaps from Fb are summed.
* **Clients** (``clients="population"``, the default). Runs are handed to the clients of a
  :class:`~cryptoffload.workloads.client_population.ClientPopulation` in proportion to their
  activity, never to the client whose run has just ended (so the maximal same-client runs are
  exactly the drawn run lengths). The population (how many clients, how unequal) is fitted to
  the paper's Fc and Table 7 (:mod:`cryptoffload.workloads.population_fit`); pass the same
  ``population`` to generate a history and an evaluated trace of one server.
* **Clients, the literal reading** (``clients="returns"``): Fc decides who comes back. At the
  start of a run, the client that has been due back longest takes it, else a new client does;
  when a run ends at ``t_end`` its client is due again at ``t_end + Fc``; a client never takes
  the run right after its own. Followed literally this leaves 7-9 clients for 610,000
  requests (returning clients always win, and Fc's median of 0.9 s is shorter than the time
  between runs), which Table 7's nine near-equal ciphers rule out; ``max_wait`` (not in the
  paper, default 60 s) lets a client that has waited that long past its return time leave for
  good, which gives thousands of clients. Kept for sensitivity runs.
* **Cipher** = client id mod ``n_ciphers`` (the paper's "client id -> cipher, id mod 10").
* **Sizes** are exponential with mean ``mean_size`` bytes, rounded to integers, minimum 1.

Times are in *log time* (seconds of the original log; the mean gap is about 4.7 s with the
default cap, so 610,000 requests span about a month). :meth:`Trace.rescaled` multiplies the
times to reach a target rate, so ``generate_trace(...).rescaled(rate)`` is the *same request
sequence* at every rate: the study sweeps rates over one trace, as the paper does. Each
quantity comes from its own random stream (``default_rng(seed).spawn``), so a shorter trace of
the same seed is a prefix of a longer one.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cryptoffload.checks import check_int, check_positive
from cryptoffload.errors import ConfigError, TraceError
from cryptoffload.workloads.client_population import ClientPopulation, assign_runs, draw_population

__all__ = [
    "Trace",
    "InverseCdf",
    "RUN_LENGTH",
    "GAP",
    "RETURN_TIME",
    "CLIENT_MODELS",
    "generate_trace",
    "sample_inverse_cdf",
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
        return self._replace(time=t - t[0], client=self.client[start:stop], cipher=self.cipher[start:stop],
                             size=self.size[start:stop], source=f"{self.source}[{start}:{stop}]")

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


CLIENT_MODELS = ("population", "returns")
"""How runs are given to clients: a fitted population (default) or Fc returns (the literal reading)."""


def generate_trace(
    n: int,
    seed: int | None,
    mean_size: float = 24 * 1024,
    n_ciphers: int = 10,
    max_gap: float = 3600.0,
    max_run: int | None = None,
    max_wait: float = 60.0,
    *,
    clients: str = "population",
    population: ClientPopulation | None = None,
) -> Trace:
    """A synthetic web-server trace of ``n`` requests in log time (see the module docstring).

    Args:
        n: number of requests (>= 0).
        seed: seed of ``numpy.random.default_rng``; the same seed gives the same trace.
        mean_size: mean request size in bytes (exponential).
        n_ciphers: cipher = client id mod ``n_ciphers``.
        max_gap: cap, in seconds, of the gaps and return times drawn from Fb and Fc.
        max_run: cap of the run lengths drawn from Fa (``None``: no cap but the trace length).
        max_wait: ``clients="returns"`` only: a client still waiting this many seconds after
            its return time leaves for good (``math.inf``: never).
        clients: ``"population"`` or ``"returns"`` (:data:`CLIENT_MODELS`).
        population: ``clients="population"`` only: the clients to draw from (default: a fitted
            population drawn from ``seed``). Pass one population to several calls to generate
            months of the same server.

    Raises:
        ConfigError: an argument is out of range.
    """
    n = check_int("n", n, minimum=0)
    check_positive("mean_size", mean_size)
    check_positive("max_gap", max_gap)
    if max_run is not None:
        check_int("max_run", max_run)
    if not isinstance(max_wait, (int, float, np.integer, np.floating)) or isinstance(max_wait, bool) or not (
        max_wait >= 0
    ):
        raise ConfigError(f"max_wait must be a number >= 0 (seconds, inf allowed), got {max_wait!r}")
    check_int("n_ciphers", n_ciphers, maximum=MAX_CIPHERS)
    if clients not in CLIENT_MODELS:
        raise ConfigError(f"clients must be one of {', '.join(CLIENT_MODELS)}, got {clients!r}")
    if population is not None:
        if clients != "population":
            raise ConfigError("a population is only used with clients='population'")
        if not isinstance(population, ClientPopulation):
            raise ConfigError("population must be a ClientPopulation (see draw_population)")
        if population.n_ciphers != n_ciphers:
            raise ConfigError(f"the population uses {population.n_ciphers} ciphers, the trace {n_ciphers}")
    try:
        root = np.random.default_rng(seed)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"seed must be a non-negative integer, got {seed!r}: {exc}") from None
    gap_rng, run_rng, ret_rng, size_rng, id_rng, pop_seq, pick_rng = root.spawn(7)
    run_cap = float(n if max_run is None else max_run)

    if clients == "population":
        if population is None:
            population = draw_population(pop_seq.bit_generator.seed_seq, n_ciphers=int(n_ciphers))
        who = f"population={population.source}"
    else:
        who = "clients='returns'" + (f", max_wait={max_wait!r}" if max_wait != math.inf else "")
    source = (f"generate_trace(n={n}, seed={seed!r}, mean_size={mean_size!r}, n_ciphers={n_ciphers}, "
              f"max_gap={max_gap!r}, max_run={max_run!r}, {who})")
    if n == 0:
        empty = np.empty(0)
        return Trace(empty, empty.astype(np.int64), empty.astype(np.int8), empty.astype(np.int64),
                     source, int(n_ciphers))

    time = np.empty(n)
    time[0] = 0.0
    np.cumsum(sample_inverse_cdf(gap_rng, GAP, n - 1, float(max_gap)), out=time[1:])
    # At most n runs; one run length (and one return time, or two client draws) per run, drawn up front.
    run_len = np.maximum(1, np.floor(sample_inverse_cdf(run_rng, RUN_LENGTH, n, run_cap) + 0.5)).astype(np.int64)
    size = np.maximum(1, np.rint(size_rng.exponential(float(mean_size), n))).astype(np.int64)

    if clients == "population":
        assert population is not None
        n_runs = int(np.searchsorted(np.cumsum(run_len), n)) + 1
        who_run = assign_runs(population, pick_rng.random((n, 2))[:n_runs])
        client_idx = np.repeat(who_run, run_len[:n_runs])[:n]
        client = population.ids[client_idx]
        cipher = population.cipher[client_idx].astype(np.int8)
    else:
        ret = sample_inverse_cdf(ret_rng, RETURN_TIME, n, float(max_gap)).tolist()
        client = _assign_clients(time, run_len.tolist(), ret, id_rng, float(max_wait))
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
