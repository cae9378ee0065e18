"""The synthetic web-server request traces of the fpga-reconfig paper.

:func:`generate_trace` makes a :class:`~cryptoffload.workloads.request_trace.Trace` (a stream
of requests ``(time, client, cipher, size)``; real logs are read by
:mod:`cryptoffload.workloads.trace_log`). It follows section 4 of Niwa, Maeda and Yamaguchi
(IPSJ TACS 2005; a month of the web server log of the University of Tsukuba's media centre,
December 2003), which fitted three inverse CDFs to the log (``u`` uniform)::

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
from dataclasses import dataclass

import numpy as np

from cryptoffload.checks import check_int, check_positive
from cryptoffload.errors import ConfigError
from cryptoffload.workloads.client_population import ClientPopulation, assign_runs, draw_population
from cryptoffload.workloads.request_trace import MAX_CIPHERS, Trace

__all__ = [
    "InverseCdf",
    "RUN_LENGTH",
    "GAP",
    "RETURN_TIME",
    "CLIENT_MODELS",
    "generate_trace",
    "sample_inverse_cdf",
]

_ID_SPACE = 2**31
_ID_CHUNK = 1024


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
    n = _check_arguments(n, mean_size, max_gap, max_run, max_wait, n_ciphers, clients, population)
    gap_rng, run_rng, ret_rng, size_rng, id_rng, pop_seq, pick_rng = _streams(seed)
    if clients == "population" and population is None:
        pop_seed = pop_seq.bit_generator.seed_seq
        assert isinstance(pop_seed, np.random.SeedSequence), "a spawned generator's seed is a SeedSequence"
        population = draw_population(pop_seed, n_ciphers=int(n_ciphers))
    source = _source(n, seed, mean_size, n_ciphers, max_gap, max_run, max_wait, population)
    if n == 0:
        empty = np.empty(0)
        return Trace(empty, empty.astype(np.int64), empty.astype(np.int8), empty.astype(np.int64),
                     source, int(n_ciphers))
    time = np.empty(n)
    time[0] = 0.0
    np.cumsum(sample_inverse_cdf(gap_rng, GAP, n - 1, float(max_gap)), out=time[1:])
    # At most n runs; one run length (and one return time, or two client draws) per run, drawn up front.
    run_cap = float(n if max_run is None else max_run)
    run_len = np.maximum(1, np.floor(sample_inverse_cdf(run_rng, RUN_LENGTH, n, run_cap) + 0.5)).astype(np.int64)
    size = np.maximum(1, np.rint(size_rng.exponential(float(mean_size), n))).astype(np.int64)
    if population is not None:
        client, cipher = _population_clients(population, run_len, n, pick_rng)
    else:
        ret = sample_inverse_cdf(ret_rng, RETURN_TIME, n, float(max_gap)).tolist()
        client = _assign_clients(time, run_len.tolist(), ret, id_rng, float(max_wait))
        cipher = (client % n_ciphers).astype(np.int8)
    return Trace(time, client, cipher, size, source, int(n_ciphers))


def _check_arguments(n: int, mean_size: float, max_gap: float, max_run: int | None, max_wait: float,
                     n_ciphers: int, clients: str, population: ClientPopulation | None) -> int:
    """Refuse an argument out of range (one-line ConfigError); ``n`` as an int."""
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
    return n


def _streams(seed: int | None) -> list[np.random.Generator]:
    """One independent stream per random quantity (gaps, runs, returns, sizes, ids, the
    population, picks), so that changing how one is drawn leaves the others as they were."""
    try:
        root = np.random.default_rng(seed)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"seed must be a non-negative integer, got {seed!r}: {exc}") from None
    return root.spawn(7)


def _source(n: int, seed: int | None, mean_size: float, n_ciphers: int, max_gap: float, max_run: int | None,
            max_wait: float, population: ClientPopulation | None) -> str:
    """The call that makes this trace again, as the trace's ``source``."""
    if population is not None:
        who = f"population={population.source}"
    else:
        who = "clients='returns'" + (f", max_wait={max_wait!r}" if max_wait != math.inf else "")
    return (f"generate_trace(n={n}, seed={seed!r}, mean_size={mean_size!r}, n_ciphers={n_ciphers}, "
            f"max_gap={max_gap!r}, max_run={max_run!r}, {who})")


def _population_clients(population: ClientPopulation, run_len: np.ndarray, n: int,
                        pick_rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Each run's client drawn from the population (two uniform draws per run); the cipher is
    that client's."""
    n_runs = int(np.searchsorted(np.cumsum(run_len), n)) + 1
    who_run = assign_runs(population, pick_rng.random((n, 2))[:n_runs])
    client_idx = np.repeat(who_run, run_len[:n_runs])[:n]
    return population.ids[client_idx], population.cipher[client_idx].astype(np.int8)


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
