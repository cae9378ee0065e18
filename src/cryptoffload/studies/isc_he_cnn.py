"""Study ``isc-he-cnn``: homomorphic CNN inference on computational storage.

The in-storage HE paper (Suzuki and Yamana) asks where an FPGA running CKKS should get the
weights and keys that do not fit in its DRAM: from host memory (FPGA-only), from an SSD through
the host (FPGA&SSD) or from NAND flash on the same device (CSD). It answers by simulation:
Table 2 (latency vs source bandwidth, and a CPU) and Table 3 (k devices on 32 PCIe lanes). We
rebuild that simulation (``sim/fpga_cost.py``, ``sim/isc_platform.py``: an FPGA with per-level op
times, DRAM with eviction of dead data, NAND, SSDs and shared PCIe lanes, transfers prefetched
in program order) and feed it the CNN built from the paper's *stated inputs*
(``workloads/he_cnn_eva.py``: network, EVA parameters, data sizes), so Tables 2 and 3 are
**predicted**. The program whose phases were fitted to Table 2 stays beside as a secondary,
**fitted** row, and ``studies/isc_gap.py`` decomposes the gap between the two input by input.
Everything is *simulated* except the CPU row, which is *cited* (11,359 ms) unless a trace
carries wall times (then *measured*).

:func:`cryptoffload.policies.isc_plan.plan_isc` answers the planning question the paper
reasons about in section 4.5.1: how many CSDs and how much NAND for ``M`` clients and a given
model; the study and the planner start from the same world (``sim/isc_world.py``).

:func:`run` is the study's table of contents; the tables live in ``_isc_tables.py``, the claims
and notes in ``_isc_claims.py`` (a program that is not the paper's, such as the report's recorded
trace: ``_isc_trace_claims.py``), the figures in ``_isc_figures.py``, the paper's numbers in
``_isc_paper.py``.
"""

from __future__ import annotations

import math
import time as _time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Callable

from cryptoffload import __version__
from cryptoffload.checks import CLIENTS, DURATION_MS, QUERIES, SIZE_GB, SIZE_MB, check_bounded, check_int
from cryptoffload.errors import ConfigError
from cryptoffload.machine import machine_info
from cryptoffload.papers import PAPERS
from cryptoffload.policies.isc_plan import plan_isc
from cryptoffload.profiles.fits import profile_fits
from cryptoffload.report.result import StudyResult, write_result
from cryptoffload.sim.fpga_cost import FPGA_PROFILE
from cryptoffload.sim.isc_platform import PLATFORM_PROFILE, PLATFORMS
from cryptoffload.sim.isc_world import load_isc_world, profile_path
from cryptoffload.studies import _isc_bands as isc_bands
from cryptoffload.studies import _isc_claims as claims
from cryptoffload.studies import _isc_tables as tables
from cryptoffload.studies import _isc_trace_claims as trace_claims
from cryptoffload.studies import isc_gap
from cryptoffload.studies._bands import Banded, band_tables
from cryptoffload.studies._isc_figures import figures
from cryptoffload.studies._isc_paper import (CPU_LABEL, FITTED, GB, PAPER_CPU_MS, PAPER_HEADLINE, PAPER_SIZES,
                                             PAPER_TABLE2, PAPER_TABLE3, PREDICTED, TABLE3_COLUMNS, TOLERANCE)
from cryptoffload.studies._isc_plan_table import plan_table
from cryptoffload.studies._isc_claims import Headline
from cryptoffload.studies._isc_tables import IscSetting, Table2, Table3
from cryptoffload.studies._verdicts import Judging, add_verdicts, full_command
from cryptoffload.studies.registry import Option, ReportContext, ReportRun, register_study
from cryptoffload.workloads.he_cnn_eva import PAPER_INPUTS_PROFILE
from cryptoffload.workloads.he_cnn_fitted import PAPER_PROFILE
from cryptoffload.workloads.he_models import FITTED_MODEL

NAME = "isc-he-cnn"
TITLE = "HE CNN inference on computational storage: FPGA-only vs FPGA&SSD vs CSD"
PAPER = PAPERS["in-storage-he"].cite()


@dataclass
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


def _progress(cfg: IscHeCnnConfig, progress: Callable[[int], Callable[[str], None]] | None) -> Callable[[str], None]:
    """The progress callback, told how many steps the run will take."""
    ks, bws, n = len(set(cfg.devices)), len(cfg.bandwidths), len(PLATFORMS)
    fit_steps = (bws + 7 + (0 if cfg.quick else ks * n)) if _decomposes(cfg) else 0
    bands = 0 if cfg.model == "fitted" else 1  # the fitted program is a fit: no bands
    tick = progress(3 + bands + bws + ks * n + fit_steps) if progress else None
    return tick or (lambda label: None)


def _setting(cfg: IscHeCnnConfig, say: Callable[[str], None]) -> IscSetting:
    """Load the world (and the fitted program's, when the gap is decomposed)."""
    say("loading the program and the platforms")
    load = partial(load_isc_world, fpga_profile=cfg.fpga_profile, platform_profile=cfg.platform_profile,
                   fitted_profile=cfg.fitted_profile, dram_gb=cfg.dram_gb, step_limits=cfg.step_limits)
    world = load(cfg.model, inputs_profile=cfg.inputs_profile)
    fitted = load(FITTED_MODEL) if _decomposes(cfg) else None
    return IscSetting(world, fitted, list(cfg.bandwidths), sorted(set(cfg.devices)), cfg.queries, cfg.seed, cfg.quick,
                      cfg.step_limits, cfg.dram_gb is None, _is_paper(cfg),
                      tables.profile_names(cfg.fpga_profile, cfg.platform_profile, cfg.inputs_profile,
                                           cfg.fitted_profile), cfg.inputs_profile, say)


def _new_result(cfg: IscHeCnnConfig, setting: IscSetting) -> StudyResult:
    """The result, with the profiles read and the fits they carry declared."""
    result = StudyResult(NAME, TITLE, "quick" if cfg.quick else "full", cfg.seed, __version__, machine_info(),
                         profiles=list(setting.world.profiles), paper=PAPER)
    if setting.fitted is not None:
        result.profiles.append(profile_path(cfg.fitted_profile))
    if setting.fitted is not None or setting.program.source == "paper-calibrated":
        result.declare_fits(profile_fits(cfg.fitted_profile))
    return result


def _gap(setting: IscSetting, result: StudyResult) -> list[isc_gap.GapRow]:
    """The gap decomposition (only beside the paper's program, with the fitted one)."""
    if setting.fitted is None:
        return []
    rows, vs = tables.gap_rows(setting)
    result.declare_fits({isc_gap.COMPUTE_FIT: "Table 2"})
    result.add(tables.gap_table(setting, rows, vs))
    cols = tables.gap_columns(setting)
    result.extra["gap"] = {r.label: dict(zip(cols, r.latencies_ms)) for r in rows}
    return rows


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


def _bands(setting: IscSetting, t2: Table2, t3: Table3, head: Headline, result: StudyResult,
           fpga_profile: str) -> dict[str, Banded]:
    """The headline figures' bands and their tables: the paper's program's predicted figures
    (``_isc_bands.py``), or another program's own headline (``_isc_trace_claims.py``); none for
    the fitted program, which is a fit."""
    if not setting.paper_like:
        setting.say("bands: the FPGA op times, the key-switching rule, the CPU time")
        bands = trace_claims.trace_bands(setting, head, t2.cpu, fpga_profile)
        note = trace_claims.note(trace_claims.model_inputs(setting, fpga_profile), setting.quick)
    elif setting.main_is_paper:
        setting.say("bands: keyswitch_s, hidden, the key-switching rule")
        ours, paper = _banded_figures(setting, t2, t3, head)
        bands = isc_bands.isc_bands(setting, ours, paper, fpga_profile)
        note = isc_bands.note(setting.quick)
    else:
        return {}
    shown = [b for b in bands.values() if not b.figure.startswith(("Table 3,", "workload:"))]
    for table in band_tables(shown, setting.inputs, note):
        result.add(table)
    return bands


def _claims(setting: IscSetting, t2: Table2, head: Headline, gap: list[isc_gap.GapRow], bands: dict[str, Banded],
            result: StudyResult) -> None:
    """The paper's program: a verdict on every cell beside a paper value, and its headline claims
    with theirs. Another program: what it is, then its own headline figures as claims."""
    if setting.paper_like:
        judged = claims.verdicts(setting, result.tables, bands,
                                 Judging(setting.quick, "sample", full_command(NAME),
                                         "coarser steps, 2 ms / 16 MB, and the tornado's ends only"))
        found = claims.claims(head, judged, gap)
        add_verdicts(result, judged)
    else:
        result.headline.append(claims.other_program_headline(setting))
        found = trace_claims.trace_claims(setting, head, t2.cpu, bands)
    for c in found:
        result.claim(c)


def _notes(setting: IscSetting, t2: Table2, t3: Table3, head: Headline,
           gap: list[isc_gap.GapRow], result: StudyResult) -> None:
    """Every difference from the paper beyond the tolerance, or (another program) what it is."""
    if setting.paper_like:
        result.notes += claims.table2_notes(setting, t2, gap) + claims.table3_note(t3) + claims.keys_note(setting)
    else:
        result.notes += claims.other_program_notes(setting, t2)
    result.notes.extend(setting.program.notes)


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
def run(cfg: IscHeCnnConfig, out: str | Path,
        progress: Callable[[int], Callable[[str], None]] | None = None) -> StudyResult:
    """Table 2, Table 3 (and from the fitted program, full mode), the headline, the gap, the
    claims, the workload, a capacity plan, the notes; then the figures and the files."""
    cfg.validate()
    started = _time.perf_counter()
    say = _progress(cfg, progress)
    setting = _setting(cfg, say)
    result = _new_result(cfg, setting)
    t2 = tables.table2(setting)
    result.add(tables.table2_table(setting, t2))
    t3 = tables.table3(setting, setting.world.compiled, "predicted" if setting.main_is_paper else setting.program.name)
    result.add(tables.table3_table(setting, t3))
    if setting.fitted is not None and not cfg.quick:
        result.add(tables.table3_fitted_table(setting, tables.table3(setting, setting.fitted.compiled, "fitted program")))
    head = claims.headline(setting, t2, t3)
    if head.rows:
        result.add(claims.headline_table(setting, head))
    gap = _gap(setting, result)
    result.add(tables.workload_table(setting, t2))
    bands = _bands(setting, t2, t3, head, result, cfg.fpga_profile)
    _claims(setting, t2, head, gap, bands, result)
    say("capacity plan")
    result.add(plan_table(plan_isc(cfg.plan_clients, setting.world), "plan_clients"))
    _notes(setting, t2, t3, head, gap, result)
    result.extra.update(_extras(cfg, setting, t2))
    result.key_figure = "table2_latency.png"
    say("writing results")
    result.elapsed_s = _time.perf_counter() - started
    write_result(result, out, figures(setting, t2, t3))
    return result


__all__ = ["CPU_LABEL", "FITTED", "IscHeCnnConfig", "NAME", "PAPER_CPU_MS", "PAPER_HEADLINE", "PAPER_SIZES",
           "PAPER_TABLE2", "PAPER_TABLE3", "PREDICTED", "TABLE3_COLUMNS", "TITLE", "TOLERANCE", "run"]
