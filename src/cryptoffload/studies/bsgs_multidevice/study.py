"""Multi-device bootstrapping (Ha, Jung and Paek) -- baby-step giant-step tuned for N devices,
modelled on the paper's U280 setup and checked against real distributed CKKS runs here.

Why both halves: the paper reports up to 1.84x from re-choosing ``bs`` per device count, with a
closed form that does not reproduce its own Table 1. A planner is only worth using if its model
(a) reproduces what can be reproduced from the paper and says where it cannot, and (b) predicts
real runs. So this study

1. simulates the paper's setup (``profiles/bsgs_u280.toml``: op costs **fitted** to Table 1's
   naive row -- no published U280 op latency could be checked -- cited link and shape), shows
   the fitted naive row, then **predicts** the tuned row and the speedups from those costs, the
   paper's own closed form beside it, every strategy, the tuner's gap to exhaustive search, a
   sensitivity run with full-size ciphertexts on the wire, and bootstrapping's real
   CoeffToSlot/SlotToCoeff stages instead of one dense C;
2. measures on this machine: op costs (``calibrate ckks``), then real BSGS products with SEAL
   ciphertexts on 1 and 2 Dask worker processes for several ``bs``, and prints the model's
   prediction from the measured profile next to each measured time;
3. shows OpenFHE's real bootstrapping timing and the share of its BSGS stages when the
   benchmark has been run (``make bench-bootstrap``; OpenFHE imports on Python 3.10 only here).

:func:`run` lists the tables and claims in report order; each is built in the module of its
part -- ``paper`` (1), ``bootstrap`` (the stages of 1, and 3), ``measured``
(2), ``bands`` (1's bands over the profile's ranges), ``measured_claims`` (2's claims
and their bands from the run's own noise) -- from typed rows (:mod:`cryptoffload.report.rows`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from cryptoffload.engines.dask import parse_scheduler
from cryptoffload.engines.dask_tls import CREDENTIALS_FLAG, INSECURE_FLAG, INSECURE_HELP, scheduler_credentials
from cryptoffload.errors import ConfigError
from cryptoffload.papers import PAPERS
from cryptoffload.profiles.loader import load_profile
from cryptoffload.report.plots import bar_plot, line_plot
from cryptoffload.report.result import Table
from cryptoffload.sim.op_dag import DagCosts
from cryptoffload.studies import frame
from cryptoffload.studies.bands import band_tables
from cryptoffload.studies.frame import Sections
from cryptoffload.studies.bsgs_multidevice.bands import NOTE as BANDS_NOTE
from cryptoffload.studies.bsgs_multidevice.bands import table1_bands
from cryptoffload.studies.bsgs_multidevice.bootstrap import (OPENFHE_MISSING, OPENFHE_RESULT, bootstrap_plan_part,
                                                  bootstrap_stage_detail_table, bootstrap_stage_rows,
                                                  bootstrap_stages_table, load_openfhe, openfhe_table, stage_totals)
from cryptoffload.studies.bsgs_multidevice.bootstrap_split import STUDY_QUICK_WHY, STUDY_SETTINGS, study_part
from cryptoffload.studies.bsgs_multidevice.measured import (LINK_FIELDS, STATISTICS, WINDOW_FIELDS, MeasuredRow, MeasuredRun,
                                                  measure, measure_run, measured_tables, scaling_rows)
from cryptoffload.studies.bsgs_multidevice.measured_claims import (measured_bands, measured_bands_table, measured_claims,
                                                        worst_line)
from cryptoffload.studies.bsgs_multidevice.paper import (ADD_PER_PMUL, CLOSED_FORM_FIT, NAIVE_ROW, PAPER_DEVICES, PAPER_NAIVE,
                                               PAPER_SPEEDUP, PAPER_TUNED, TUNED_ROW, PaperRun, StrategiesRow, Table1,
                                               closed_form, closed_form_table, fit_naive_row, paper_inputs,
                                               paper_setup, sensitivity_table, strategies_rows, strategies_table,
                                               table1, table1_claims, table1_naive_table, table1_tuned_table,
                                               table1_verdicts,
                                               tuner_headline, tuner_rows, tuner_table)
from cryptoffload.checks import DIAGONALS, WORKERS
from cryptoffload.studies.verdicts import Judging, full_command
from cryptoffload.studies.registry import Option, as_str, int_tuple, register_study
from cryptoffload.workloads.bsgs import STRATEGIES, check_positive_int

# the parts' names this module has always offered (benchmarks/bsgs.py and the tests import them here)
__all__ = ["ADD_PER_PMUL", "CLOSED_FORM_FIT", "LINK_FIELDS", "NAIVE_ROW", "OPENFHE_RESULT", "PAPER_DEVICES",
           "PAPER_NAIVE", "PAPER_SPEEDUP", "PAPER_TUNED", "TUNED_ROW", "WINDOW_FIELDS", "BsgsMultideviceConfig",
           "MeasuredRow", "PaperRun", "closed_form", "fit_naive_row", "load_openfhe", "measure", "paper_setup",
           "run", "scaling_rows", "stage_totals"]

NAME = "bsgs-multidevice"
TITLE = "Multi-device bootstrapping: BSGS tuned for N devices, modelled and measured"
PAPER = PAPERS["multi-device-bootstrapping"].cite()


@dataclass(kw_only=True)
class BsgsMultideviceConfig:
    quick: bool = True
    seed: int = 0
    profile: str = "bsgs_u280"
    devices: tuple[int, ...] = PAPER_DEVICES
    measure: bool = True
    measured_devices: tuple[int, ...] = (1, 2)
    measured_babies: tuple[int, ...] = (2, 4, 8)
    measured_diagonals: int = 64
    repeats: int = 3
    calibration: str | None = None          # a measured profile to use instead of calibrating
    scheduler: str | None = None
    dask_credentials: str | None = None          # the tls:// scheduler's ca.pem, cert.pem, key.pem
    insecure_plain_tcp_scheduler: bool = False   # accept a tcp:// scheduler (no TLS, no authentication)
    level_budget: tuple[int, int] = (3, 3)
    openfhe_result: str | None = None
    bootstrap_split: bool = True   # full mode: a bootstrap's stages on Dask workers (quick: the stored run)
    statistic: str = "median"   # over the rounds, for the op costs, slowdowns, hops and the runs alike

    def __post_init__(self) -> None:
        if not self.quick:
            self.measured_babies = (2, 4, 8, 16) if self.measured_babies == (2, 4, 8) else self.measured_babies
            self.repeats = 5 if self.repeats == 3 else self.repeats

    def validate(self) -> None:
        if self.statistic not in STATISTICS:
            raise ConfigError(f"statistic must be one of {', '.join(STATISTICS)}, got {self.statistic!r}")
        for n in self.devices:
            check_positive_int("the number of devices N", n)
        for n in self.measured_devices:
            check_positive_int("the number of measured workers", n)
            if n > 64:  # each is a local Dask worker holding CKKS keys
                raise ConfigError(f"--workers: at most 64 measured workers, got {n}")
        check_positive_int("the measured number of diagonals C", self.measured_diagonals)
        for b in self.measured_babies:
            check_positive_int("the baby-step size bs", b)
            if b > self.measured_diagonals:
                raise ConfigError(f"the baby-step size bs must be between 1 and C = {self.measured_diagonals}, got {b}")
        check_positive_int("repeats", self.repeats)
        if len(self.level_budget) != 2:
            raise ConfigError(f"the level budget is a pair (CoeffToSlot, SlotToCoeff), got {self.level_budget!r}")
        for b in self.level_budget:
            check_positive_int("the level budget", b)
        # profiles named by the user are read now, so a bad file is refused before any worker starts
        DagCosts.from_profile(load_profile(self.profile))
        if self.calibration:
            DagCosts.from_profile(load_profile(self.calibration))
        # a tcp:// scheduler without the opt-in, or a tls:// one without good credentials, is
        # refused before any worker starts
        scheduler_credentials(parse_scheduler(self.scheduler) if self.scheduler is not None else None,
                              self.dask_credentials, self.insecure_plain_tcp_scheduler)


def _scheduler(flag: str, text: str) -> str:
    return parse_scheduler(text)


@register_study(
    name=NAME, title=TITLE, paper=PAPERS["multi-device-bootstrapping"], config=BsgsMultideviceConfig,
    summary="BSGS for multi-device bootstrapping: U280 model vs Table 1, and real Dask runs vs the model.",
    quick="Fewer measured configurations and repeats: about 1 min on 2 cores (docs/report.md).",
    seed="Seed of the simulation (cryptography is never seeded).",
    options=[
        Option("--profile", "profile", str, "bsgs_u280", "Cost profile of the paper setup (name or TOML)."),
        Option("--measure/--no-measure", "measure", bool, True,
               "Also run real BSGS products on Dask workers and compare with the model."),
        Option("--calibration", "calibration", Path, help="Measured CKKS profile to use instead of calibrating now.",
               convert=as_str),
        Option("--workers", "measured_devices", str, "1,2", "Worker counts for the measured runs.", convert=int_tuple,
               bound=WORKERS, maximum=64),
        Option("--babies", "measured_babies", help="Baby-step sizes for the measured runs (e.g. 2,4,8).",
               convert=int_tuple, bound=DIAGONALS),
        Option("--scheduler", "scheduler", help="Dask scheduler tls://HOST:PORT (default: a local cluster, TLS with "
               "per-run certificates).", convert=_scheduler),
        Option(CREDENTIALS_FLAG, "dask_credentials", Path, convert=as_str,
               help="Folder holding the tls:// scheduler's ca.pem, cert.pem and key.pem (`cryptoffload dask "
                    "credentials`)."),
        Option(INSECURE_FLAG, "insecure_plain_tcp_scheduler", bool, False, INSECURE_HELP),
        Option("--bootstrap-split/--no-bootstrap-split", "bootstrap_split", bool, True,
               "Full mode with --measure: also run a bootstrap's stages split over 1 and 2 Dask workers beside the "
               "model (a few minutes); otherwise the stored run is shown."),
    ],
)
def run(cfg: BsgsMultideviceConfig) -> Sections:
    """The study, table by table: the paper's setup (Table 1 fitted and predicted, the closed
    form, the tuner, the strategies, full-size ciphertexts), bootstrapping's stages, the measured
    runs, OpenFHE's stored bootstrapping, then the claims."""
    frame.expect(_steps(cfg))
    setup = paper_inputs(load_profile(cfg.profile), cfg.devices)
    found = Sections(profiles=[setup.profile.path], fits=_fits(cfg.profile), key_figure="table1_speedup.png")
    sim = paper_setup(setup.costs, setup.base, setup.naive_baby, setup.devices, frame.step)
    fitted = bool(found.fits)  # the naive row's provenance: fitted
    t1 = table1(sim)
    tuners = tuner_rows(sim)
    strategies = strategies_rows(sim)
    found.tables += [table1_naive_table(t1, setup, fitted), table1_tuned_table(t1, setup, fitted),
                     closed_form_table(setup, sim), tuner_table(tuners), strategies_table(strategies),
                     sensitivity_table(setup, frame.step)]
    stages = bootstrap_stage_rows(setup, cfg.level_budget, frame.step)
    found.tables += [bootstrap_stages_table(stages), bootstrap_stage_detail_table(stages)]
    measured = measure_run(cfg, frame.folder(), frame.step) if cfg.measure else None
    if measured is not None:
        found.profiles.append(measured.profile_path)
        found.tables += _measured_tables(cfg, measured)
    openfhe, found.notes = _openfhe_part(cfg)
    found.tables += openfhe
    split = study_part(cfg, frame.step, Judging(cfg.quick, "sample", full_command(NAME), STUDY_QUICK_WHY))
    found.tables += split.tables
    found.headline += split.headline
    found.notes += split.notes
    bands = table1_bands(setup, t1)
    if bands:
        found.tables += band_tables(list(bands.values()), [setup.profile.name], BANDS_NOTE)
    found.verdicts = table1_verdicts(found.by_id, bands, Judging(cfg.quick, "full", full_command(NAME)))
    found.headline += [*table1_claims(t1, fitted, found.verdicts, bands), tuner_headline(tuners)]
    measured_rows = measured.rows if measured is not None else []
    if measured is not None and measured_rows:
        noise = measured_bands(measured_rows)
        found.headline += [*measured_claims(measured_rows, noise, "sample" if cfg.quick else None),
                           worst_line(measured_rows, measured.shares, noise)]
    found.verdicts += split.verdicts
    found.extra["config"] = _config_record(cfg, setup.devices)
    found.figures = _figures(t1, strategies, measured_rows) + split.figures
    return found


def _steps(cfg: BsgsMultideviceConfig) -> int:
    """A step of the progress bar per simulated N and measured configuration, and four more."""
    n_measured = (sum(1 if n == 1 else len(STRATEGIES) for n in cfg.measured_devices) * len(cfg.measured_babies)
                  if cfg.measure else 0)
    n_split = STUDY_SETTINGS.rounds + 1 if cfg.measure and cfg.bootstrap_split and not cfg.quick else 0
    return len(cfg.devices) + n_measured + n_split + 4


def _fits(profile: str) -> dict[str, str]:
    """The profile's fitted values and the closed form's fit."""
    from cryptoffload.profiles.fits import profile_fits

    return {**profile_fits(profile), CLOSED_FORM_FIT: NAIVE_ROW}


def _measured_tables(cfg: BsgsMultideviceConfig, measured: MeasuredRun) -> list[Table]:
    """Real products on Dask workers beside the model: the measured profile's tables, then each
    prediction's band from this run's noise (``measured_claims``)."""
    tables = list(measured_tables(measured, cfg))
    if measured.rows:
        tables.append(measured_bands_table(measured.rows, measured_bands(measured.rows)))
    return tables


def _openfhe_part(cfg: BsgsMultideviceConfig) -> tuple[list[Table], list[str]]:
    """OpenFHE's stored bootstrapping benchmark (or a note saying how to make one), and the
    planner's plan against OpenFHE's default."""
    stored = load_openfhe(cfg.openfhe_result)
    tables, notes = ([openfhe_table(stored)], []) if stored is not None else ([], [OPENFHE_MISSING])
    plan_tables, plan_notes = bootstrap_plan_part(cfg.devices)
    return tables + list(plan_tables), notes + list(plan_notes)


def _config_record(cfg: BsgsMultideviceConfig, devices: list[int]) -> dict[str, Any]:
    return {"profile": cfg.profile, "devices": devices, "measured_devices": list(cfg.measured_devices),
            "measured_babies": list(cfg.measured_babies), "measured_diagonals": cfg.measured_diagonals,
            "repeats": cfg.repeats, "level_budget": list(cfg.level_budget)}


def _figures(t1: Table1, strategies: Sequence[StrategiesRow],
             measured: Sequence[MeasuredRow]) -> list[tuple[str, Callable[[Path], None]]]:
    devices = [p.devices for p in t1.ours]
    paper_n = [p.devices for p in t1.paper]

    def times(path: Path) -> None:
        line_plot(path, devices, {"naive [fitted]": [p.naive_ms for p in t1.ours],
                                  "tuned [predicted]": [p.tuned_ms for p in t1.ours]},
                  paper={"naive [fitted]": [p.naive_ms for p in t1.paper],
                         "tuned [predicted]": [p.tuned_ms for p in t1.paper]},
                  paper_x=paper_n, title="BSGS on N U280s: naive (op costs fitted to it) vs tuned (predicted)",
                  xlabel="devices N", ylabel="time (ms)")

    def speedup(path: Path) -> None:
        line_plot(path, devices, {"tuned / naive": [p.speedup for p in t1.ours]},
                  paper={"tuned / naive": [p.speedup for p in t1.paper]}, paper_x=paper_n, logy=False,
                  title="Speedup of tuning bs per N: predicted (solid)", paper_note="the paper (dashed)", xlabel="devices N",
                  ylabel="speedup", hline=1.0)

    def by_strategy(path: Path) -> None:
        line_plot(path, devices, {s: [r.ms_of(s) for r in strategies] for s in STRATEGIES},
                  title="Best time per strategy [simulated]", xlabel="devices N", ylabel="time (ms)")

    figs: list[tuple[str, Callable[[Path], None]]] = [("table1_times.png", times), ("table1_speedup.png", speedup),
                                                        ("strategies.png", by_strategy)]
    if measured:
        figs.append(("model_vs_measured.png", lambda path: _model_figure(path, measured)))
    return figs


def _model_figure(path: Path, measured: Sequence[MeasuredRow]) -> None:
    labels, vals, kinds = [], [], []
    for r in measured:
        lab = f"{r.devices}w {r.strategy} bs={r.baby}"
        labels += [f"{lab} measured", f"{lab} predicted"]
        vals += [r.measured_s * 1e3, r.predicted_s * 1e3]
        kinds += ["measured", "simulated"]
    bar_plot(path, labels, vals, kinds=kinds, title="Real BSGS products on Dask workers vs the model",
             ylabel="time (ms)", logy=False)
