"""Study ``isc-he-cnn``: homomorphic CNN inference on computational storage.

The in-storage HE paper (Suzuki and Yamana) asks where an FPGA running CKKS should get the
weights and keys that do not fit in its DRAM: from host memory (FPGA-only), from an SSD through
the host (FPGA&SSD) or from NAND flash on the same device (CSD). It answers by simulation:
Table 2 (latency vs source bandwidth, and a CPU) and Table 3 (k devices on 32 PCIe lanes). We
rebuild that simulation (``sim/isc/fpga_cost.py``, ``sim/isc/platform.py``: an FPGA with per-level op
times, DRAM with eviction of dead data, NAND, SSDs and shared PCIe lanes, transfers prefetched
in program order) and feed it the CNN built from the paper's *stated inputs*
(``workloads/he_cnn_eva.py``: network, EVA parameters, data sizes), so Tables 2 and 3 are
**predicted**. The program whose phases were fitted to Table 2 stays beside as a secondary,
**fitted** row, and ``studies/isc_he_cnn/gap.py`` decomposes the gap between the two input by input.
Everything is *simulated* except the CPU row, which is *cited* (11,359 ms) unless a trace
carries wall times (then *measured*).

:func:`cryptoffload.policies.isc_plan.plan_isc` answers the planning question the paper
reasons about in section 4.5.1: how many CSDs and how much NAND for ``M`` clients and a given
model; the study and the planner start from the same world (``sim/isc/world.py``).

:func:`run` is the study's table of contents; the tables live in ``tables.py``, the claims
and notes in ``claims.py`` (a program that is not the paper's, such as the report's recorded
trace: ``trace_claims.py``), the figures in ``figures.py``, the paper's numbers in
``paper.py``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from cryptoffload.checks import CLIENTS, DURATION_MS, QUERIES, SIZE_GB, SIZE_MB, check_bounded, check_int
from cryptoffload.errors import ConfigError
from cryptoffload.papers import PAPERS
from cryptoffload.policies.isc_plan import plan_isc
from cryptoffload.profiles.fits import profile_fits
from cryptoffload.report.result import Table
from cryptoffload.report.verdicts import Verdict
from cryptoffload.sim.isc.fpga_cost import FPGA_PROFILE
from cryptoffload.sim.isc.platform import PLATFORM_PROFILE, PLATFORMS
from cryptoffload.sim.isc.world import load_isc_world, profile_path
from cryptoffload.studies import frame
from cryptoffload.studies.frame import HeadlineEntry, Sections
from cryptoffload.studies.isc_he_cnn import bands as isc_bands
from cryptoffload.studies.isc_he_cnn import claims
from cryptoffload.studies.isc_he_cnn import tables
from cryptoffload.studies.isc_he_cnn import trace_claims
from cryptoffload.studies.isc_he_cnn import gap as isc_gap
from cryptoffload.studies.bands import Banded, band_tables
from cryptoffload.studies.isc_he_cnn.figures import figures
from cryptoffload.studies.isc_he_cnn.paper import (CPU_LABEL, FITTED, GB, PAPER_CPU_MS, PAPER_HEADLINE, PAPER_SIZES,
                                             PAPER_TABLE2, PAPER_TABLE3, PREDICTED, TABLE3_COLUMNS, TOLERANCE)
from cryptoffload.studies.isc_he_cnn.plan_table import plan_table
from cryptoffload.studies.isc_he_cnn.claims import Headline
from cryptoffload.studies.isc_he_cnn.tables import IscSetting, Table2, Table3
from cryptoffload.studies.verdicts import Judging, full_command
from cryptoffload.studies.registry import Option, ReportContext, ReportRun, register_study
from cryptoffload.workloads.he_cnn_eva import PAPER_INPUTS_PROFILE
from cryptoffload.workloads.he_cnn_fitted import PAPER_PROFILE
from cryptoffload.workloads.he_models import FITTED_MODEL

NAME = "isc-he-cnn"
TITLE = "HE CNN inference on computational storage: FPGA-only vs FPGA&SSD vs CSD"
PAPER = PAPERS["in-storage-he"].cite()


@dataclass(kw_only=True)
class IscHeCnnConfig:
    quick: bool = True
    seed: int = 1
    model: str | None = None  # None/"paper": the paper's stated inputs; "fitted"; "generated"; else a trace
    fpga_profile: str = FPGA_PROFILE
    platform_profile: str = PLATFORM_PROFILE
    inputs_profile: str = PAPER_INPUTS_PROFILE
    fitted_profile: str = PAPER_PROFILE
    bandwidths: list[float] = field(default_factory=lambda: [1.0, 2.0, 4.0, 8.0, 16.0])
    devices: list[int] = field(default_factory=lambda: [1, 2, 4, 8, 16, 32])
    queries: int = 1
    dram_gb: float | None = None
    step_ms: float | None = None
    step_mb: float | None = None
    decompose: bool = True
    plan_clients: int = 10_000

    def validate(self) -> None:
        if not self.bandwidths or any(not (isinstance(b, (int, float)) and math.isfinite(b) and b > 0)
                                      for b in self.bandwidths):
            raise ConfigError(f"bandwidths must be positive GB/s, got {self.bandwidths!r}")
        if not self.devices or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in self.devices):
            raise ConfigError(f"devices must be positive integers, got {self.devices!r}")
        check_int("--queries", self.queries, maximum=1_000_000)
        check_int("--clients", self.plan_clients, maximum=10**9)
        for name in ("dram_gb", "step_ms", "step_mb"):
            v = getattr(self, name)
            if v is not None:
                check_bounded(f"--{name.replace('_', '-')}", v, DURATION_MS if name == "step_ms" else SIZE_MB,
                              "ms" if name == "step_ms" else name.rsplit("_", 1)[1].upper())

    @property
    def step_limits(self) -> tuple[float, float]:
        """Steps of at most this much compute (s) and fetched data (bytes): quick 2 ms / 16 MB,
        full 0.5 ms / 4 MB (exact per-op simulation agrees within ~1 %: see the docs)."""
        ms = self.step_ms or (2.0 if self.quick else 0.5)
        mb = self.step_mb or (16.0 if self.quick else 4.0)
        return ms * 1e-3, mb * 1e6


def _recorded_he_cnn_trace(ctx: ReportContext) -> Path:
    """One real encrypted MNIST inference (SEAL, per-channel packing): its op trace is what the
    in-storage study simulates next to the program of the paper's inputs."""
    from cryptoffload.apps.he_cnn.infer import infer_image
    from cryptoffload.io import write_json

    folder = ctx.out / "he-cnn"
    folder.mkdir(parents=True, exist_ok=True)
    trace = folder / "trace.json"
    res = infer_image(0, trace_out=trace)
    write_json(folder / "infer.json", res.as_dict())
    ctx.log(f"encrypted MNIST inference (image 0): predicted {res.prediction} (plaintext {res.plain_prediction}, "
            f"label {res.label}) in {res.seconds['evaluate']:.2f} s; trace written to {trace}")
    return trace


def _is_paper(cfg: IscHeCnnConfig) -> bool:
    return cfg.model in (None, "", "paper")


def _decomposes(cfg: IscHeCnnConfig) -> bool:
    """The paper's program gets the fitted program beside it and the gap decomposition."""
    return _is_paper(cfg) and cfg.decompose


def _steps(cfg: IscHeCnnConfig) -> int:
    """How many steps the run will take."""
    ks, bws, n = len(set(cfg.devices)), len(cfg.bandwidths), len(PLATFORMS)
    fit_steps = (bws + 7 + (0 if cfg.quick else ks * n)) if _decomposes(cfg) else 0
    bands = 0 if cfg.model == "fitted" else 1  # the fitted program is a fit: no bands
    return 3 + bands + bws + ks * n + fit_steps


def _setting(cfg: IscHeCnnConfig) -> IscSetting:
    """Load the world (and the fitted program's, when the gap is decomposed)."""
    frame.step("loading the program and the platforms")
    load = partial(load_isc_world, fpga_profile=cfg.fpga_profile, platform_profile=cfg.platform_profile,
                   fitted_profile=cfg.fitted_profile, dram_gb=cfg.dram_gb, step_limits=cfg.step_limits)
    world = load(cfg.model, inputs_profile=cfg.inputs_profile)
    fitted = load(FITTED_MODEL) if _decomposes(cfg) else None
    return IscSetting(world=world, fitted=fitted, bandwidths=list(cfg.bandwidths), devices=sorted(set(cfg.devices)),
                      queries=cfg.queries, seed=cfg.seed, quick=cfg.quick, step_limits=cfg.step_limits,
                      dram_cited=cfg.dram_gb is None, main_is_paper=_is_paper(cfg),
                      profile_names=tables.profile_names(cfg.fpga_profile, cfg.platform_profile, cfg.inputs_profile,
                                                         cfg.fitted_profile),
                      inputs_profile=cfg.inputs_profile)


def _sections(cfg: IscHeCnnConfig, setting: IscSetting) -> Sections:
    """The sections to fill: the profiles read and the fits they carry."""
    found = Sections(profiles=list(setting.world.profiles), key_figure="table2_latency.png")
    if setting.fitted is not None:
        found.profiles.append(profile_path(cfg.fitted_profile))
    if setting.fitted is not None or setting.program.source == "paper-calibrated":
        found.fits.update(profile_fits(cfg.fitted_profile))
    return found


@dataclass
class Gap:
    """The gap decomposition: its rows, table and the latencies by step (none without the fitted program)."""

    rows: list[isc_gap.GapRow] = field(default_factory=list)
    table: Table | None = None
    latencies_ms: dict[str, dict[str, float | None]] = field(default_factory=dict)


def _gap(setting: IscSetting) -> Gap:
    """The gap decomposition (only beside the paper's program, with the fitted one)."""
    if setting.fitted is None:
        return Gap()
    rows, vs = tables.gap_rows(setting)
    cols = tables.gap_columns(setting)
    return Gap(rows, tables.gap_table(setting, rows, vs), {r.label: dict(zip(cols, r.latencies_ms)) for r in rows})


def _banded_figures(setting: IscSetting, t2: Table2, t3: Table3,
                    head: Headline) -> tuple[dict[str, float], dict[str, float | None]]:
    """Ours and the paper's value of every figure the paper's program is banded on: Table 2's
    latencies, the headline ratios, Table 3's cells and the workload's predicted quantities."""
    ours = {isc_bands.table2_label(b): r.mean_latency_s * 1e3 for b, r in t2.runs.items()}
    paper: dict[str, float | None] = {isc_bands.table2_label(b): PAPER_TABLE2.get(float(b)) for b in t2.runs}
    for r in head.rows:
        if r.claim in (isc_bands.REDUCTION, isc_bands.THROUGHPUT) and r.value is not None:
            ours[r.claim], paper[r.claim] = r.value, r.paper_value
    for row in t3.rows:
        p3 = tables.paper_table3_row(row.devices)
        for col in TABLE3_COLUMNS[1:]:
            if getattr(row, col) is not None:
                label = isc_bands.table3_label(row.devices, col)
                ours[label], paper[label] = getattr(row, col), getattr(p3, col) if p3 is not None else None
    summ = setting.program.summary(setting.world.cost)
    sizes = {"evaluation keys per client (GB)": "keys_gb", "memory touched per inference (GB)": "touched_gb",
             "FPGA compute per inference (s)": "compute_s"}
    for q, read in isc_bands.WORKLOAD.items():
        ours[isc_bands.workload_label(q)], paper[isc_bands.workload_label(q)] = read(summ), PAPER_SIZES[sizes[q]]
    return ours, paper


def _bands(setting: IscSetting, t2: Table2, t3: Table3, head: Headline,
           fpga_profile: str) -> tuple[dict[str, Banded], list[Table]]:
    """The headline figures' bands and their tables: the paper's program's predicted figures
    (``bands.py``), or another program's own headline (``trace_claims.py``); none for
    the fitted program, which is a fit."""
    if not setting.paper_like:
        frame.step("bands: the FPGA op times, the key-switching rule, the CPU time")
        bands = trace_claims.trace_bands(setting, head, t2.cpu, fpga_profile)
        note = trace_claims.note(trace_claims.model_inputs(setting, fpga_profile), setting.quick)
    elif setting.main_is_paper:
        frame.step("bands: keyswitch_s, hidden, the key-switching rule")
        ours, paper = _banded_figures(setting, t2, t3, head)
        bands = isc_bands.isc_bands(setting, ours, paper, fpga_profile)
        note = isc_bands.note(setting.quick)
    else:
        return {}, []
    shown = [b for b in bands.values() if not b.figure.startswith(("Table 3,", "workload:"))]
    return bands, list(band_tables(shown, setting.inputs, note))


def _claims(setting: IscSetting, t2: Table2, head: Headline, gap: list[isc_gap.GapRow], bands: dict[str, Banded],
            tables_so_far: dict[str, Table]) -> tuple[list[Verdict], list[HeadlineEntry]]:
    """The paper's program: a verdict on every cell beside a paper value, and its headline claims
    with theirs. Another program: what it is, then its own headline figures as claims."""
    if setting.paper_like:
        judged = claims.verdicts(setting, tables_so_far, bands,
                                 Judging(setting.quick, "sample", full_command(NAME),
                                         "coarser steps, 2 ms / 16 MB, and the tornado's ends only"))
        return judged, list(claims.claims(head, judged, gap))
    return [], [claims.other_program_headline(setting), *trace_claims.trace_claims(setting, head, t2.cpu, bands)]


def _notes(setting: IscSetting, t2: Table2, t3: Table3, gap: list[isc_gap.GapRow]) -> list[str]:
    """Every difference from the paper beyond the tolerance, or (another program) what it is."""
    if setting.paper_like:
        notes = claims.table2_notes(setting, t2, gap) + claims.table3_note(t3) + claims.keys_note(setting)
    else:
        notes = claims.other_program_notes(setting, t2)
    return notes + list(setting.program.notes)


def _extras(cfg: IscHeCnnConfig, setting: IscSetting, t2: Table2) -> dict[str, object]:
    summ = setting.program.summary(setting.world.cost)
    return {"config": {"model": cfg.model or "paper", "bandwidths": list(cfg.bandwidths), "devices": setting.devices,
                       "queries": cfg.queries, "dram_gb": setting.csd.dram_bytes / GB,
                       "step_ms": cfg.step_limits[0] * 1e3, "step_mb": cfg.step_limits[1] / 1e6,
                       "steps": len(setting.world.compiled.steps)},
            "program": {k: v for k, v in summ.items() if k != "params"},
            "cpu": {"seconds": t2.cpu.seconds, "provenance": t2.cpu.provenance}}


@register_study(
    name=NAME, title=TITLE, paper=PAPERS["in-storage-he"], config=IscHeCnnConfig,
    summary="HE CNN inference on FPGA, FPGA&SSD and computational storage: Tables 2-3 predicted from the paper's inputs.",
    quick="Coarser op merging: about 20 s on 2 cores (docs/report.md).", seed=None,
    options=[
        Option("--model", "model",
               help="paper (default: built from the paper's stated inputs), fitted (phases fitted to Table 2), "
                    "generated (CNN generator) or a trace JSON."),
        Option("--dram-gb", "dram_gb", float, help="Device DRAM (default: the preset's 8 GB).", bound=SIZE_GB),
        Option("--queries", "queries", int, 1, "Inferences per device for the throughput runs.", bound=QUERIES),
        Option("--clients", "plan_clients", int, 10_000, "Clients for the capacity plan table.", bound=CLIENTS),
    ],
    # the program of the paper's inputs, then the trace of a real encrypted inference recorded here
    report=lambda spec: [
        ReportRun(NAME, spec.default_config),
        ReportRun(f"{NAME}-trace", lambda ctx: spec.default_config(
            ctx, model=str(ctx.artifact("he-cnn-trace", _recorded_he_cnn_trace)))),
    ],
)
def run(cfg: IscHeCnnConfig) -> Sections:
    """Table 2, Table 3 (and from the fitted program, full mode), the headline, the gap, the
    claims, the workload, a capacity plan, the notes, the figures."""
    frame.expect(_steps(cfg))
    setting = _setting(cfg)
    found = _sections(cfg, setting)
    t2 = tables.table2(setting)
    found.tables.append(tables.table2_table(setting, t2))
    t3 = tables.table3(setting, setting.world.compiled, "predicted" if setting.main_is_paper else setting.program.name)
    found.tables.append(tables.table3_table(setting, t3))
    if setting.fitted is not None and not cfg.quick:
        found.tables.append(tables.table3_fitted_table(setting, tables.table3(setting, setting.fitted.compiled,
                                                                              "fitted program")))
    head = claims.headline(setting, t2, t3)
    if head.rows:
        found.tables.append(claims.headline_table(setting, head))
    gap = _gap(setting)
    if gap.table is not None:
        found.fits[isc_gap.COMPUTE_FIT] = "Table 2"
        found.tables.append(gap.table)
        found.extra["gap"] = gap.latencies_ms
    found.tables.append(tables.workload_table(setting, t2))
    bands, band_tables_ = _bands(setting, t2, t3, head, cfg.fpga_profile)
    found.tables += band_tables_
    found.verdicts, found.headline = _claims(setting, t2, head, gap.rows, bands, found.by_id)
    frame.step("capacity plan")
    found.tables.append(plan_table(plan_isc(cfg.plan_clients, setting.world), "plan_clients"))
    found.notes = _notes(setting, t2, t3, gap.rows)
    found.extra.update(_extras(cfg, setting, t2))
    found.figures = figures(setting, t2, t3)
    return found


__all__ = ["CPU_LABEL", "FITTED", "IscHeCnnConfig", "NAME", "PAPER_CPU_MS", "PAPER_HEADLINE", "PAPER_SIZES",
           "PAPER_TABLE2", "PAPER_TABLE3", "PREDICTED", "TABLE3_COLUMNS", "TITLE", "TOLERANCE", "run"]
