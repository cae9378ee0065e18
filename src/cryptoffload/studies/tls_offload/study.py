"""Miyakawa et al.'s SmartNIC TLS paper: TLS offload for a management node — nginx in four modes,
measured where this machine can and modelled where it cannot, and the questions the paper left
open: why did offload make single fetches slower, how much CPU does it save, and how many more
clients can the node serve?

Why the split: this kernel has no ``CONFIG_TLS`` and no NIC here offloads TLS, so only plain
HTTP and user-space TLS really run; kTLS is requested too, and what actually ran is verified
(``apps/tls/detect.py``: "requested ktls, ran user-space TLS"), never reported as kTLS. Modes 3
and 4 are then predicted by the cost model of ``sim/tls/smartnic.py`` (profile
``tls_offload.toml``: Pismenny et al. ASPLOS 2021, Watson netdev 1.2, Netflix's kTLS reports,
Linux's zerocopy-sendfile commit and a third-party ConnectX-6 Dx benchmark -- never the paper's
own ratios) applied to what is measured here (``studies/tls_offload/model.py``), and the planner
simulates a node to count clients per core at a latency target. Every row says whether it was
measured, simulated or cited.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from cryptoffload.checks import FETCHES, check_int
from cryptoffload.errors import ConfigError
from cryptoffload.papers import PAPERS
from cryptoffload.profiles.loader import load_profile
from cryptoffload.profiles.fits import profile_fits
from cryptoffload.report.provenance import computed_from
from cryptoffload.report.plots import bar_plot
from cryptoffload.report.result import Table
from cryptoffload.report.rows import column, columns_of, rows_of, table_of
from cryptoffload.sim.tls import smartnic as nic
from cryptoffload.sim.tls import node as tls_node
from cryptoffload.studies.tls_offload import bands as tband
from cryptoffload.studies.tls_offload import guest as tg
from cryptoffload.studies.tls_offload import model as tm
from cryptoffload.studies import frame
from cryptoffload.studies.bands import Banded, band_tables
from cryptoffload.studies.frame import Sections
from cryptoffload.studies.verdicts import Judging, full_command
from cryptoffload.studies.registry import Option, names, register_study

if TYPE_CHECKING:
    from cryptoffload.apps.tls.measure import BenchResult, TlsBenchResult

NAME = "tls-offload"
TITLE = "TLS offload for a management node: nginx in four modes, measured and modelled"
PAPER = PAPERS["smartnic-tls"].cite()

SMALL, LARGE, PAPER_RATIOS = tm.SMALL, tm.LARGE, tm.PAPER_RATIOS


@dataclass(kw_only=True)
class TlsOffloadConfig:
    quick: bool = True
    seed: int = 1
    modes: list[str] = field(default_factory=lambda: ["plain", "tls", "ktls"])
    clients: list[str] = field(default_factory=lambda: ["curl", "wget"])
    count: int | None = None
    variant: str = "nominal"
    profile: str | None = None
    planner_requests: int = 2000
    guest_result: str | None = None  # `make ktls`'s guest.json; None: the stored one if present

    def validate(self) -> None:
        for m in self.modes:
            if m not in nic.SERVING_MODES:
                raise ConfigError(f"unknown mode {m!r}; choose among {', '.join(nic.SERVING_MODES)}")
        if "plain" not in self.modes or "tls" not in self.modes:
            raise ConfigError("the study needs the plain and tls modes (the model is built on their measured costs)")
        for c in self.clients:
            if c not in ("curl", "wget"):
                raise ConfigError(f"unknown client {c!r}; choose curl or wget")
        if self.count is not None:
            check_int("--count", self.count, minimum=2, maximum=100_000)
        if self.variant not in nic.VARIANTS:
            raise ConfigError(f"unknown variant {self.variant!r}; choose one of {', '.join(nic.VARIANTS)}")


def _measured_costs(bench: BenchResult) -> tuple[nic.MeasuredCosts, list[str]]:
    """CPU s/request per size for plain and tls, over both clients, and the handshake's share
    (per connection, estimated from the two sizes); noise that puts tls below plain is clamped
    (the TLS increment cannot be negative) and said so."""
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
    costs = nic.MeasuredCosts(plain, tls, provenance="measured").with_handshake()
    assert costs.handshake_s is not None, "with_handshake() sets it"
    notes.append(f"server CPU of the handshake, {costs.handshake_s * 1e3:.3f} ms a connection: the intercept of (tls - plain) "
                 "CPU over file size (what no record-layer offload can remove)")
    return costs, notes


@register_study(
    name=NAME, title=TITLE, paper=PAPERS["smartnic-tls"], config=TlsOffloadConfig,
    summary="nginx in four modes; CPU per request and clients per core, measured and modelled.",
    quick="10 fetches per cell and a short wrk sweep: about 30 s on 2 cores (docs/report.md).",
    seed="Seed of the interleaving order and the planner's arrivals.",
    options=[
        Option("--modes", "modes", str, "plain,tls,ktls", "Modes to run on nginx (plain and tls are required).",
               convert=names),
        Option("--clients", "clients", str, "curl,wget", "Fetch clients: curl, wget.", convert=names),
        Option("--count", "count", int, help="Fetches per mode, file and client (paper: 100).", bound=FETCHES),
        Option("--variant", "variant", str, "nominal", "Offload model variant: nominal, optimistic, pessimistic."),
        Option("--profile", "profile", help="TLS offload cost profile (default: tls_offload)."),
        Option("--guest-result", "guest_result", help="kTLS run in a guest (`make ktls`'s guest.json; default: the "
                                                      "stored one; 'none': leave it out)."),
    ],
)
def run(cfg: TlsOffloadConfig) -> Sections:
    """nginx measured, the cost model and the planner on it, the guest's kTLS run beside; the
    verdicts, claims and headline."""
    # the model needs the profile before anything slow runs: a bad profile is refused first
    params = nic.TlsOffloadParams.from_profile(cfg.profile, cfg.variant)
    guest = tg.load_guest(cfg.guest_result)
    frame.expect(3)
    frame.step("nginx: interleaved fetches and wrk sweep")
    tb = _run_nginx(cfg)
    found = Sections(profiles=[f"profiles/{nic.PROFILE_NAME}.toml" if cfg.profile is None else str(cfg.profile)],
                     key_figure="single_fetch_prediction.png")
    fetches = Fetches(tb.bench)
    found.tables += [_single_fetch_table(fetches), _single_fetch_ratio_table(fetches)]
    frame.step("cost model and planner")
    model, found.notes, found.fits = _cost_model(cfg, fetches, params)
    model_tables, predictions = _model_tables(cfg, model, fetches)
    cpu_table, cpu_rows = _cpu_table(cfg, model, fetches)
    found.tables += [*model_tables, cpu_table]
    if guest is not None:
        found.tables += tg.guest_tables(guest, model.costs, model.label, model.inputs)
    plans_table, plans = _clients_per_core_table(cfg, model)
    found.tables += [_capacity_table(model, tb), plans_table]
    found.extra.update(_detection(tb))
    found.headline.append(_measured_headline(fetches))
    bands, noise, band_tables_ = _bands(cfg, model, fetches, predictions)
    found.tables += band_tables_
    found.verdicts = tm.verdicts(found.by_id["single_fetch_prediction"], fetches.files,
                                 load_profile(cfg.profile or nic.PROFILE_NAME), bands,
                                 Judging(cfg.quick, "sample", full_command(NAME), f"{tb.bench.count} fetches per cell"))
    found.headline += tm.claims(predictions, model.costs, fetches.files, fetches.mean, found.verdicts, model.label,
                                bands, noise)
    found.headline += _planner_headlines(model, plans)
    found.headline.append("kTLS requested here: " + tb.bench.verified.get("ktls", "not requested"))
    if guest is not None:
        found.headline += tg.guest_claims(guest)
    found.extra["elapsed_bench_s"] = tb.elapsed_s
    found.figures = _figures(fetches.files, predictions, cpu_rows, plans.rows)
    return found


def _bands(cfg: TlsOffloadConfig, model: CostModel, f: Fetches, predictions: list[tm.PredictionRow]
           ) -> tuple[dict[str, Banded], dict[tuple[str, str], tband.FetchNoise], list[Table]]:
    """Bands of the predicted rows beside a paper figure, and of the small file's rows whatever
    the client (the card's open-question claim quotes them, and with curl alone the paper's
    wget figures have no row to stand beside), over the model's ranges and the run's noise (a
    variant, itself an end of the ranges, over the noise only); this run's fetch noise per file
    and client; and the bands' tables."""
    ktls_is_tls = "ran user-space TLS" in f.bench.verified.get("ktls", "")
    noise = {(fname, c): tband.fetch_noise(f.samples, fname, c, ktls_is_tls) for fname in f.files for c in cfg.clients
             if f.samples("tls", fname, c)}
    profile = load_profile(cfg.profile or nic.PROFILE_NAME)
    small = tm.small_file(f.files)
    moved = tband.MODEL_FIELDS if cfg.variant == "nominal" else ()
    found = {tband.figure_label(*r.key): tband.ratio_band(profile, model.costs, r.key, f.files[r.file],
                                                    f.samples("tls", r.file, r.client), noise[(r.file, r.client)],
                                                    r.paper, cfg.quick, moved)
             for r in predictions if r.provenance == model.label and (r.paper is not None or r.file == small)
             and (r.file, r.client) in noise}
    bands = {k: b for k, b in found.items() if b is not None}
    tables = (list(band_tables(list(bands.values()), model.inputs, tband.note(cfg.quick, cfg.variant), model.label))
              if bands else [])
    for r in predictions:  # the measured tls/plain ratios beside the paper's: this run's noise alone
        if r.ratio == "tls/plain" and r.paper is not None and r.ours is not None:
            plain = tband.relative_se(f.samples("plain", r.file, r.client))
            tls = tband.relative_se(f.samples("tls", r.file, r.client))
            n = min(len(f.samples("plain", r.file, r.client)), len(f.samples("tls", r.file, r.client)))
            m = tband.measured_ratio_band(tband.figure_label(*r.key), r.ours,
                                          tband.FetchNoise(n, tls, math.hypot(tls, plain), None), r.paper)
            if m is not None:
                bands[m.figure] = m
    return bands, noise, tables


def _run_nginx(cfg: TlsOffloadConfig) -> TlsBenchResult:
    """nginx in every mode asked for: interleaved single fetches, then the wrk sweep."""
    from cryptoffload.apps.tls.measure import FULL_SETTINGS, QUICK_SETTINGS, run_bench

    settings = dict(QUICK_SETTINGS if cfg.quick else FULL_SETTINGS)
    if cfg.count is not None:
        settings["count"] = cfg.count
    return run_bench(cfg.modes, (SMALL, LARGE), cfg.clients, seed=cfg.seed, **settings)


class Fetches:
    """The single fetches measured on nginx, read by mode, file and client; and what each mode
    is labelled (a mode asked for but run as something else says so)."""

    def __init__(self, bench: BenchResult) -> None:
        self.bench = bench
        self.files = bench.files
        self.label = {m: ("measured" if bench.verified.get(m, "").startswith("ran") or m in ("plain", "tls")
                          else f"measured ({bench.verified.get(m, '')})") for m in bench.modes}
        self.label["plain"] = "measured"
        self.label["tls"] = "measured"
        self.cpu_ms = bench.cpu_ms_per_request_by_file()

    def mean(self, mode: str, fname: str, client: str) -> float | None:
        """Mean fetch time (s); ``None`` for a cell that did not run."""
        try:
            return self.bench.cell(mode, fname, client).stats.mean
        except KeyError:
            return None

    def samples(self, mode: str, fname: str, client: str) -> list[float]:
        """Every fetch time of a cell (s); empty for a cell that did not run."""
        try:
            return list(self.bench.cell(mode, fname, client).stats.samples)
        except KeyError:
            return []

    def phases(self, mode: str, fname: str) -> dict[str, float]:
        """curl's phase timers, mean per phase (s); empty for a cell that did not run."""
        try:
            return self.bench.cell(mode, fname, "curl").stats.phase_means()
        except KeyError:
            return {}

    def cpu_ms_of(self, mode: str, size: int) -> float:
        """Measured worker CPU per request (ms) of ``mode`` on the file of ``size`` bytes."""
        return self.cpu_ms[mode][next(n for n, s in self.files.items() if s == size)]


@dataclass(frozen=True)
class SingleFetchRow:
    mode: str = column()
    file: str = column()
    client: str = column()
    provenance: str = column()
    mean_ms: float = column()
    std_ms: float = column()


def _single_fetch_table(f: Fetches) -> Table:
    """Single fetches, the paper's method: every cell as measured."""
    b = f.bench
    rows = [SingleFetchRow(c.mode, c.file, c.client, f.label.get(c.mode, "measured"), c.stats.mean * 1e3,
                           c.stats.std * 1e3) for c in b.cells]
    return (table_of(SingleFetchRow, rows, id="single_fetch",
                        title=f"Single fetches: {b.count} per cell, {b.interval_s * 1e3:.0f} ms apart, "
                              "modes interleaved in random order (measured)",
                        provenance="mixed", key_columns=3, inputs=[],
                        note="What ran is verified per mode: " + "; ".join(f"{m}: {v}" for m, v in b.verified.items())))


@dataclass(frozen=True)
class FetchRatioRow:
    ratio: str = column()
    file: str = column()
    curl: float | None = column()
    wget: float | None = column()


def _single_fetch_ratio_table(f: Fetches) -> Table:
    """Each offload step's fetch-time ratio as run here, beside the paper's (wget)."""
    rows, paper = [], []
    for step in tm.MODE_RATIOS:
        for fname, size in f.files.items():
            vals = []
            for client in ("curl", "wget"):
                x, y = f.mean(step.mode, fname, client), f.mean(step.over, fname, client)
                vals.append(x / y if x and y else None)
            rows.append(FetchRatioRow(step.label, fname, *vals))
            paper.append(FetchRatioRow(step.label, fname, None, PAPER_RATIOS.get((step.label, size))))
    return (table_of(FetchRatioRow, rows, paper=paper, id="single_fetch_ratios",
                        title="Single-fetch time ratios between modes as run here (measured) vs the paper (wget)",
                        provenance="measured", key_columns=2, inputs=[],
                        unjudged="the ratios as run here: tls/plain is judged in single_fetch_prediction; ktls/tls here "
                                 "ran user-space TLS in both modes (verified), so it measures noise, not kTLS",
                        note="ktls here ran as user-space TLS (verified), so ktls/tls measures noise, not kTLS; "
                             "ktls-nic cannot run here. The paper column is wget."))


@dataclass
class CostModel:
    """The cost model on this machine's measured costs, and what its modelled rows are labelled:
    ``fitted`` for the pessimistic variant (its kTLS fraction is fitted to the paper's 64 MB
    figure), ``simulated`` otherwise."""

    costs: nic.TlsCostModel
    label: str
    inputs: list[str]


def _cost_model(cfg: TlsOffloadConfig, f: Fetches, params: nic.TlsOffloadParams
                ) -> tuple[CostModel, list[str], dict[str, str]]:
    """The model on the measured costs, the notes on those costs, and the fit the pessimistic
    variant declares."""
    measured, clamp_notes = _measured_costs(f.bench)
    fits = {f"{nic.PROFILE_NAME}:ktls.cpu_fraction_max": "Fig. 3/4"} if cfg.variant == "pessimistic" else {}
    fitted = set(params.input_names()) & set(fits) | set(params.input_names()) & set(
        profile_fits(cfg.profile or nic.PROFILE_NAME))
    model = CostModel(nic.TlsCostModel(measured, params), computed_from(bool(fitted), "simulated"), params.input_names())
    return model, clamp_notes, fits


def _model_tables(cfg: TlsOffloadConfig, model: CostModel, f: Fetches) -> tuple[list[Table], list[tm.PredictionRow]]:
    """Single-fetch predictions, where a fetch's time goes, what the paper's ratios imply
    (``studies/tls_offload/model.py``), on this core's AES-GCM speed and the clients' start-up."""
    from cryptoffload.apps.tls.measure import client_startup_s

    enc = tm.measure_aes_gcm_s_per_byte(0.1 if cfg.quick else 0.5)
    startup = {c: client_startup_s(c, 5 if cfg.quick else 20) for c in cfg.clients}
    return tm.model_tables(model.costs, f.mean, f.phases, f.files, cfg.clients, enc, model.inputs, model.label,
                           startup)


@dataclass(frozen=True)
class CpuRow:
    mode: str = column()
    file: str = column()
    provenance: str = column()
    cpu_ms: float = column()


def _cpu_table(cfg: TlsOffloadConfig, model: CostModel, f: Fetches) -> tuple[Table, list[CpuRow]]:
    """Worker CPU per request: measured for what ran, modelled for kTLS and NIC offload."""
    rows = [CpuRow(f"{m} (as run here)" if m not in ("plain", "tls") else m, fname, f.label[m], f.cpu_ms[m][fname])
            for m in f.bench.modes for fname in f.files]
    rows += [CpuRow(m, fname, model.label, model.costs.cost(m, size).cpu_s * 1e3)
             for m in nic.MODELLED_MODES for fname, size in f.files.items()]
    return (table_of(CpuRow, rows, id="cpu_per_request",
                        title="nginx worker CPU per request (ms): measured here, and modelled for kTLS / NIC offload",
                        provenance="mixed", key_columns=2, inputs=model.inputs,
                        note=f"CPU from {f.bench.cpu_source}; modelled rows: profiles/tls_offload.toml ({cfg.variant} "
                             "variant) applied to the measured plain and tls costs."), rows)


@dataclass(frozen=True)
class CapacityRow:
    mode: str = column()
    provenance: str = column()
    wrk_max_rps: float | None = column()
    wrk_connections_at_target: int | None = column()  # named for the run's latency target
    model_rps_per_core_2k: float = column()
    model_rps_per_core_64m: float = column()


def _capacity_table(model: CostModel, tb: TlsBenchResult) -> Table:
    """wrk on nginx (measured, all cores) and the cost model's per-core capacity (every mode)."""
    max_rps, at_target = tb.max_requests_per_s(), tb.clients_at_target()
    rows = []
    for m in nic.SERVING_MODES:
        measured_rps = max_rps.get(m) if m in ("plain", "tls") else None
        rows.append(CapacityRow(m, "measured" if measured_rps else model.label, measured_rps,
                                at_target.get(m) if m in ("plain", "tls") else None,
                                model.costs.capacity(m, SMALL).per_core_requests_per_s,
                                model.costs.capacity(m, LARGE).per_core_requests_per_s))
    target_column = f"wrk_connections_at_p99_{tb.latency_target_ms:g}ms"
    columns = [target_column if c == "wrk_connections_at_target" else c for c in columns_of(CapacityRow)]
    return (Table("capacity", f"Capacity: wrk on the {tb.wrk_file} file (measured, all cores) and per-core capacity "
                                 "from the cost model (modelled for every mode, on measured inputs for plain/tls)",
                     columns, rows_of(CapacityRow, rows), "mixed", inputs=model.inputs,
                     column_provenance={"model_rps_per_core_2k": model.label, "model_rps_per_core_64m": model.label}))


@dataclass(frozen=True)
class Scenario:
    """A management node's workload for the planner."""

    name: str
    size: int
    p99_target_s: float
    requests_per_s_per_client: float


SCENARIOS = (Scenario("2 KB API responses", SMALL, 0.010, 20.0), Scenario("64 MB file downloads", LARGE, 1.0, 0.1))


@dataclass(frozen=True)
class PlanRow:
    scenario: str = column()
    mode: str = column()
    provenance: str = column()
    clients_per_core: int = column()
    bound: str = column()


@dataclass
class Plans:
    """Clients per core at each scenario's latency target, per mode (planner, simulated node)."""

    by_scenario: dict[str, dict[str, tls_node.ClientPlan]]
    rows: list[PlanRow]

    def clients(self, scenario: Scenario, mode: str) -> int:
        return self.by_scenario[scenario.name][mode].clients


def _clients_per_core_table(cfg: TlsOffloadConfig, model: CostModel) -> tuple[Table, Plans]:
    plans = Plans({}, [])
    for sc in SCENARIOS:
        plans.by_scenario[sc.name] = tls_node.plan_modes(sc.size, sc.p99_target_s, sc.requests_per_s_per_client,
                                                         model=model.costs, cores=1, n_requests=cfg.planner_requests,
                                                         seed=cfg.seed)
        for m, p in plans.by_scenario[sc.name].items():
            prov = model.label if p.provenance == nic.MODELLED else "simulated (from measured costs)"
            plans.rows.append(PlanRow(sc.name, m, prov, p.clients, p.bound))
    return (table_of(PlanRow, plans.rows, id="clients_per_core",
                        title="Management-node clients per core at a p99 latency target (planner, simulated node)",
                        provenance="mixed", key_columns=2, inputs=model.inputs,
                        note="; ".join(f"{sc.name}: p99 <= {sc.p99_target_s * 1e3:g} ms, "
                                       f"{sc.requests_per_s_per_client:g} requests/s per client" for sc in SCENARIOS)),
            plans)


def _detection(tb: TlsBenchResult) -> dict[str, object]:
    """What this kernel and nginx support, and what each mode ran as."""
    sup = tb.support
    return {"support": sup.to_dict() if hasattr(sup, "to_dict") else str(sup), "verified": tb.bench.verified,
            "cpu_source": tb.bench.cpu_source}


def _measured_headline(f: Fetches) -> str:
    small, large = ({m: f.cpu_ms_of(m, size) for m in ("plain", "tls")} for size in (SMALL, LARGE))
    return (f"Measured here: TLS costs {small['tls'] / max(small['plain'], 1e-9):.1f}x the CPU of plain "
                           f"HTTP per 2 KB request and {large['tls'] / max(large['plain'], 1e-9):.1f}x per 64 MB request")


def _planner_headlines(model: CostModel, plans: Plans) -> list[str]:
    """Clients per core with NIC offload against user-space TLS, for both scenarios."""
    api, downloads = SCENARIOS
    who = model.label.capitalize()
    return [f"{who}: NIC offload serves {plans.clients(downloads, 'ktls-nic')} vs "
                           f"{plans.clients(downloads, 'tls')} 64 MB-download clients per core (user-space TLS); "
                           f"kTLS alone {plans.clients(downloads, 'ktls')}",
            f"{who}: for 2 KB requests {plans.clients(api, 'ktls-nic')} (NIC) vs "
                           f"{plans.clients(api, 'tls')} (user-space TLS) clients per core, if the NIC's set-up holds "
                           "the worker (an assumption: "
                           f"handoff.cpu_share = {model.costs.params.handoff_cpu_share:g})"]


def _figures(files: dict[str, int], predictions: list[tm.PredictionRow], cpu_rows: list[CpuRow],
             plan_rows: list[PlanRow]) -> list[tuple[str, Callable[[Path], None]]]:
    def cpu_plot(path: Path) -> None:
        bar_plot(path, [f"{r.mode} {r.file}" for r in cpu_rows], [max(float(r.cpu_ms), 1e-6) for r in cpu_rows],
                 kinds=["measured" if r.provenance.startswith("measured") else "simulated" for r in cpu_rows],
                 title="nginx worker CPU per request", ylabel="ms per request")

    def plan_plot(path: Path) -> None:
        bar_plot(path, [f"{r.mode}, {r.scenario}" for r in plan_rows],
                 [max(float(r.clients_per_core), 0.5) for r in plan_rows],
                 kinds=[r.provenance for r in plan_rows], title="Clients per core at the latency target (planner, simulated node)",
                 ylabel="clients per core")

    steps = [r for r in predictions if r.ratio != "tls/plain"]

    def fetch_plot(path: Path) -> None:
        paper = [PAPER_RATIOS.get((r.ratio, files[r.file])) if r.client == "wget" else None for r in steps]
        changes, kinds = [], []
        for r in steps:
            assert r.ours is not None and r.provenance is not None, "our rows carry a ratio and a provenance"
            changes.append(100 * (float(r.ours) - 1))
            kinds.append(r.provenance)
        bar_plot(path, [f"{r.ratio} {r.file} ({r.client})" for r in steps], changes,
                 kinds=kinds, paper=[None if v is None else 100 * (v - 1) for v in paper],
                 logy=False, hline=0.0, hline_label="no change",
                 title="Single-fetch time change of each offload step: predicted here, the paper (x, wget)",
                 ylabel="change in fetch time, % (above 0: offload slower)")

    return [("single_fetch_prediction.png", fetch_plot), ("cpu_per_request.png", cpu_plot),
            ("clients_per_core.png", plan_plot)]
