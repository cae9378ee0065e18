"""Study ``fpga-reconfig``: FPGA reconfiguration hidden by overlap and request prediction.

Seed 002 (Niwa, Maeda, Yamaguchi, IPSJ TACS 2005): a web server encrypts each requested file
with its client's cipher (one of 10) and may offload it to a two-slot Virtex-II FPGA whose full
reconfiguration takes ~55-60 ms. We rebuild its request generator, its platform (Table 2) and
its seven policies, add three it names as future work, and print its Table 6 (p90 latency
relative to Oracle), Table 7 (cipher mix), Table 8 (encryption-time reduction vs software) and
Fig. 7 (host load factor) beside ours, plus p50/p99, which the paper lacks.

Everything here is *simulated* (no FPGA on this machine); only the optional "this machine"
software throughput is *measured* (``cryptoffload calibrate ciphers``).
"""

from __future__ import annotations

import math
import time as _time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from cryptoffload import __version__
from cryptoffload.checks import parse_floats
from cryptoffload.errors import ConfigError
from cryptoffload.machine import machine_info
from cryptoffload.papers import PAPERS
from cryptoffload.policies import ngram
from cryptoffload.policies.reconfig import (
    BEYOND_POLICIES,
    PAPER_POLICIES,
    POLICIES,
    PolicyContext,
    ReconfigPolicy,
    make_policy,
)
from cryptoffload.report.plots import line_plot
from cryptoffload.report.result import StudyResult, Table, write_result
from cryptoffload.sim import reconfig_fast as fast
from cryptoffload.sim.reconfig_platform import ReconfigPlatform, load_reconfig_platform
from cryptoffload.sim.reconfig_server import ServerCosts, simulate_simpy
from cryptoffload.studies.registry import Option, ReportContext, ReportRun, as_str, names, register_study
from cryptoffload.workloads.web_trace import Trace, generate_trace, load_trace

NAME = "fpga-reconfig"
TITLE = "FPGA reconfiguration hidden by overlap and request prediction (seed 002)"
PAPER = ("Niwa, Maeda, Yamaguchi: A Method of Reducing Reconfiguration Overhead of an FPGA-based "
         "Encryption Communication System by Predicting the Use of Encryption Algorithm, IPSJ TACS 2005")

PAPER_RATES = (10, 100, 200, 500, 700, 1000, 2000, 4000, 10000, 20000)
FULL_REQUESTS = 610_000
QUICK_REQUESTS = 61_000

# Table 6: p90 latency relative to Oracle; last value is Oracle's p90 in seconds. The row the
# paper prints as "50" sits between 500 and 1000 req/s; we read it as 700 (see the docs page).
PAPER_TABLE6 = {
    10: (3.70, 118, 1.17, 1.00, 1.50, 0.78, 0.000508),
    100: (12.0, 19700, 1.29, 1.03, 1.90, 0.59, 0.000914),
    200: (66.6, 313000, 2.02, 1.16, 3.67, 0.33, 0.00249),
    500: (62.1, 25900, 3.00, 1.37, 10.3, 0.20, 0.0934),
    700: (85.2, 4900, 2.74, 1.31, 7.95, 0.33, 0.569),
    1000: (94.9, 1570, 3.14, 1.24, 6.63, 0.30, 1.89),
    2000: (12.9, 78.1, 2.43, 1.50, 2.70, 0.13, 0.416),
    4000: (3.30, 19.0, 1.34, 1.12, 1.40, 0.34, 0.0178),
    10000: (2.57, 13.3, 1.23, 1.08, 1.20, 0.55, 0.0260),
    20000: (2.07, 12.2, 1.21, 1.08, 1.20, 0.59, 0.0288),
}
PAPER_T6_POLICIES = ("software", "hardware", "nopredict", "predict", "fix5", "fix-all")
# Headline averages as the paper's text states them (the mean of its Table 6 column for
# Nopredict is 1.96, not 2.01).
PAPER_MEAN_PREDICT, PAPER_MEAN_NOPREDICT = 1.18, 2.01
# Table 7: share of requests per cipher in the paper's generated trace.
PAPER_TABLE7 = {"aes-ecb": 0.0911, "des-ecb": 0.0697, "des-cbc": 0.0886, "3des-ecb": 0.0765,
                "3des-cbc": 0.0907, "serpent": 0.0786, "twofish": 0.2463, "camellia": 0.0706,
                "rc6-ecb": 0.0967, "aes-cbc": 0.0848}
# Table 8: mean encryption-time reduction vs Software, % (Nopredict, Predict, Oracle).
PAPER_TABLE8 = {"rc6-ecb": (23.0, 27.9, 31.3), "camellia": (58.8, 61.6, 64.9),
                "des-ecb": (60.8, 72.9, 72.7), "des-cbc": (46.0, 53.3, 55.0),
                "aes-ecb": (70.5, 77.4, 78.5), "aes-cbc": (40.3, 42.1, 42.9),
                "3des-ecb": (49.6, 68.8, 72.0), "3des-cbc": (21.9, 25.5, 26.3),
                "serpent": (19.4, 28.2, 36.2), "twofish": (77.4, 71.9, 73.0)}
PAPER_TABLE8_TOTAL = (47.6, 53.4, 55.1)
T8_POLICIES = ("nopredict", "predict", "oracle", "predict-online", "predict-3gram", "parallel")
TOLERANCE = 0.25  # differences from the paper's headline ratios above this get a note


@dataclass
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
    decay: float = 0.9999
    engine: str = "fast"

    def validate(self) -> None:
        if self.requests is not None and self.requests < 2:
            raise ConfigError(f"--requests must be at least 2, got {self.requests}")
        if self.history_requests is not None and self.history_requests < 2:
            raise ConfigError(f"--history-requests must be at least 2, got {self.history_requests}")
        for r in self.rates or ():
            if not (isinstance(r, (int, float)) and math.isfinite(r) and r > 0):
                raise ConfigError(f"rate must be a positive number of requests/s, got {r}")
        for p in self.policies:
            if p not in POLICIES:
                raise ConfigError(f"unknown policy '{p}' (known: {', '.join(POLICIES)})")
        if not self.policies:
            raise ConfigError("no policy selected")
        if self.window_mb <= 0 or not math.isfinite(self.window_mb):
            raise ConfigError(f"--window-mb must be positive, got {self.window_mb}")
        if self.engine not in ("fast", "simpy"):
            raise ConfigError(f"unknown engine '{self.engine}' (known: fast, simpy)")
        if self.reconfig_ms is not None and not (self.reconfig_ms >= 0 and math.isfinite(self.reconfig_ms)):
            raise ConfigError(f"--reconfig-ms must be a non-negative number, got {self.reconfig_ms}")
        if not (0 < self.decay <= 1):
            raise ConfigError(f"--decay must be in (0, 1], got {self.decay}")

    @property
    def n_requests(self) -> int:
        return self.requests or (QUICK_REQUESTS if self.quick else FULL_REQUESTS)


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
    enc_time_by_cipher: np.ndarray = field(repr=False)


def _summarise(rate: float, policy: str, res: fast.KernelResult, trace_time: np.ndarray,
               cipher: np.ndarray, k: int) -> PolicyRun:
    lat = res.latency
    p50, p90, p99 = np.percentile(lat, [50, 90, 99])
    span = float(trace_time[-1] - trace_time[0]) if len(trace_time) > 1 else float("nan")
    enc = np.bincount(cipher, weights=res.service, minlength=k)
    return PolicyRun(rate, policy, float(p50), float(p90), float(p99), float(lat.mean()),
                     res.sw_busy / span if span > 0 else float("nan"), float(res.on_fpga.mean()),
                     res.n_reconfig, enc)


def prepare_policies(names: Sequence[str], trace: Trace, history: Trace, platform: ReconfigPlatform,
                     seed: int, window: float, decay: float) -> dict[str, ReconfigPolicy]:
    """Predictions depend on the request sequence only, so they are computed once per trace
    and reused at every rate."""
    cipher = np.asarray(trace.cipher, dtype=np.int64)
    size = np.asarray(trace.size, dtype=np.int64)
    states = ngram.interval_states(cipher, size, platform.k, window)
    ctx = PolicyContext(np.asarray(history.cipher, dtype=np.int64), np.asarray(history.size, dtype=np.int64),
                        cipher, size, platform.slices_pct, seed, platform.k, states, window)
    out = {}
    for name in names:
        pol = make_policy(name)
        if name == "predict-online":
            pol.decay = decay  # type: ignore[attr-defined]
        pol.prepare(ctx)
        out[name] = pol
    return out


def simulate(trace_time: np.ndarray, trace: Trace, platform: ReconfigPlatform, policy: ReconfigPolicy,
             engine: str = "fast") -> fast.KernelResult:
    cipher = np.asarray(trace.cipher, dtype=np.int64)
    size = np.asarray(trace.size, dtype=np.float64)
    if engine == "simpy":
        costs = ServerCosts(platform.sw_seconds_per_byte, platform.fpga_seconds_per_byte,
                            platform.packet_overhead, platform.reconfig_time)
        return simulate_simpy(trace_time, cipher, size, costs, policy)
    return fast.run_kernel(trace_time, cipher, size, platform.sw_seconds_per_byte,
                           platform.fpga_seconds_per_byte, platform.packet_overhead,
                           platform.reconfig_time, **policy.kernel_args())


def sweep(cfg: FpgaReconfigConfig, trace: Trace, history: Trace, platform: ReconfigPlatform,
          rates: Sequence[float | None], advance: Callable[[str], None] | None = None) -> list[PolicyRun]:
    """Every policy at every rate (``None`` = the trace's own timing)."""
    policies = prepare_policies(cfg.policies, trace, history, platform, cfg.seed,
                                cfg.window_mb * 1024 * 1024, cfg.decay)
    cipher = np.asarray(trace.cipher, dtype=np.int64)
    runs = []
    for rate in rates:
        tr = trace if rate is None else trace.rescaled(rate)
        t = np.asarray(tr.time, dtype=np.float64)
        shown = rate if rate is not None else tr.offered_rate
        for name, pol in policies.items():
            res = simulate(t, tr, platform, pol, cfg.engine)
            runs.append(_summarise(shown, name, res, t, cipher, platform.k))
            if advance:
                advance(f"{name} @ {shown:g} req/s")
    return runs


def _load_traces(cfg: FpgaReconfigConfig) -> tuple[Trace, Trace, list[str]]:
    notes = []
    if cfg.trace:
        trace = load_trace(cfg.trace)
        if trace.bad_lines:
            notes.append(f"{cfg.trace}: {trace.bad_lines} bad line(s) skipped, e.g. {trace.bad_examples[0]}")
        if cfg.requests:
            trace = trace.head(cfg.requests)
    else:
        trace = generate_trace(cfg.n_requests, seed=cfg.seed)
    if cfg.history:
        history = load_trace(cfg.history)
        if history.bad_lines:
            notes.append(f"{cfg.history}: {history.bad_lines} bad line(s) skipped, e.g. {history.bad_examples[0]}")
    else:
        # The paper built its table from a month of real log; we use a generated trace with
        # another seed (never the evaluated trace itself, which would leak the future).
        history = generate_trace(cfg.history_requests or len(trace), seed=cfg.seed + 1_000_003)
    if len(trace) < 2 or len(history) < 2:
        raise ConfigError("the trace and the history need at least 2 requests each")
    return trace, history, notes


def _rates(cfg: FpgaReconfigConfig) -> list[float | None]:
    if cfg.rates:
        return [float(r) for r in cfg.rates]
    if cfg.trace:
        return [None]
    return [float(r) for r in PAPER_RATES]


def _by(runs: list[PolicyRun]) -> dict[tuple[float, str], PolicyRun]:
    return {(r.rate, r.policy): r for r in runs}


def build_tables(result: StudyResult, runs: list[PolicyRun], platform: ReconfigPlatform, trace: Trace,
                 policies: Sequence[str]) -> dict[str, float]:
    """Fill ``result`` with the paper's tables beside ours; return headline numbers."""
    by = _by(runs)
    rates = sorted({r.rate for r in runs})
    have_oracle = "oracle" in policies
    paper_rates = set(PAPER_RATES)
    headline: dict[str, float] = {}

    # --- Table 6: p90 relative to Oracle -------------------------------------------------------
    if have_oracle:
        rel_pols = [p for p in policies if p != "oracle"]
        cols = ["rate"] + rel_pols + ["oracle_p90_s"]
        rows, paper = [], []
        for rate in rates:
            o = by[(rate, "oracle")].p90
            rows.append([rate] + [by[(rate, p)].p90 / o for p in rel_pols] + [o])
            if rate in paper_rates:
                pr = PAPER_TABLE6[int(rate)]
                paper.append([rate] + [pr[PAPER_T6_POLICIES.index(p)] if p in PAPER_T6_POLICIES else None
                                       for p in rel_pols] + [pr[6]])
        result.add(Table("table6_p90_vs_oracle", "Table 6 — p90 latency relative to Oracle (last column: Oracle p90, s)",
                         cols, rows, "simulated", paper or None,
                         note="Policies after 'fix-all' go beyond the paper (its section 7.2)."))
        means = {p: float(np.mean([by[(r, p)].p90 / by[(r, "oracle")].p90 for r in rates])) for p in rel_pols}
        mrows, mpaper = [], []
        for p in rel_pols:
            mrows.append([p, means[p]])
            if p in PAPER_T6_POLICIES:
                pv = {"predict": PAPER_MEAN_PREDICT, "nopredict": PAPER_MEAN_NOPREDICT}.get(
                    p, float(np.mean([PAPER_TABLE6[r][PAPER_T6_POLICIES.index(p)] for r in PAPER_RATES])))
                mpaper.append([p, pv])
        result.add(Table("mean_p90_vs_oracle", "Mean over rates of p90 / Oracle p90", ["policy", "mean_p90_rel_oracle"],
                         mrows, "simulated", mpaper,
                         note="Paper: Predict 1.18 and Nopredict 2.01 from its text; other policies: mean of its Table 6 column."))
        headline.update({f"mean_rel_{p}": v for p, v in means.items()})

    # --- p50 / p99 in ms (the paper reports p90 only) ------------------------------------------
    for q in ("p50", "p90", "p99"):
        rows = [[rate] + [getattr(by[(rate, p)], q) * 1e3 for p in policies] for rate in rates]
        paper = None
        if q == "p90" and have_oracle:
            paper = []
            for rate in rates:
                if rate in paper_rates:
                    pr = PAPER_TABLE6[int(rate)]
                    paper.append([rate] + [pr[PAPER_T6_POLICIES.index(p)] * pr[6] * 1e3 if p in PAPER_T6_POLICIES
                                           else (pr[6] * 1e3 if p == "oracle" else None) for p in policies])
        result.add(Table(f"latency_{q}_ms", f"{q} latency (ms) per policy and rate", ["rate"] + list(policies),
                         rows, "simulated", paper or None))

    # --- Fig. 7: load factor -------------------------------------------------------------------
    rows = [[rate] + [by[(rate, p)].load_factor for p in policies] for rate in rates]
    result.add(Table("fig7_load_factor", "Fig. 7 — host load factor (software encryption time / arrival span)",
                     ["rate"] + list(policies), rows, "simulated",
                     note="> 1: the host cannot keep up by encrypting alone."))

    # --- Table 7: cipher mix -------------------------------------------------------------------
    mix = np.bincount(np.asarray(trace.cipher, dtype=np.int64), minlength=platform.k) / len(trace)
    result.add(Table("table7_cipher_mix", "Table 7 — share of requests per cipher",
                     ["cipher", "share"], [[platform.display(i), float(mix[i])] for i in range(platform.k)],
                     "simulated", [[platform.display(i), PAPER_TABLE7[c]] for i, c in enumerate(platform.ciphers)]))

    # --- Table 8: encryption-time reduction vs software, averaged over rates --------------------
    t8 = [p for p in T8_POLICIES if p in policies]
    if "software" in policies and t8:
        red = {p: np.mean([1.0 - by[(r, p)].enc_time_by_cipher / by[(r, "software")].enc_time_by_cipher
                           for r in rates], axis=0) * 100 for p in t8}
        rows = [[platform.display(i)] + [float(red[p][i]) for p in t8] for i in range(platform.k)]
        rows.append(["mean over ciphers"] + [float(np.nanmean(red[p])) for p in t8])
        pcols = ("nopredict", "predict", "oracle")
        paper = [[platform.display(i)] + [PAPER_TABLE8[c][pcols.index(p)] if p in pcols else None for p in t8]
                 for i, c in enumerate(platform.ciphers)]
        paper.append(["mean over ciphers"] + [PAPER_TABLE8_TOTAL[pcols.index(p)] if p in pcols else None for p in t8])
        result.add(Table("table8_enc_time_reduction_pct", "Table 8 — encryption-time reduction vs Software (%), mean over rates",
                         ["cipher"] + t8, rows, "simulated", paper,
                         note="Encryption time only (no queueing); the paper's 'Total Average' row is shown as the mean over ciphers."))
    return headline


def check_claims(result: StudyResult, runs: list[PolicyRun], policies: Sequence[str]) -> dict[str, bool]:
    """The orderings the paper reports; violations become notes, outcomes go in result.extra."""
    by = _by(runs)
    rates = sorted({r.rate for r in runs})
    claims: dict[str, bool] = {}
    need = {"fix-all", "oracle", "predict", "nopredict"}
    if need <= set(policies):
        bad = [r for r in rates if r > 100 and not (
            by[(r, "fix-all")].p90 <= by[(r, "oracle")].p90 <= by[(r, "predict")].p90 < by[(r, "nopredict")].p90)]
        claims["ordering_above_100"] = not bad
        if bad:
            detail = "; ".join(
                f"{r:g} req/s: " + ", ".join(f"{p} {by[(r, p)].p90 * 1e3:.3g} ms" for p in ("fix-all", "oracle", "predict", "nopredict"))
                for r in bad)
            result.notes.append(f"Fix-All <= Oracle <= Predict < Nopredict (p90) does not hold at: {detail}")
    if "hardware" in policies:
        low = [r for r in rates if r <= 100]
        ok = all(by[(r, "hardware")].p90 >= 10 * max(by[(r, p)].p90 for p in policies if p != "hardware") for r in low)
        claims["hardware_worst_low_rates"] = ok if low else True
        if low and not ok:
            result.notes.append("Hardware is not the worst by an order of magnitude at every rate <= 100 req/s")
    return claims


def _calibrated_ciphers(ctx: ReportContext) -> str:
    from cryptoffload.sim.calibrate import calibrate_ciphers

    return str(calibrate_ciphers(ctx.out / "calibration" / "ciphers.toml", seconds=0.3 if ctx.full else 0.05,
                                 progress=True))


@register_study(
    name=NAME, title=TITLE, paper=PAPERS["fpga-reconfiguration"], config=FpgaReconfigConfig,
    summary="FPGA reconfiguration hidden by overlap and request prediction.",
    quick="Reduced run (61,000 requests per rate), under 30 s.", seed="Seed of the generated traces (simulation only).",
    options=[
        Option("--rates", "rates", help="Comma-separated request rates (req/s).", convert=parse_floats),
        Option("--policies", "policies", help="Comma-separated policies (default: all).", convert=names),
        Option("--requests", "requests", int, help="Requests per rate (default 610,000; quick 61,000)."),
        Option("--profile", "profile", str, "virtex2_ciphers", "Platform profile (name or TOML path)."),
        Option("--sw-profile", "sw_profile",
               help="Measured software profile (from `calibrate ciphers`) for a 'this machine' table."),
        Option("--reconfig-ms", "reconfig_ms", float,
               help="Override reconfiguration time (default: from bitstream size and clock)."),
        Option("--trace", "trace", Path, help="Replay a log (CSV time,client,bytes or Common Log Format).",
               convert=as_str),
        Option("--history", "history", Path, help="History log for the n-gram tables (default: generated, other seed).",
               convert=as_str),
        Option("--window-mb", "window_mb", float, 5.0, "Prediction interval in MB (paper: 5)."),
        Option("--engine", "engine", str, "fast", "fast (numba) or simpy (reference model, slow)."),
    ],
    # the 'this machine' table needs this machine's cipher throughput, measured first
    report=lambda spec: [ReportRun(NAME, lambda ctx: spec.default_config(
        ctx, sw_profile=ctx.artifact("ciphers-profile", _calibrated_ciphers) if ctx.calibrate else None))],
)
def run(cfg: FpgaReconfigConfig, out: str | Path, progress: Callable[[int], Callable[[str], None]] | None = None) -> StudyResult:
    """Run the study and write ``out``; returns the result (also written as result.json)."""
    cfg.validate()
    started = _time.perf_counter()
    platform = load_reconfig_platform(cfg.profile, reconfig_time=None if cfg.reconfig_ms is None else cfg.reconfig_ms / 1e3)
    measured = load_reconfig_platform(cfg.profile, cfg.sw_profile, platform.reconfig_time) if cfg.sw_profile else None
    trace, history, notes = _load_traces(cfg)
    rates = _rates(cfg)
    policies = list(cfg.policies)
    this_machine_pols = [p for p in ("software", "predict", "parallel", "fix-all") if p in policies]
    total = len(rates) * len(policies) + (len(rates) * len(this_machine_pols) if measured else 0)
    advance = progress(total) if progress else None

    runs = sweep(cfg, trace, history, platform, rates, advance)
    result = StudyResult(NAME, TITLE, "quick" if cfg.quick else "full", cfg.seed, __version__, machine_info(),
                         profiles=list(platform.profiles), paper=PAPER, notes=notes)
    result.extra["config"] = {"requests": len(trace), "history_requests": len(history), "rates": [r.rate for r in runs[:: len(policies)]],
                              "policies": policies, "reconfig_time_s": platform.reconfig_time,
                              "window_bytes": cfg.window_mb * 1024 * 1024, "engine": cfg.engine,
                              "trace": trace.source, "history": history.source}
    heads = build_tables(result, runs, platform, trace, policies)
    result.extra["claims"] = check_claims(result, runs, policies)

    if measured is not None:
        mruns = sweep(FpgaReconfigConfig(**{**cfg.__dict__, "policies": this_machine_pols}), trace, history,
                      measured, rates, advance)
        mby = _by(mruns)
        mrates = sorted({r.rate for r in mruns})
        result.add(Table("this_machine_p90_ms",
                         "This machine's CPU (measured software throughput) with the cited Virtex-II board: p90 (ms)",
                         ["rate"] + this_machine_pols + [f"{p}_fpga_share" for p in this_machine_pols if p != "software"],
                         [[r] + [mby[(r, p)].p90 * 1e3 for p in this_machine_pols]
                          + [mby[(r, p)].fpga_share for p in this_machine_pols if p != "software"] for r in mrates],
                         "simulated",
                         note=f"Simulated with software throughput measured here ({', '.join(measured.profiles[1:])})"
                              + (f"; {', '.join(measured.carried)} not implemented here, cited value kept" if measured.carried else "")))
        result.add(Table("software_throughput_mbps", "Software throughput (Mbps): this machine vs the paper's Pentium 4",
                         ["cipher", "software_mbps"],
                         [[platform.display(i), None if c in measured.carried else float(measured.sw_mbps[i])]
                          for i, c in enumerate(platform.ciphers)], "measured",
                         [[platform.display(i), float(platform.sw_mbps[i])] for i in range(platform.k)],
                         note="Paper column: Table 2 (Pentium 4 2.2 GHz). Ours: measured on this machine, one core."))
        result.profiles += measured.profiles[1:]

    _headline(result, heads, runs, policies)
    figures = _figures(runs, policies, platform)
    result.elapsed_s = _time.perf_counter() - started
    write_result(result, out, figures)
    return result


def _headline(result: StudyResult, heads: dict[str, float], runs: list[PolicyRun], policies: Sequence[str]) -> None:
    if "mean_rel_predict" in heads and "mean_rel_nopredict" in heads:
        pr, npr = heads["mean_rel_predict"], heads["mean_rel_nopredict"]
        result.headline.append(f"Predict/Oracle p90 averaged over rates: {pr:.2f} (paper 1.18); "
                               f"Nopredict/Oracle: {npr:.2f} (paper 2.01) — simulated")
        for name, ours, paper in (("Predict", pr, PAPER_MEAN_PREDICT), ("Nopredict", npr, PAPER_MEAN_NOPREDICT)):
            if abs(ours / paper - 1) > TOLERANCE:
                result.notes.append(f"{name}/Oracle mean {ours:.2f} differs from the paper's {paper} by more than "
                                    f"{TOLERANCE:.0%}: see docs/studies/fpga-reconfig.md")
    beyond = [p for p in BEYOND_POLICIES if f"mean_rel_{p}" in heads]
    if beyond and "mean_rel_predict" in heads:
        best = min(beyond, key=lambda p: heads[f"mean_rel_{p}"])
        result.headline.append(f"Best beyond-the-paper policy: {best}, mean p90/Oracle {heads[f'mean_rel_{best}']:.2f} "
                               f"vs Predict {heads['mean_rel_predict']:.2f}")
        result.extra["best_beyond"] = best
        result.extra["beyond_beats_predict"] = heads[f"mean_rel_{best}"] < heads["mean_rel_predict"]
    claims = result.extra.get("claims", {})
    if "ordering_above_100" in claims:
        result.headline.append("Fix-All <= Oracle <= Predict < Nopredict at every rate above 100 req/s: "
                               + ("holds" if claims["ordering_above_100"] else "does NOT hold (see notes)"))


def _figures(runs: list[PolicyRun], policies: Sequence[str], platform: ReconfigPlatform):
    by = _by(runs)
    rates = sorted({r.rate for r in runs})
    figs = []

    def p90_plot(path: Path) -> None:
        paper = {p: [PAPER_TABLE6[r][PAPER_T6_POLICIES.index(p)] * PAPER_TABLE6[r][6] for r in PAPER_RATES]
                 for p in PAPER_T6_POLICIES if p in policies}
        if "oracle" in policies:
            paper["oracle"] = [PAPER_TABLE6[r][6] for r in PAPER_RATES]
        line_plot(path, rates, {p: [by[(r, p)].p90 for r in rates] for p in policies},
                  title="p90 latency vs request rate (simulated; dashed: paper Table 6)",
                  xlabel="request rate (req/s)", ylabel="p90 latency (s)", paper=paper, paper_x=list(PAPER_RATES))

    def rel_plot(path: Path) -> None:
        paper = {p: [PAPER_TABLE6[r][PAPER_T6_POLICIES.index(p)] for r in PAPER_RATES]
                 for p in ("nopredict", "predict", "fix-all") if p in policies}
        pols = [p for p in policies if p not in ("oracle", "hardware", "software")]
        line_plot(path, rates, {p: [by[(r, p)].p90 / by[(r, "oracle")].p90 for r in rates] for p in pols},
                  title="p90 relative to Oracle (simulated; dashed: paper)", xlabel="request rate (req/s)",
                  ylabel="p90 / Oracle p90", paper=paper, paper_x=list(PAPER_RATES), hline=1.0, logy=False)

    def load_plot(path: Path) -> None:
        pols = [p for p in policies if p not in ("hardware", "fix-all")]
        line_plot(path, rates, {p: [max(by[(r, p)].load_factor, 1e-6) for r in rates] for p in pols},
                  title="Fig. 7 — host load factor (simulated)", xlabel="request rate (req/s)",
                  ylabel="software encryption time / arrival span", hline=1.0)

    if len(rates) > 1:
        figs.append(("p90_vs_rate.png", p90_plot))
        if "oracle" in policies:
            figs.append(("p90_rel_oracle.png", rel_plot))
        figs.append(("load_factor.png", load_plot))
    return figs
