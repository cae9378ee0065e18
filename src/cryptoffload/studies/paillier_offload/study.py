"""Zhou and Hua's QAT paper (QHCS): Paillier encryption offloaded to a QAT card with coroutines,
modelled, and the same four client modes run for real on this machine's cores -- and, where a
CUDA GPU is present, our GPU kernels measured beside them, with the simulated GPU (calibrated in
the run) checked against measured runs it was not fitted on (``studies/paillier_gpu.py``).

Why two halves: we have no QAT card, so the paper's Table 1 (SW, QAT+S1, QAT+S2, QHCS1,
QHCS2) is reproduced by the DH8970 model (``sim/qat/model.py``; ``studies/paillier_offload/qat_model.py``): a cited
card rate, CPU costs measured here, and three values fitted to Table 1 and labelled fitted;
what none of the fits moves -- the ceiling the card puts on QHCS1, QHCS2 against QHCS1 -- is
predicted. What users actually ask -- what would a card, or more
cores, bring over what I have -- needs real numbers, so the same four modes (synchronous,
many threads, one and two coroutines per encryption) drive our real offload engine
(``engines/``) and are measured here, next to phe and an IPCL-style baseline, one core and all
cores. A planning table turns the measured per-core rates into "cores needed to match one
DH8970".

The measured half uses 1024-bit keys, the paper's size, as an explicit study setting (below
the 112-bit level; never a default for real use).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from cryptoffload import bench
from cryptoffload.calibrate.paillier_cores import all_cores_encryption_rate
from cryptoffload.checks import ENCRYPTIONS, IN_FLIGHT, KEY_BITS, THREADS, check_int, check_positive
from cryptoffload.crypto import paillier as pl
from cryptoffload.engines.modes import CLIENT_MODES, ModeResult
from cryptoffload.engines.registry import ENGINE_NAMES, ENGINES
from cryptoffload.errors import ConfigError
from cryptoffload.papers import PAPERS
from cryptoffload.report.plots import bar_plot, line_plot
from cryptoffload.report.result import Table
from cryptoffload.report.rows import column, table_of
from cryptoffload.sim.qat import model as qat
from cryptoffload.studies import frame
from cryptoffload.studies import paillier_gpu as _gpu
from cryptoffload.studies.bands import band_tables
from cryptoffload.studies.frame import Sections
from cryptoffload.studies.paillier_offload import qat_model as qm
from cryptoffload.studies.paillier_offload.measured import (
    IPCL_STYLE,
    OURS_FASTEST,
    OURS_ONLINE,
    PHE,
    TEXTBOOK,
    RoleCase,
    baseline_cases,
    case_of,
    decryption_cases,
    measure_modes,
)
from cryptoffload.studies.paillier_offload.qat_bands import note as bands_note
from cryptoffload.studies.paillier_offload.qat_bands import qat_bands
from cryptoffload.studies.paillier_offload.qat_model import Table1Row
from cryptoffload.studies.verdicts import Judging, full_command
from cryptoffload.report.provenance import printed
from cryptoffload.studies.registry import Option, register_study

NAME = "paillier-offload"
TITLE = "Paillier offload: QAT coroutines modelled; CPU, IFMA and GPU engines measured"
PAPER = PAPERS["qat-paillier"].cite()

QHCS1_OPS = qm.QHCS1_OPS
# Cited in the paper (Table 1, from the literature): San et al. FPGA, Cai et al. ASIC.
PAPER_FPGA = {"latency_s": 11.29e-3, "ops_13_instances": 1151.0}
PAPER_ASIC = {"latency_s": 5.9e-3}
PAPER_RATIOS = qm.PAPER_RATIOS
SIM_LABELS = qm.SIM_LABELS
MODE_LABELS = {"sync": "S1-like: one synchronous caller", "threads": "S2-like: many synchronous threads",
               "coro1": "QHCS1-like: one coroutine per encryption", "coro2": "QHCS2-like: two coroutines per encryption",
               "batch": "batched DJN encryption jobs (beyond the paper)"}


@dataclass(kw_only=True)
class PaillierOffloadConfig:
    quick: bool = True
    seed: int = 1
    bits: int = 1024
    sim_count: int | None = None
    measure_count: int | None = None
    engine: str = "auto"
    threads: int = 64
    inflight: int = 256
    seconds: float | None = None
    rounds: int | None = None
    profile: str = qat.PROFILE_NAME
    card_scaling: str = "qat-measured"
    all_cores: bool = True
    measure: bool = True
    gpu: bool = True
    sweep_inflight: list[int] = field(default_factory=lambda: [1, 4, 16, 64, 256, 1024])

    def validate(self) -> None:
        pl.check_key_bits(self.bits, insecure_study_size=True)
        # ceilings: the simulation keeps every job in memory, the measured half runs each one
        for name, flag, most in (("sim_count", "--sim-encryptions", 10_000_000),
                                 ("measure_count", "--encryptions", 1_000_000), ("rounds", "rounds", 100)):
            v = getattr(self, name)
            if v is not None:
                check_int(flag, v, maximum=most)
        if self.seconds is not None:
            check_positive("seconds", self.seconds, minimum=1e-3, maximum=3600, unit="s")
        check_int("--threads", self.threads, maximum=4096)
        check_int("--inflight", self.inflight, maximum=1_000_000)
        for i in self.sweep_inflight:
            check_int("in-flight count", i, maximum=1_000_000)
        if self.card_scaling not in qat.CARD_SCALINGS:
            raise ConfigError(f"unknown card scaling {self.card_scaling!r} (choose from {', '.join(qat.CARD_SCALINGS)})")

    @property
    def n_sim(self) -> int:
        return self.sim_count or (3_000 if self.quick else 30_000)

    @property
    def n_measure(self) -> int:
        return self.measure_count or (512 if self.quick else 4_000)

    @property
    def case_seconds(self) -> float:
        return self.seconds or (0.15 if self.quick else 0.5)

    @property
    def n_rounds(self) -> int:
        return self.rounds or (2 if self.quick else 3)


@register_study(
    name=NAME, title=TITLE, paper=PAPERS["qat-paillier"], config=PaillierOffloadConfig,
    summary="Paillier offload to QAT with coroutines (simulated) and on this machine (measured).",
    quick="Reduced run (3,000 simulated, 512 measured encryptions): about 15 s on 2 cores (docs/report.md).",
    seed="Seed of the simulation (cryptography is never seeded).",
    options=[
        Option("--bits", "bits", int, 1024, "Key size of the measured half (paper: 1024, a study setting).",
               bound=KEY_BITS),
        Option("--sim-encryptions", "sim_count", int, help="Simulated encryptions per mode (default 30,000).",
               bound=ENCRYPTIONS),
        Option("--encryptions", "measure_count", int, help="Measured encryptions per mode (default 4,000).",
               bound=ENCRYPTIONS, maximum=1_000_000),
        Option("--engine", "engine", str, "auto", f"Offload engine for the measured modes: {', '.join(ENGINE_NAMES)}."),
        Option("--threads", "threads", int, 64, "Threads of the S2-like mode.", bound=THREADS),
        Option("--inflight", "inflight", int, 256, "Encryptions in flight in the coroutine modes.", bound=IN_FLIGHT),
        Option("--profile", "profile", str, qat.PROFILE_NAME, "QAT cost profile (name or TOML path)."),
        Option("--card-scaling", "card_scaling", str, "qat-measured",
               "How a card modexp's cost grows with the modulus: qat-measured (Intel's RSA rates) or quadratic."),
        Option("--measure/--no-measure", "measure", bool, True, "Also measure on this machine."),
        Option("--all-cores/--one-core", "all_cores", bool, True, "Also measure with every core."),
        Option("--gpu/--no-gpu", "gpu", bool, True,
               "Also measure on a CUDA GPU where one is present (calibrates it; simulated GPU vs measured runs)."),
    ],
)
def run(cfg: PaillierOffloadConfig) -> Sections:
    """The paper's designs on the DH8970 model, the measured half here (one core, every core,
    the GPU), Table 1 and its ratios, the bands, verdicts and claims."""
    gpu_reason = ENGINES["gpu"].reason() if (cfg.measure and cfg.gpu) else None
    frame.expect(_steps(cfg, gpu_reason))
    model = qm.run_model(cfg.profile, cfg.card_scaling, cfg.n_sim, cfg.seed, cfg.sweep_inflight)
    here = _measure(cfg, gpu_reason) if cfg.measure else MeasuredHalf()
    found = Sections(profiles=[f"profiles/{cfg.profile}.toml" if "/" not in cfg.profile else cfg.profile],
                     fits=dict(model.fits))
    found.profiles += _measured_profiles(here)
    found.extra.update(_measured_setup(cfg, here))
    table1, rows = _table1(cfg, model, here)
    found.tables.append(table1)
    if here.gpu is not None:
        found.tables.append(_gpu_table(cfg, here.gpu))
        found.headline.append(_gpu_headline(here.gpu))
    found.tables += [qm.ratio_table(model, here.mode_ratio, here.coro1_over_textbook), qm.inputs_table(cfg.profile),
                     qm.readings_table(cfg.profile, model.sim["sw"].throughput_ops)]
    if here.encryption:
        found.tables += _one_core_tables(cfg, here)
        found.extra.update(_all_cores_extra(here))
        found.headline += _measured_headlines(here)
    ours, paper = qm.model_figures(model)
    bands = qat_bands(cfg.profile, cfg.card_scaling, cfg.seed, ours, paper, quick=cfg.quick,
                      paper_ranges=qm.PAPER_STATED_RANGES)
    found.tables += band_tables(bands, [model.profile_key], bands_note(cfg.quick))
    by_figure = {b.figure: b for b in bands}
    found.verdicts = qm.verdicts(found.by_id, by_figure, Judging(cfg.quick, "sample", full_command(NAME),
                                                                  "fewer simulated encryptions"))
    claims, notes = qm.claims(model, found.verdicts, by_figure)
    found.headline += claims
    found.notes += notes
    if not cfg.measure:
        found.notes.append("measured half skipped (--no-measure): only simulated rows")
    found.extra["config"] = {"bits": cfg.bits, "sim_encryptions": cfg.n_sim, "measured_encryptions": cfg.n_measure,
                             "threads": cfg.threads, "inflight": cfg.inflight, "engine": cfg.engine}
    found.figures = _figures(cfg, rows, model.sweep, here.sweep)
    return found


def _steps(cfg: PaillierOffloadConfig, gpu_reason: str | None) -> int:
    """Progress steps: the model's designs and sweep, the measured cases and modes, the GPU's calibration."""
    gpu_steps = 3 + len(_gpu.FIT_FRACTIONS) * 3 + 1 + len(_gpu.holdout_workloads(1 << 18)) if cfg.measure and cfg.gpu else 0
    return (5 + len(qat.QAT_DESIGNS) + len(cfg.sweep_inflight) * 2 + (2 * len(CLIENT_MODES) + 4 if cfg.measure else 0)
            + (gpu_steps if gpu_reason is None else 0))


@dataclass
class AllCores:
    """Our fastest encryption with every core (measured)."""

    ops: float
    cores: int


@dataclass
class MeasuredHalf:
    """What this machine measured (empty with --no-measure): one-core baselines, the paper's
    modes on our engine (one core, and every core), and the GPU where one ran."""

    engine: str = ""
    pinned_cpu: int | None = None
    encryption: list[RoleCase] = field(default_factory=list)
    decryption: list[bench.Case] = field(default_factory=list)
    modes: dict[str, ModeResult] = field(default_factory=dict)
    modes_all: dict[str, ModeResult] = field(default_factory=dict)
    sweep: dict[int, ModeResult] = field(default_factory=dict)
    all_cores: AllCores | None = None
    gpu: _gpu.PaillierGpuRun | None = None
    gpu_reason: str | None = None

    def rate(self, role: str) -> float | None:
        """The one-core encryption rate of the baseline playing ``role`` (None: not measured)."""
        case = case_of(self.encryption, role)
        return None if case is None else case.median_rate

    def mode_ratio(self, a: str, b: str, attr: str) -> float | None:
        """Mode ``a``'s ``attr`` over mode ``b``'s, one core; None where either did not run."""
        if a in self.modes and b in self.modes:
            return getattr(self.modes[a], attr) / getattr(self.modes[b], attr)
        return None

    @property
    def coro1_over_textbook(self) -> float | None:
        """QHCS1-like on our engine over the textbook software encryption (the paper's QHCS1 / SW)."""
        sw_here = self.rate(TEXTBOOK)
        return self.modes["coro1"].throughput / sw_here if ("coro1" in self.modes and sw_here) else None


def _measure(cfg: PaillierOffloadConfig, gpu_reason: str | None) -> MeasuredHalf:
    """One core (pinned): baselines, decryption, the paper's modes; then every core; then the GPU
    (its measured profile written into the study's folder)."""
    pk, sk = pl.generate_keypair(cfg.bits, insecure_study_size=True)
    here = MeasuredHalf(gpu_reason=gpu_reason)
    frame.step("measuring baselines (one core)")
    here.pinned_cpu = bench.pin_to_one_core()
    try:
        here.encryption = baseline_cases(pk, sk)
        # interleaved() times the cases in place (and hands back the list it was given)
        bench.interleaved(list[bench.Case](here.encryption), cfg.case_seconds, cfg.n_rounds)
        frame.step("measuring decryption (one core)")
        here.decryption = bench.interleaved(decryption_cases(pk, sk), cfg.case_seconds, cfg.n_rounds)
        here.modes, here.sweep, here.engine = measure_modes(cfg, pk, sk, 1, cfg.sweep_inflight)
    finally:
        bench.unpin()
    if cfg.all_cores:
        frame.step("measuring all cores")
        ops, cores = all_cores_encryption_rate(pk, max(cfg.case_seconds * cfg.n_rounds, 0.5),
                                               constant_time=False, batch=1024)
        here.all_cores = AllCores(ops, cores)
        here.modes_all, _, _ = measure_modes(cfg, pk, sk, cores)
    if cfg.gpu and gpu_reason is None:
        here.gpu = _gpu.measure_paillier_gpu(pk, sk, frame.folder(), quick=cfg.quick)
    return here


def _measured_setup(cfg: PaillierOffloadConfig, here: MeasuredHalf) -> dict[str, object]:
    """Where the measured half ran: the pinned core, the engine, the GPU (or why not)."""
    if not cfg.measure:
        return {}
    setup: dict[str, object] = {"pinned_cpu": here.pinned_cpu, "engine": here.engine}
    if here.gpu is not None:
        setup["gpu"] = here.gpu.info
    elif cfg.gpu:
        setup["gpu_not_measured"] = here.gpu_reason
    return setup


def _measured_profiles(here: MeasuredHalf) -> list[str]:
    """The GPU profile measured in this run, where one was."""
    return [str(here.gpu.profile)] if here.gpu is not None else []


def _cited_rows(platform_note: str) -> list[Table1Row]:
    """The paper's literature figures (Table 1): San et al.'s FPGA, Cai et al.'s ASIC."""
    return [Table1Row("FPGA (San et al.)", printed(), f"13 instances on one FPGA{platform_note}",
                      PAPER_FPGA["ops_13_instances"], PAPER_FPGA["latency_s"] * 1e3, None),
            Table1Row("ASIC (Cai et al.)", printed(), f"one core{platform_note}", 1 / PAPER_ASIC["latency_s"],
                      PAPER_ASIC["latency_s"] * 1e3, None)]


def _mode_rows(modes: dict[str, ModeResult], engine: str, platform: str) -> list[Table1Row]:
    return [Table1Row(f"{MODE_LABELS[mode]} [{engine}]", "measured", platform, r.throughput, r.mean_latency * 1e3,
                      r.p99_latency * 1e3) for mode, r in modes.items()]


def _measured_rows(here: MeasuredHalf) -> list[Table1Row]:
    """Ours, measured: one-core baselines and modes, every core, the GPU."""
    rows = [Table1Row(c.name, "measured", "this machine, 1 core", c.median_rate, None, None) for c in here.encryption]
    rows += _mode_rows(here.modes, here.engine, "this machine, 1 core")
    if here.all_cores:
        n = here.all_cores.cores
        rows.append(Table1Row(f"ours, fastest, all {n} cores", "measured", f"this machine, {n} cores",
                              here.all_cores.ops, None, None))
        rows += _mode_rows(here.modes_all, f"{here.engine} x{n}", f"this machine, {n} cores")
    g = here.gpu
    if g is not None:
        rows.append(Table1Row(f"ours, GPU, DJN constant-time table, batches of {g.batch:,} with copies", "measured",
                              g.device, g.encrypt_ops, None, None))
        rows.append(Table1Row(f"ours, GPU, CRT decryption (constant time), batches of {g.batch:,} with copies",
                              "measured", g.device, g.decrypt_ops, None, None))
    return rows


def _table1(cfg: PaillierOffloadConfig, model: qm.QatModel, here: MeasuredHalf) -> tuple[Table, list[Table1Row]]:
    """Table 1: the paper's implementations on the DH8970 model, the cited ones, and ours measured."""
    short = f" ({PAPERS['qat-paillier'].short()}, Table 1)"
    rows = list(model.rows) + _cited_rows(short) + _measured_rows(here)
    paper_rows = list(model.paper_rows) + _cited_rows("")
    gpu_missing = cfg.measure and cfg.gpu and here.gpu_reason
    return (table_of(
        Table1Row, rows, paper=paper_rows, id="table1_implementations",
        title=f"Paillier encryption, {cfg.bits}-bit key: the paper's implementations (DH8970 model) and ours (measured)",
        provenance="mixed", reproduces="Table 1", paper_derived=qm.T1_PAPER_DERIVED,
        row_inputs=model.row_inputs + [[] for _ in rows[len(model.rows):]],
        note="Model rows: DH8970 model (sim/qat/params.py: cited card rate, CPU costs measured here, three "
             "values fitted to Table 1 and labelled so); the ceiling row uses cited inputs only. Paper values "
             "are derived from the ratios in its text (Table 1 itself is not in our copy). Cited rows: the "
             "paper's literature figures. Measured rows: this machine; baselines report throughput only "
             "(batched calls). The S1..QHCS2-like rows do the paper's work unit, two textbook "
             "modexps (g^m, r^n) per encryption, through our offload engine."
             + (f" GPU rows: not measured: {here.gpu_reason}." if gpu_missing else "")), rows)


def _gpu_table(cfg: PaillierOffloadConfig, g: _gpu.PaillierGpuRun) -> Table:
    """The simulated GPU against measured runs it was not fitted on."""
    return (table_of(
        _gpu.GpuModelRow, g.model_rows, id="gpu_model_vs_measured",
        title=f"Simulated GPU (profile measured in this run) vs measured runs it was not fitted on, {cfg.bits}-bit key",
        provenance="mixed",
        column_provenance={"items": "input", "predicted_s": "simulated", "measured_s": "measured", "error_rel": "derived"},
        note=f"Profile: {g.profile.name}, fitted to single launches at batches "
             f"{', '.join(f'{b:,}' for b in _gpu.fit_batches(g.batch))} (device-resident). Predictions: "
             "sim/gpu.py, copies in and out over two PCIe links and one kernel at a time, two "
             "streams. Measured: the same batches with copies, two streams, median of 3 runs."))


def _gpu_headline(g: _gpu.PaillierGpuRun) -> str:
    """The GPU's rates and how close its model came."""
    return (f"GPU ({g.device}): {g.encrypt_ops:,.0f} enc/s and {g.decrypt_ops:,.0f} "
                           f"CRT dec/s with copies (measured); GPU model within {g.worst_error:.0%} of measured runs it "
                           "was not fitted on")


@dataclass(frozen=True)
class OneCoreEncryptionRow:
    implementation: str = column()
    throughput_ops: float = column()
    x_phe: float | None = column()
    x_ipcl_style: float | None = column()
    spread: float = column()


@dataclass(frozen=True)
class OneCoreDecryptionRow:
    implementation: str = column()
    throughput_ops: float = column()
    spread: float = column()


@dataclass(frozen=True)
class CoresPlanRow:
    implementation: str = column()
    per_core_ops: float = column()
    cores_to_match_qhcs1: float = column()


def _one_core_tables(cfg: PaillierOffloadConfig, here: MeasuredHalf) -> list[Table]:
    """Encryption and decryption on one core (measured), and the cores that match one DH8970."""
    phe, ipcl = here.rate(PHE), here.rate(IPCL_STYLE)
    enc = [OneCoreEncryptionRow(c.name, c.median_rate, c.median_rate / phe if phe else None,
                                c.median_rate / ipcl if ipcl else None, c.spread) for c in here.encryption]
    return [table_of(OneCoreEncryptionRow, enc, id="encryption_one_core",
                        title=f"Encryption on one core, {cfg.bits}-bit key (measured, interleaved rounds)",
                        provenance="measured",
                        note=f"Median of {cfg.n_rounds} rounds of {cfg.case_seconds}s per case; spread = half-range / median."),
            table_of(OneCoreDecryptionRow, [OneCoreDecryptionRow(c.name, c.median_rate, c.spread)
                                               for c in here.decryption],
                        id="decryption_one_core", title=f"Decryption on one core, {cfg.bits}-bit key (measured)",
                        provenance="measured"),
            table_of(CoresPlanRow, _cores_plan(here), id="plan_cores_vs_qat",
                     title="Cores of this machine needed to match one DH8970 running QHCS1 (27,400 enc/s)",
                     provenance="measured",
                     note="Derived from the measured one-core rates, assuming linear scaling over cores; "
                          "the all-cores row of table1_implementations checks that assumption.")]


def _cores_plan(here: MeasuredHalf) -> list[CoresPlanRow]:
    return [CoresPlanRow(c.name, c.median_rate, QHCS1_OPS / c.median_rate) for c in here.encryption
            if c.role != OURS_ONLINE]


def _all_cores_extra(here: MeasuredHalf) -> dict[str, object]:
    if not here.all_cores:
        return {}
    return {"all_cores_ops": here.all_cores.ops, "cores": here.all_cores.cores,
            "all_cores_vs_qhcs1": here.all_cores.ops / QHCS1_OPS}


def _measured_headlines(here: MeasuredHalf) -> list[str]:
    """Ours against phe and IPCL-style on one core, and every core against QHCS1."""
    phe, ipcl, fastest = here.rate(PHE), here.rate(IPCL_STYLE), here.rate(OURS_FASTEST)
    lines = []
    if fastest is not None and phe:
        line = f"Ours, fastest, one core: {fastest:,.0f} enc/s = {fastest / phe:.0f}x phe"
        if ipcl:
            line += f", {fastest / ipcl:.1f}x IPCL-style"
        lines.append(line + " (measured)")
    if here.all_cores:
        a = here.all_cores
        lines.append(f"All {a.cores} cores: {a.ops:,.0f} enc/s = {a.ops / QHCS1_OPS:.2f}x "
                     "QHCS1 on a DH8970 (measured here vs the paper's figure)")
    return lines


def _figures(cfg: PaillierOffloadConfig, rows: list[Table1Row], sim_sweep: dict[int, qat.QatRunResult],
             meas_sweep: dict[int, ModeResult]):
    def bars(path: Path) -> None:
        ops = []
        for r in rows:
            assert r.throughput_ops is not None, "our Table 1 rows all carry a throughput"
            ops.append(float(r.throughput_ops))
        bar_plot(path, [r.implementation for r in rows], ops,
                 kinds=[str(r.provenance) for r in rows], title=f"Paillier encryption throughput, {cfg.bits}-bit key",
                 ylabel="encryptions / s", hline=QHCS1_OPS, hline_label="QHCS1 (paper, ~27,400/s)")

    def inflight(path: Path) -> None:
        ks = sorted(sim_sweep)
        series: dict[str, Sequence[float]] = {
            "QHCS1 on DH8970 model (simulated)": [sim_sweep[k].throughput_ops for k in ks]}
        if meas_sweep:
            series["one coroutine per encryption, this machine (measured)"] = [meas_sweep[k].throughput for k in ks]
        line_plot(path, ks, series, title="Throughput vs encryptions in flight",
                  xlabel="coroutines (encryptions) in flight", ylabel="encryptions / s", hline=QHCS1_OPS)

    return [("throughput_by_implementation.png", bars), ("throughput_vs_inflight.png", inflight)]
