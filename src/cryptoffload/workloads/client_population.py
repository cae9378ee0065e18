"""The clients behind a web server's request log: how many, how active, which cipher each uses.

Why a population model: the fpga-reconfig paper (Niwa, Maeda and Yamaguchi, see
``cryptoffload.papers.PAPERS["fpga-reconfiguration"]``) generates requests from three inverse
CDFs fitted to a month of a university web log and lets a client's id modulo 10 pick its cipher,
but it never says how many clients there are or how unequal their activity is. Those two numbers
decide what a predictor can exploit: a few persistent heavy clients make the cipher mix skewed
and the same in every month (a table learnt from last month's history then knows this month's
favourite ciphers); many light clients make each month's mix a fresh draw.

Model. ``N`` clients; client ``k`` has an activity weight drawn from a Pareto law of shape
``alpha`` (``w = U**(-1/alpha)``, normalised to shares: the smaller ``alpha``, the more a few
clients dominate). Its id is a distinct random 31-bit integer and its cipher is the id modulo the
number of ciphers, uniform over ciphers as in the paper. The runs of the request stream (the
paper's Fa) are handed to clients in proportion to their shares, never to the client whose run
has just ended: Fa counts *maximal* runs, so two adjacent runs of one client would be one longer
run. A month of history and the evaluated month are two draws from one population: the server's
clients persist.

Fit. ``N`` and ``alpha`` are fitted to the paper's *inputs* only -- the same-client return times
against its Fc and the sorted cipher shares against its Table 7 -- never to its results
(Table 6); :mod:`cryptoffload.workloads.population_fit` does it and says how. The fitted values
are :data:`FITTED_CLIENTS` and :data:`FITTED_SHAPE`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from cryptoffload.errors import ConfigError

__all__ = [
    "ClientPopulation",
    "FITTED_CLIENTS",
    "FITTED_CLIENTS_RANGE",
    "FITTED_CLIENTS_RANGE_WHY",
    "FITTED_SHAPE",
    "FIT_PROVENANCE",
    "draw_population",
    "assign_runs",
]

#: Clients in the population, fitted by ``benchmarks/fit_client_population.py`` (grid N in
#: 1e3..3e5 x alpha in 0.8..2.5, 8 seeds of 200,000 requests; results in
#: ``benchmarks/results/client_population_fit.json``): the smallest N whose return times match Fc
#: within 0.005 of the best (KS 0.066 +- 0.001; the floor that Fb and Fc themselves set is 0.065)
#: and whose Table 7 distance is within one standard error of the best (0.230 +- 0.015). Fewer
#: clients come back in later runs too often for Fc (N = 3,000: KS 0.107).
FITTED_CLIENTS = 30_000
#: The range of :data:`FITTED_CLIENTS`: the smallest and largest N among the grid points the fit's
#: own rule admits (``population_fit.accepted`` on the same results file): 30,000 and 300,000, both
#: at shape 2.5 (100,000 lies between them).
FITTED_CLIENTS_RANGE = (30_000, 300_000)
FITTED_CLIENTS_RANGE_WHY = ("the smallest and largest client counts the fit's own rule admits on its grid (Fc "
                            "distance within 0.005 of the best, Table 7 distance within one standard error of the "
                            "best; benchmarks/results/client_population_fit.json): 30,000 and 300,000")
#: Pareto shape of client activity, fitted with :data:`FITTED_CLIENTS`. alpha <= 1 makes two to
#: five ciphers stand far above the rest (Table 7 distance 0.25-0.69), which Table 7 (nine
#: ciphers at 0.070-0.097) rules out; alpha = 1.5 misses Fc at N = 30,000 (KS 0.072). The
#: population is therefore *not* dominated by persistent heavy clients: the one cipher at 0.246
#: of Table 7 comes from the heavy tail of Fa (a single run of tens of thousands of requests).
FITTED_SHAPE = 2.5
FIT_PROVENANCE = ("fitted to the paper's inputs (its Fc return-time CDF and its Table 7 cipher mix), "
                  "not to its results; see cryptoffload.workloads.population_fit")

_ID_SPACE = 2**31


@dataclass(frozen=True, eq=False)
class ClientPopulation:
    """``share[k]`` of the runs go to client ``ids[k]``, who uses cipher ``cipher[k]``."""

    share: np.ndarray
    ids: np.ndarray
    cipher: np.ndarray
    n_ciphers: int
    source: str
    _cdf: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        share = np.asarray(self.share, dtype=np.float64)
        ids = np.asarray(self.ids, dtype=np.int64)
        cipher = np.asarray(self.cipher, dtype=np.int64)
        if share.ndim != 1 or share.size < 2:
            raise ConfigError(f"a client population needs at least 2 clients, got {share.size}")
        if ids.shape != share.shape or cipher.shape != share.shape:
            raise ConfigError("share, ids and cipher of a client population must have the same length")
        if not np.all(np.isfinite(share)) or np.any(share <= 0):
            raise ConfigError("client shares must be finite and positive")
        if np.unique(ids).size != ids.size:
            raise ConfigError("client ids must be distinct")
        if cipher.min() < 0 or cipher.max() >= self.n_ciphers:
            raise ConfigError(f"client ciphers must lie in 0..{self.n_ciphers - 1}")
        share = share / share.sum()
        for name, arr in (("share", share), ("ids", ids), ("cipher", cipher)):
            arr = arr.copy()
            arr.flags.writeable = False
            object.__setattr__(self, name, arr)
        cdf = np.cumsum(share)
        cdf[-1] = 1.0
        cdf.flags.writeable = False
        object.__setattr__(self, "_cdf", cdf)

    def __len__(self) -> int:
        return int(self.share.size)

    def pick(self, u: np.ndarray) -> np.ndarray:
        """Client indices for uniform draws ``u`` in [0, 1), each client with its share."""
        return np.minimum(np.searchsorted(self._cdf, u, side="right"), len(self) - 1)

    def cipher_share(self) -> np.ndarray:
        """Expected share of runs per cipher (what an infinitely long trace would show)."""
        return np.bincount(self.cipher, weights=self.share, minlength=self.n_ciphers)


def draw_population(seed: int | np.random.SeedSequence | None, n_clients: int = FITTED_CLIENTS,
                    activity_shape: float = FITTED_SHAPE, n_ciphers: int = 10) -> ClientPopulation:
    """``n_clients`` clients with Pareto(``activity_shape``) activity and ``id mod n_ciphers`` ciphers."""
    if isinstance(n_clients, bool) or not isinstance(n_clients, (int, np.integer)) or not 2 <= n_clients <= 10**7:
        raise ConfigError(f"n_clients must be an integer in 2..10,000,000, got {n_clients!r}")
    if isinstance(activity_shape, bool) or not isinstance(activity_shape, (int, float)) or not (
            np.isfinite(activity_shape) and activity_shape > 0):
        raise ConfigError(f"activity_shape must be a positive number, got {activity_shape!r}")
    rng = np.random.default_rng(seed)
    weight = (1.0 - rng.random(int(n_clients))) ** (-1.0 / float(activity_shape))
    ids = rng.choice(_ID_SPACE, size=int(n_clients), replace=False).astype(np.int64)
    return ClientPopulation(weight, ids, ids % n_ciphers, int(n_ciphers),
                            f"draw_population(n_clients={int(n_clients)}, activity_shape={activity_shape!r}, "
                            f"n_ciphers={n_ciphers})")


def assign_runs(population: ClientPopulation, draws: np.ndarray) -> np.ndarray:
    """Client index of each run from two uniform draws per run (``draws`` shape ``(runs, 2)``).

    The first draw picks a client by share; if that is the client whose run has just ended, the
    second draw picks again, and if that repeats too, the next client in index order takes the
    run. Two draws per run, taken row by row, keep a shorter trace a prefix of a longer one.
    """
    first = population.pick(draws[:, 0]).tolist()
    second = population.pick(draws[:, 1]).tolist()
    n_clients = len(population)
    out = np.empty(len(first), dtype=np.int64)
    prev = -1
    for j, c in enumerate(first):
        if c == prev:
            c = second[j]
            if c == prev:
                c = (c + 1) % n_clients
        out[j] = c
        prev = c
    return out
