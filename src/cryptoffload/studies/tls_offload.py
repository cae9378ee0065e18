"""Seed 004: TLS offload for a management node — nginx in four modes, measured where this
machine can and modelled where it cannot, and the question the paper left open: how much CPU
does offload save, and how many more clients can the node serve?

Why the split: this kernel has no ``CONFIG_TLS`` and no NIC here offloads TLS, so only plain
HTTP and user-space TLS really run; kTLS is requested too, and what actually ran is verified
(``apps/tls/detect.py``: "requested ktls, ran user-space TLS"), never reported as kTLS. Modes 3
and 4 are then predicted by the cost model of ``sim/smartnic.py`` (profile
``tls_offload.toml``, figures from Pismenny et al. ASPLOS 2021, Watson netdev 1.2, Netflix's
kTLS reports and the paper's own ratios) applied to the CPU per request measured here, and the
planner simulates a node to count clients per core at a latency target. Every row says
whether it was measured, modelled or cited.
"""

from __future__ import annotations

import math
import time as _time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from cryptoffload import __version__
from cryptoffload.errors import ConfigError
from cryptoffload.machine import machine_info
from cryptoffload.papers import PAPERS
from cryptoffload.report.plots import bar_plot
from cryptoffload.report.result import StudyResult, Table, write_result
from cryptoffload.sim import smartnic as nic
from cryptoffload.studies.registry import Option, names, register_study

NAME = "tls-offload"
TITLE = "TLS offload for a management node: nginx in four modes, measured and modelled (seed 004)"
PAPER = "TLS offload to a BlueField-2 DPU for the management node of a multi-node edge system (seed 004)"

SMALL = 2048
LARGE = 64 << 20
# seed 004: single-fetch time ratios between consecutive modes (wget, 100 fetches 100 ms apart)
PAPER_RATIOS = {
    ("tls/plain", SMALL): 3.0, ("tls/plain", LARGE): 1.44,
    ("ktls/tls", SMALL): 1.062, ("ktls/tls", LARGE): 0.992,
    ("ktls-nic/ktls", SMALL): 1.13, ("ktls-nic/ktls", LARGE): 1.096,
}
SCENARIOS = {  # planner: file, p99 latency target, requests per second per client
    "2 KB API responses": (SMALL, 0.010, 20.0),
    "64 MB file downloads": (LARGE, 1.0, 0.1),
}


@dataclass
class TlsOffloadConfig:
    quick: bool = True
    seed: int = 1
    modes: list[str] = field(default_factory=lambda: ["plain", "tls", "ktls"])
    clients: list[str] = field(default_factory=lambda: ["curl", "wget"])
    count: int | None = None
    variant: str = "nominal"
    profile: str | None = None
    planner_requests: int = 2000

    def validate(self) -> None:
        for m in self.modes:
            if m not in nic.MODES:
                raise ConfigError(f"unknown mode {m!r}; choose among {', '.join(nic.MODES)}")
        if "plain" not in self.modes or "tls" not in self.modes:
            raise ConfigError("the study needs the plain and tls modes (the model is built on their measured costs)")
        for c in self.clients:
            if c not in ("curl", "wget"):
                raise ConfigError(f"unknown client {c!r}; choose curl or wget")
        if self.count is not None and (not isinstance(self.count, int) or self.count < 2):
            raise ConfigError(f"count must be an integer >= 2, got {self.count!r}")
        if self.variant not in nic.VARIANTS:
            raise ConfigError(f"unknown variant {self.variant!r}; choose one of {', '.join(nic.VARIANTS)}")


def _measured_costs(bench) -> tuple[nic.MeasuredCosts, list[str]]:
    """CPU s/request per size for plain and tls, over both clients; noise that puts tls below
    plain is clamped (the TLS increment cannot be negative) and said so."""
    by_file = bench.cpu_ms_per_request_by_file()
    notes = []
    plain, tls = {}, {}
    for fname, size in bench.files.items():
        p = by_file["plain"][fname] / 1e3
        t = by_file["tls"][fname] / 1e3
        if not (p > 0 and math.isfinite(p)):
            p = 1e-6
        if t < p:
            notes.append(f"{fname}: measured tls CPU {t * 1e3:.3f} ms below plain {p * 1e3:.3f} ms (noise); clamped to plain")
            t = p
        plain[size], tls[size] = p, t
    return nic.MeasuredCosts(plain, tls, provenance="measured"), notes


@register_study(
    name=NAME, title=TITLE, paper=PAPERS["smartnic-tls"], config=TlsOffloadConfig,
    summary="nginx in four modes; CPU per request and clients per core, measured and modelled.",
    quick="10 fetches per cell and a short wrk sweep (under a minute).",
    seed="Seed of the interleaving order and the planner's arrivals.",
    options=[
        Option("--modes", "modes", str, "plain,tls,ktls", "Modes to run on nginx (plain and tls are required).",
               convert=names),
        Option("--clients", "clients", str, "curl,wget", "Fetch clients: curl, wget.", convert=names),
        Option("--count", "count", int, help="Fetches per mode, file and client (paper: 100)."),
        Option("--variant", "variant", str, "nominal", "Offload model variant: nominal, optimistic, pessimistic."),
        Option("--profile", "profile", help="TLS offload cost profile (default: tls_offload)."),
    ],
)
def run(cfg: TlsOffloadConfig, out: str | Path, progress: Callable[[int], Callable[[str], None]] | None = None) -> StudyResult:
    from cryptoffload.apps.tls.measure import FULL_SETTINGS, QUICK_SETTINGS, run_bench

    cfg.validate()
    started = _time.perf_counter()
    settings = dict(QUICK_SETTINGS if cfg.quick else FULL_SETTINGS)
    if cfg.count is not None:
        settings["count"] = cfg.count
    # the model needs the profile before anything slow runs: a bad profile is refused first
    params = nic.TlsOffloadParams.from_profile(cfg.profile, cfg.variant)
    tick = progress(3) if progress else None
    if tick:
        tick("nginx: interleaved fetches and wrk sweep")
    tb = run_bench(cfg.modes, (SMALL, LARGE), cfg.clients, seed=cfg.seed, **settings)
    bench = tb.bench
    result = StudyResult(NAME, TITLE, "quick" if cfg.quick else "full", cfg.seed, __version__, machine_info(),
                         profiles=[f"profiles/{nic.PROFILE_NAME}.toml" if cfg.profile is None else str(cfg.profile)],
                         paper=PAPER)
    size_of = bench.files
    label = {m: ("measured" if bench.verified.get(m, "").startswith("ran") or m in ("plain", "tls")
                 else f"measured ({bench.verified.get(m, '')})") for m in bench.modes}
    label["plain"] = "measured"
    label["tls"] = "measured"

    # -- single fetches, the paper's method --------------------------------------------------
    rows = []
    for c in bench.cells:
        rows.append([c.mode, c.file, c.client, label.get(c.mode, "measured"), c.stats.mean * 1e3, c.stats.std * 1e3])
    result.add(Table("single_fetch", f"Single fetches: {bench.count} per cell, {bench.interval_s * 1e3:.0f} ms apart, "
                                     "modes interleaved in random order (measured)",
                     ["mode", "file", "client", "provenance", "mean_ms", "std_ms"], rows, "mixed", key_columns=3,
                     note="What ran is verified per mode: " + "; ".join(f"{m}: {v}" for m, v in bench.verified.items())))

    def mean_of(mode: str, fname: str, client: str) -> float | None:
        try:
            return bench.cell(mode, fname, client).stats.mean
        except KeyError:
            return None

    ratio_rows, ratio_paper = [], []
    for ratio in ("tls/plain", "ktls/tls", "ktls-nic/ktls"):
        a, b = ratio.split("/")
        for fname, size in size_of.items():
            vals = []
            for client in ("curl", "wget"):
                x, y = mean_of(a, fname, client), mean_of(b, fname, client)
                vals.append(x / y if x and y else None)
            ratio_rows.append([ratio, fname] + vals)
            ratio_paper.append([ratio, fname, None, PAPER_RATIOS.get((ratio, size))])
    result.add(Table("single_fetch_ratios", "Single-fetch time ratios between modes: ours (measured) vs seed 004 (wget)",
                     ["ratio", "file", "curl", "wget"], ratio_rows, "measured", ratio_paper, key_columns=2,
                     note="ktls here ran as user-space TLS (verified), so ktls/tls measures noise, not kTLS; "
                          "ktls-nic cannot run here. The paper column is wget."))

    # -- CPU per request: measured and modelled ----------------------------------------------
    if tick:
        tick("cost model and planner")
    measured, clamp_notes = _measured_costs(bench)
    result.notes += clamp_notes
    model = nic.TlsCostModel(measured, params)
    by_file = bench.cpu_ms_per_request_by_file()
    cpu_rows = []
    for m in bench.modes:
        for fname, size in size_of.items():
            cpu_rows.append([f"{m} (as run here)" if m not in ("plain", "tls") else m, fname, label[m], by_file[m][fname]])
    for m in nic.MODELLED_MODES:
        for fname, size in size_of.items():
            cost = model.cost(m, size)
            cpu_rows.append([m, fname, "modelled", cost.cpu_s * 1e3])
    result.add(Table("cpu_per_request", "nginx worker CPU per request (ms): measured here, and modelled for kTLS / NIC offload",
                     ["mode", "file", "provenance", "cpu_ms"], cpu_rows, "mixed", key_columns=2,
                     note=f"CPU from {bench.cpu_source}; modelled rows: profiles/tls_offload.toml ({cfg.variant} variant) "
                          "applied to the measured plain and tls costs."))

    # -- capacity: measured wrk, modelled closed form, planner -------------------------------
    cap_rows = []
    max_rps = tb.max_requests_per_s()
    at_target = tb.clients_at_target()
    for m in nic.MODES:
        measured_rps = max_rps.get(m) if m in ("plain", "tls") else None
        per_core = {size: model.capacity(m, size).per_core_requests_per_s for size in (SMALL, LARGE)}
        cap_rows.append([m, "measured" if measured_rps else "modelled", measured_rps,
                         at_target.get(m) if m in ("plain", "tls") else None, per_core[SMALL], per_core[LARGE]])
    result.add(Table("capacity", f"Capacity: wrk on the {tb.wrk_file} file (measured, all cores) and per-core capacity "
                                 "from the cost model (modelled for every mode, on measured inputs for plain/tls)",
                     ["mode", "provenance", "wrk_max_rps", f"wrk_connections_at_p99_{tb.latency_target_ms:g}ms",
                      "model_rps_per_core_2k", "model_rps_per_core_64m"], cap_rows, "mixed"))

    plan_rows = []
    plans: dict[str, dict[str, nic.ClientPlan]] = {}
    for scen, (size, target, rate) in SCENARIOS.items():
        plans[scen] = nic.plan_modes(size, target, rate, model=model, cores=1, n_requests=cfg.planner_requests,
                                     seed=cfg.seed)
        for m, p in plans[scen].items():
            prov = "modelled" if p.provenance == nic.MODELLED else "simulated (measured costs)"
            plan_rows.append([scen, m, prov, p.clients, p.bound])
    result.add(Table("clients_per_core", "Management-node clients per core at a p99 latency target (planner, simulated node)",
                     ["scenario", "mode", "provenance", "clients_per_core", "bound"], plan_rows, "mixed", key_columns=2,
                     note="; ".join(f"{s}: p99 <= {t * 1e3:g} ms, {r:g} requests/s per client" for s, (_, t, r) in SCENARIOS.items())))

    # -- detection ----------------------------------------------------------------------------
    sup = tb.support
    result.extra["support"] = sup.to_dict() if hasattr(sup, "to_dict") else str(sup)
    result.extra["verified"] = bench.verified
    result.extra["cpu_source"] = bench.cpu_source
    tls_small, plain_small = by_file["tls"][_name(size_of, SMALL)], by_file["plain"][_name(size_of, SMALL)]
    tls_large, plain_large = by_file["tls"][_name(size_of, LARGE)], by_file["plain"][_name(size_of, LARGE)]
    result.headline.append(f"Measured here: TLS costs {tls_small / max(plain_small, 1e-9):.1f}x the CPU of plain HTTP per 2 KB "
                           f"request and {tls_large / max(plain_large, 1e-9):.1f}x per 64 MB request")
    big = plans["64 MB file downloads"]
    result.headline.append(f"Modelled: NIC offload serves {big['ktls-nic'].clients} vs {big['tls'].clients} 64 MB-download "
                           f"clients per core (user-space TLS); kTLS alone {big['ktls'].clients}")
    small = plans["2 KB API responses"]
    result.headline.append(f"Modelled: for 2 KB requests offload does not pay: {small['ktls-nic'].clients} (NIC) vs "
                           f"{small['tls'].clients} (user-space TLS) clients per core — the per-connection hand-off "
                           "the paper measured dominates")
    result.headline.append("kTLS requested here: " + bench.verified.get("ktls", "not requested"))
    result.extra["elapsed_bench_s"] = tb.elapsed_s

    def cpu_plot(path: Path) -> None:
        labels = [f"{r[0]} {r[1]}" for r in cpu_rows]
        bar_plot(path, labels, [max(float(r[3]), 1e-6) for r in cpu_rows],
                 kinds=["measured" if r[2].startswith("measured") else "modelled" for r in cpu_rows],
                 title="nginx worker CPU per request", ylabel="ms per request")

    def plan_plot(path: Path) -> None:
        labels = [f"{r[1]}, {r[0]}" for r in plan_rows]
        bar_plot(path, labels, [max(float(r[3]), 0.5) for r in plan_rows],
                 kinds=[r[2] for r in plan_rows], title="Clients per core at the latency target (planner, simulated node)",
                 ylabel="clients per core")

    result.elapsed_s = _time.perf_counter() - started
    write_result(result, out, [("cpu_per_request.png", cpu_plot), ("clients_per_core.png", plan_plot)])
    return result


def _name(files: dict[str, int], size: int) -> str:
    return next(n for n, s in files.items() if s == size)
