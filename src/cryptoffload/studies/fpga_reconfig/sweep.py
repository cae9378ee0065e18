"""Running the fpga-reconfig study: one seed's traces, intervals and policy runs, and many seeds.

Split from :mod:`cryptoffload.studies.fpga_reconfig.study` (which builds the tables and writes the
result) because a seed's work is what runs in parallel processes: :func:`run_seed` is a
top-level function of its config and seed, with nothing shared between seeds but the files
they read.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from multiprocessing import get_context
from typing import Callable, Sequence, TypeVar

import numpy as np

from cryptoffload.checks import DURATION_MS, RATE_PER_S, SIZE_MB, check_bounded, check_int
from cryptoffload.errors import ConfigError
from cryptoffload.policies.interval_tuner import tune_intervals
from cryptoffload.policies.reconfig import INTERVAL_POLICIES, POLICIES, ReconfigPolicy, prepare_policies, run_policy
from cryptoffload.sim.reconfig import fast
from cryptoffload.sim.reconfig.platform import ReconfigPlatform, load_reconfig_platform
from cryptoffload.sim.reconfig.server import ServerCosts, simulate_simpy
from cryptoffload.studies.fpga_reconfig.paper import PAPER_RATES, PAPER_TABLE7
from cryptoffload.workloads.client_population import FITTED_CLIENTS, draw_population
from cryptoffload.workloads.population_fit import fc_distance, mix_distance
from cryptoffload.workloads.request_trace import Trace
from cryptoffload.workloads.trace_log import load_trace
from cryptoffload.workloads.web_trace import CLIENT_MODELS, generate_trace

T = TypeVar("T")

FULL_REQUESTS = 610_000
QUICK_REQUESTS = 61_000
MAX_REQUESTS = 100_000_000  # 160 times the paper's log; more would exhaust memory
MAX_RATE = 1e9  # requests/s
FULL_SEEDS, QUICK_SEEDS = 24, 4
MB = 1024 * 1024
DIST_POLICIES = ("software", "hardware", "nopredict", "predict", "predict-5mb", "fix5", "fix-all", "oracle")
"""Policies run on every seed (the distributions); the others run on the first seed only."""
TOLERANCE = 0.25  # differences from the paper's headline ratios above this get a note
INTERVALS = ("tuned", "fixed")


@dataclass(kw_only=True)
class FpgaReconfigConfig:
    """Everything a run depends on; validated before anything is computed or written."""

    quick: bool = False
    seed: int = 1
    requests: int | None = None
    rates: Sequence[float] | None = None
    policies: Sequence[str] = tuple(POLICIES)
    profile: str = "virtex2_ciphers"
    sw_profile: str | None = None
    reconfig_ms: float | None = None
    trace: str | None = None
    history: str | None = None
    history_requests: int | None = None
    window_mb: float = 5.0
    interval: str = "tuned"
    decay: float = 0.9999
    engine: str = "fast"
    seeds: int | None = None
    workers: int | None = None
    clients: str = "population"
    readings: bool = True
    n_clients: int = FITTED_CLIENTS  # the fitted population's size; the bands move it over its range

    def validate(self) -> None:
        if self.requests is not None:
            check_int("--requests", self.requests, minimum=2, maximum=MAX_REQUESTS)
        if self.history_requests is not None:
            check_int("--history-requests", self.history_requests, minimum=4, maximum=MAX_REQUESTS)
        for r in self.rates or ():
            check_bounded("--rates", r, RATE_PER_S, "requests/s", maximum=MAX_RATE)
        for p in self.policies:
            if p not in POLICIES:
                raise ConfigError(f"unknown policy '{p}' (known: {', '.join(POLICIES)})")
        if not self.policies:
            raise ConfigError("no policy selected")
        check_bounded("--window-mb", self.window_mb, SIZE_MB, "MB")
        if self.interval not in INTERVALS:
            raise ConfigError(f"unknown interval choice '{self.interval}' (known: {', '.join(INTERVALS)})")
        if self.engine not in ("fast", "simpy"):
            raise ConfigError(f"unknown engine '{self.engine}' (known: fast, simpy)")
        if self.reconfig_ms is not None:
            check_bounded("--reconfig-ms", self.reconfig_ms, DURATION_MS, "ms", allow_zero=True)
        if not (0 < self.decay <= 1):
            raise ConfigError(f"--decay must be in (0, 1], got {self.decay}")
        for name in ("seeds", "workers"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 1000):
                raise ConfigError(f"--{name} must be an integer in 1..1000, got {v!r}")
        if self.clients not in CLIENT_MODELS:
            raise ConfigError(f"unknown client model '{self.clients}' (known: {', '.join(CLIENT_MODELS)})")

    @property
    def n_requests(self) -> int:
        return self.requests or (QUICK_REQUESTS if self.quick else FULL_REQUESTS)

    @property
    def n_seeds(self) -> int:
        if self.trace:
            return 1  # a user's log is one draw; there is nothing to resample
        return self.seeds or (QUICK_SEEDS if self.quick else FULL_SEEDS)

    @property
    def n_workers(self) -> int:
        return self.workers or max(1, min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                                         else (os.cpu_count() or 1), self.n_seeds))


@dataclass
class PolicyRun:
    """Outcome of one policy at one rate (plain numbers for tables)."""

    rate: float
    policy: str
    p50: float
    p90: float
    p99: float
    mean: float
    load_factor: float
    fpga_share: float
    n_reconfig: int
    window: float
    enc_time_by_cipher: np.ndarray = field(repr=False)


@dataclass
class SeedOutcome:
    """Everything one seed contributes: its runs, the intervals chosen, its cipher mix."""

    seed: int
    runs: list[PolicyRun]
    windows: dict[float, float]
    mix: np.ndarray
    fc_ks: float
    mix_l1: float


def _summarise(rate: float, policy: str, res: fast.KernelResult, trace_time: np.ndarray,
               cipher: np.ndarray, k: int, window: float) -> PolicyRun:
    lat = res.latency
    p50, p90, p99 = np.percentile(lat, [50, 90, 99])
    span = float(trace_time[-1] - trace_time[0]) if len(trace_time) > 1 else float("nan")
    enc = np.bincount(cipher, weights=res.service, minlength=k)
    return PolicyRun(rate, policy, float(p50), float(p90), float(p99), float(lat.mean()),
                     res.sw_busy / span if span > 0 else float("nan"), float(res.on_fpga.mean()),
                     res.n_reconfig, window, enc)


def simulate(trace_time: np.ndarray, trace: Trace, platform: ReconfigPlatform, policy: ReconfigPolicy,
             engine: str = "fast") -> fast.KernelResult:
    if engine == "simpy":
        costs = ServerCosts(platform.sw_seconds_per_byte, platform.fpga_seconds_per_byte,
                            platform.packet_overhead, platform.reconfig_time)
        return simulate_simpy(trace_time, np.asarray(trace.cipher, dtype=np.int64),
                              np.asarray(trace.size, dtype=np.float64), costs, policy)
    return run_policy(policy, trace_time, trace, platform)


def sweep(cfg: FpgaReconfigConfig, trace: Trace, history: Trace, platform: ReconfigPlatform,
          rates: Sequence[float | None], policies: Sequence[str] | None = None, seed: int | None = None,
          advance: Callable[[str], None] | None = None) -> tuple[list[PolicyRun], dict[float, float]]:
    """Every policy at every rate (``None`` = the trace's own timing); returns the runs and the
    prediction interval used at each rate.

    With ``cfg.interval == "tuned"`` the interval-based policies use, at each rate, the interval
    chosen on the history (:func:`tune_intervals`), the Oracle included: as in the paper, the
    Oracle is Predict with a perfect prediction of the same interval.
    """
    policies = list(cfg.policies if policies is None else policies)
    seed = cfg.seed if seed is None else seed
    shown = {r: (r if r is not None else trace.offered_rate) for r in rates}
    if cfg.interval == "tuned":
        hist_rates = [shown[r] * (history.offered_rate / trace.offered_rate) if r is None else r for r in rates]
        tuned = tune_intervals(history, platform, hist_rates, seed)
        window = {r: tuned[float(h)].window for r, h in zip(rates, hist_rates)}
    else:
        window = {r: cfg.window_mb * MB for r in rates}
    prepared: dict[float, dict[str, ReconfigPolicy]] = {}

    def policy_for(name: str, w: float) -> ReconfigPolicy:
        key = w if name in INTERVAL_POLICIES else -1.0
        if key not in prepared:
            prepared[key] = {}
        if name not in prepared[key]:
            prepared[key].update(prepare_policies([name], trace, history, platform, seed, w, cfg.decay))
        return prepared[key][name]

    cipher = np.asarray(trace.cipher, dtype=np.int64)
    runs: list[PolicyRun] = []
    for rate in rates:
        tr = trace if rate is None else trace.rescaled(rate)
        t = np.asarray(tr.time, dtype=np.float64)
        for name in policies:
            w = window[rate]
            pol = policy_for(name, w)
            res = simulate(t, tr, platform, pol, cfg.engine)
            runs.append(_summarise(shown[rate], name, res, t, cipher, platform.k, pol.fixed_window or w))
            if advance:
                advance(f"{name} @ {shown[rate]:g} req/s")
    return runs, {float(shown[r]): float(w) for r, w in window.items()}


def traces_for_seed(cfg: FpgaReconfigConfig, seed: int) -> tuple[Trace, Trace, list[str]]:
    """The evaluated trace and its history: a user's logs, or two months of one generated server."""
    notes = []
    if cfg.trace:
        trace = load_trace(cfg.trace)
        if trace.bad_lines:
            notes.append(f"{cfg.trace}: {trace.bad_lines} bad line(s) skipped, e.g. {trace.bad_examples[0]}")
        if cfg.requests:
            trace = trace.head(cfg.requests)
    else:
        trace = None
    if cfg.history:
        history = load_trace(cfg.history)
        if history.bad_lines:
            notes.append(f"{cfg.history}: {history.bad_lines} bad line(s) skipped, e.g. {history.bad_examples[0]}")
    else:
        history = None
    n_hist = cfg.history_requests or (len(trace) if trace is not None else cfg.n_requests)
    if cfg.clients == "population":
        # The same clients in both months: the history never contains the evaluated requests.
        pop = draw_population(np.random.SeedSequence([seed, 2005]), cfg.n_clients)
        trace = trace if trace is not None else generate_trace(cfg.n_requests, seed=seed, population=pop)
        history = history if history is not None else generate_trace(n_hist, seed=seed + 1_000_003, population=pop)
    else:
        trace = trace if trace is not None else generate_trace(cfg.n_requests, seed=seed, clients="returns")
        history = history if history is not None else generate_trace(n_hist, seed=seed + 1_000_003, clients="returns")
    if len(trace) < 2 or len(history) < 4:
        raise ConfigError("the trace needs at least 2 requests and the history at least 4")
    return trace, history, notes


def _platform(cfg: FpgaReconfigConfig) -> ReconfigPlatform:
    return load_reconfig_platform(cfg.profile, reconfig_time=None if cfg.reconfig_ms is None else cfg.reconfig_ms / 1e3)


def _rates(cfg: FpgaReconfigConfig) -> list[float | None]:
    if cfg.rates:
        return [float(r) for r in cfg.rates]
    if cfg.trace:
        return [None]
    return [float(r) for r in PAPER_RATES]


def run_seed(cfg: FpgaReconfigConfig, seed: int, policies: Sequence[str],
             advance: Callable[[str], None] | None = None) -> SeedOutcome:
    """One seed of the study: population, both traces, intervals, every policy at every rate."""
    platform = _platform(cfg)
    trace, history, _ = traces_for_seed(cfg, seed)
    runs, windows = sweep(cfg, trace, history, platform, _rates(cfg), policies, seed, advance)
    target = [PAPER_TABLE7[c] for c in platform.ciphers] if platform.k == len(PAPER_TABLE7) else None
    return SeedOutcome(seed, runs, windows, trace.cipher_mix(), fc_distance(trace),
                       mix_distance(trace, target) if target else float("nan"))


def _seed_job(args: tuple[FpgaReconfigConfig, int, tuple[str, ...]]) -> SeedOutcome:
    return run_seed(*args)


def run_seeds(cfg: FpgaReconfigConfig, seeds: Sequence[int], policies: Sequence[str],
              advance: Callable[[str], None] | None = None,
              meanwhile: Callable[[], T] | None = None) -> tuple[list[SeedOutcome], T | None]:
    """:func:`run_seed` for each seed in ``cfg.n_workers`` processes (in this one when 1), and
    ``meanwhile()`` in this process while they run; returns the outcomes in seed order and
    what ``meanwhile`` returned."""
    workers = min(cfg.n_workers, len(seeds))
    if workers <= 1:
        side = meanwhile() if meanwhile else None
        out = []
        for s in seeds:
            out.append(run_seed(cfg, s, policies))
            if advance:
                advance(f"seed {s}")
        return out, side
    done: dict[int, SeedOutcome] = {}
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        futures = {pool.submit(_seed_job, (cfg, s, tuple(policies))): s for s in seeds}
        side = meanwhile() if meanwhile else None
        for fut in as_completed(futures):
            done[futures[fut]] = fut.result()
            if advance:
                advance(f"seed {futures[fut]}")
    return [done[s] for s in seeds], side
