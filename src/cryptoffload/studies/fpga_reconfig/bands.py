"""The fpga-reconfig study's headline figures with their bands (issue 26).

Why these three inputs. Every figure the claims quote is a distribution over trace seeds: one
trace is one draw of the paper's heavy-tailed laws, and the paper's own log is a single draw.
So the seed stays an input, "moved" from the 10th to the 90th percentile of the seeds' values.
The reconfiguration time: the profile derives 55.0 ms from the bitstream (29,063,072 bits, 8 per
clock, 66 MHz) while the paper states and simulates "about 60 ms"; the profile's
``board.config_clock_hz`` range holds exactly those two figures, and the time moves between
them. The client population's size is *fitted* (to Fc and Table 7): it moves over the grid points
its fit's own rule admits (``workloads/client_population.FITTED_CLIENTS_RANGE``); its activity
shape (2.5, the grid's edge) is not moved: the fit tried nothing above it. The rest of the
profile is cited to its printed digits (Table 2, the 500 ns packet overhead), which move no
headline figure; the derived ``slices_pct`` only choose Fix5's circuits, which no claim quotes
and which stay the same over their ranges (:func:`fix5_kept_over_ranges`).

How. At each (reconfiguration time, clients) the study's seeds are simulated (the nominal pair
is the study's own run; the others re-run the same seeds with only the policies the figures
need), and a figure's value at a point is the seeds' percentile there. Three inputs: the joint
band is found at its 8 corners (:func:`~cryptoffload.profiles.sensitivity.band`), one
:class:`Memo` shared by every figure so each (time, clients) is simulated once: 3 re-runs. A
quick run stops at the tornado's ends (2 re-runs, a lower bound of the joint band) of its first
seed only, every seed shifted by that seed's change, so that it stays about as fast as before.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Mapping, Sequence

import numpy as np

from cryptoffload.crypto.ciphers import CIPHERS
from cryptoffload.profiles.loader import load_profile
from cryptoffload.profiles.sensitivity import Input, band, profile_input
from cryptoffload.report.provenance import of_fit
from cryptoffload.sim.devices import reconfig_time_from_bitstream
from cryptoffload.studies.bands import Banded, Memo
from cryptoffload.studies.fpga_reconfig.sweep import FpgaReconfigConfig, SeedOutcome, run_seeds
from cryptoffload.workloads.client_population import FITTED_CLIENTS_RANGE, FITTED_CLIENTS_RANGE_WHY

SEED_INPUT = "trace seed (client and cipher draw)"
RECONFIG_INPUT = "reconfiguration time (ms)"
CLIENTS_INPUT = "clients in the fitted population"
CLOCK = "board.config_clock_hz"
#: what the client population is fitted to (with Fc, the paper's inputs): the study declares the same fit
FIT_TARGET = "Table 7"
QUICK_RERUN_SEEDS = 1  # a quick run re-simulates the first seed only at the other points
FIX5_COUNT = 5  # Fix5 keeps the paper's five smallest circuits (policies/reconfig.py)


@dataclass(frozen=True)
class SeedFigure:
    """A headline figure: its label, the paper's value (``None``: not the paper's), the policies
    its value needs, and its value per seed from the seeds' outcomes."""

    label: str
    paper: float | None
    policies: tuple[str, ...]
    values: Callable[[Sequence[SeedOutcome]], list[float]]


def seed_input(n_seeds: int) -> Input:
    """The trace draw, as the percentile of the seeds' values (a figure's nominal is the median)."""
    return Input(SEED_INPUT, 50.0, 10.0 if n_seeds > 1 else 50.0, 90.0 if n_seeds > 1 else 50.0,
                 f"10th to 90th percentile over {n_seeds} trace seed(s): the paper's log is one draw of heavy-tailed "
                 "laws", "simulated")


def reconfig_input(cfg: FpgaReconfigConfig, nominal_s: float) -> Input:
    """The reconfiguration time over the profile's clock range (the paper's 55 and 60 ms); a
    time set with ``--reconfig-ms`` is the user's, and stays fixed."""
    ms = nominal_s * 1e3
    if cfg.reconfig_ms is not None:
        return Input(RECONFIG_INPUT, ms, ms, ms, "set with --reconfig-ms: not moved", "input")
    prof = load_profile(cfg.profile)
    clock = profile_input(prof, CLOCK)

    def at(hz: float) -> float:
        return 1e3 * reconfig_time_from_bitstream(prof.value("board.bitstream_bits"),
                                                  prof.value("board.config_bits_per_clock"), hz)
    return Input(RECONFIG_INPUT, ms, at(clock.high), at(clock.low),
                 f"{CLOCK} over its range: {clock.why}" if clock.why else f"{CLOCK} has no range: not moved",
                 clock.provenance)


def clients_input(cfg: FpgaReconfigConfig) -> Input:
    """The fitted population's size over the range its fit admits; fixed when no population is
    drawn (a user's log, or the literal ``returns`` clients)."""
    n = float(cfg.n_clients)
    if cfg.clients != "population" or cfg.trace:
        return Input(CLIENTS_INPUT, n, n, n, "no fitted population in this run: not moved", of_fit(None), integer=True)
    low, high = FITTED_CLIENTS_RANGE
    return Input(CLIENTS_INPUT, n, float(min(low, n)), float(max(high, n)), FITTED_CLIENTS_RANGE_WHY, of_fit(FIT_TARGET),
                 integer=True)


def inputs(cfg: FpgaReconfigConfig, n_seeds: int, nominal_s: float) -> list[Input]:
    """The inputs every figure moves over (the seed's first)."""
    return [seed_input(n_seeds), reconfig_input(cfg, nominal_s), clients_input(cfg)]


def seed_bands(cfg: FpgaReconfigConfig, seeds: Sequence[int], outcomes: Sequence[SeedOutcome],
               figures: Sequence[SeedFigure], nominal_s: float, joint: bool = True,
               rerun: int | None = None) -> dict[str, Banded]:
    """Each figure's band over the trace seed, the reconfiguration time and the population's
    size, at the corners; ``outcomes`` are the study's own runs of ``seeds`` at the nominal
    inputs. A quick run asks for less: ``joint=False`` stops at the tornado's ends (2 re-runs
    instead of 3, a lower bound of the joint band) and ``rerun=k`` re-simulates only the first
    ``k`` seeds at the other points, shifting every seed's value by their mean change there
    (the same seeds at both points, so the shift is the input's, not the draw's)."""
    moving = inputs(cfg, len(outcomes), nominal_s)
    nominal = (nominal_s * 1e3, float(cfg.n_clients))
    k = len(seeds) if rerun is None else max(1, min(rerun, len(seeds)))
    at = _outcomes_at(cfg, seeds[:k], outcomes[:k], nominal, sorted({p for f in figures for p in f.policies}))

    def values(f: SeedFigure, point: tuple[float, float]) -> list[float]:
        if point == nominal or k == len(outcomes):
            return f.values(at(point) if point != nominal else outcomes)
        shift = float(np.mean(np.subtract(f.values(at(point)), f.values(outcomes[:k]))))
        return [v + shift for v in f.values(outcomes)]

    def run(ov: Mapping[str, float]) -> dict[str, float]:
        point = (ov.get(RECONFIG_INPUT, nominal[0]), ov.get(CLIENTS_INPUT, nominal[1]))
        q = ov.get(SEED_INPUT, 50.0)
        return {f.label: float(np.percentile(np.asarray(values(f, point), dtype=np.float64), q)) for f in figures}

    memo = Memo(run)
    return {f.label: Banded(f.label, band(memo.figure(f.label), moving, joint=joint), f.paper, moving) for f in figures}


def _outcomes_at(cfg: FpgaReconfigConfig, seeds: Sequence[int], outcomes: Sequence[SeedOutcome],
                 nominal: tuple[float, float],
                 policies: Sequence[str]) -> Callable[[tuple[float, float]], Sequence[SeedOutcome]]:
    """The seeds' outcomes at a (reconfiguration time in ms, clients): the study's own at the
    nominal pair, the others simulated once each (only ``policies``, the ones the figures read)."""
    simulated: dict[tuple[float, float], Sequence[SeedOutcome]] = {nominal: outcomes}

    def at(point: tuple[float, float]) -> Sequence[SeedOutcome]:
        if point not in simulated:
            moved = replace(cfg, reconfig_ms=point[0], n_clients=int(point[1]), sw_profile=None)
            simulated[point] = run_seeds(moved, seeds, policies)[0]
        return simulated[point]
    return at


def fix5_kept_over_ranges(profile: str, count: int = FIX5_COUNT) -> bool:
    """Whether Fix5 keeps the same circuits wherever the ``slices_pct`` (four of them derived, with
    ranges) lie in their ranges: true when the largest high end among the ``count`` smallest is
    below the smallest low end of the rest. Then no figure moves with them, and none is banded."""
    prof = load_profile(profile)
    slices = [profile_input(prof, f"ciphers.{c}.slices_pct") for c in CIPHERS]
    order = sorted(range(len(slices)), key=lambda i: slices[i].nominal)
    return max(slices[i].high for i in order[:count]) < min(slices[i].low for i in order[count:])


def note(cfg: FpgaReconfigConfig, n_seeds: int) -> str:
    """The bands table's note: what moved, how, and how many seeds a quick run has."""
    low, high = FITTED_CLIENTS_RANGE
    return (f"Each figure over the trace seed (10th to 90th percentile of {n_seeds} seeds"
            + (", a quick run's few: the full run has 24" if cfg.quick else "")
            + "), the reconfiguration time ("
            + ("fixed by --reconfig-ms" if cfg.reconfig_ms is not None else
               f"{CLOCK}'s range in the profile: 55.0 ms from the bitstream at 66 MHz to the paper's 'about 60 ms'")
            + ") and the fitted population's size ("
            + (f"{low:,} to {high:,} clients, the grid points its fit admits"
               if cfg.clients == "population" and not cfg.trace else "no population drawn: fixed")
            + "), the seeds re-simulated at each other point with the policies the figures read; "
            + ("a quick run stops at the tornado's ends (2 re-runs; the corners can only widen the band) and "
               f"re-simulates only the first {QUICK_RERUN_SEEDS} seed(s) there, shifting every seed's value by "
               "that change. " if cfg.quick else "the joint band at the 8 corners (3 re-runs of every seed). ")
            + "Not moved: the cited Table 2 throughputs and 500 ns packet overhead (their printed "
              "digits move nothing), the population's activity shape (2.5, the edge of its fit's grid); "
            + ("the derived slices_pct only choose Fix5's circuits, the same at every end of their ranges."
               if fix5_kept_over_ranges(cfg.profile) else
               "the derived slices_pct could change Fix5's circuits over their ranges, but no claim quotes Fix5."))


__all__ = ["CLIENTS_INPUT", "CLOCK", "FIX5_COUNT", "QUICK_RERUN_SEEDS", "RECONFIG_INPUT", "SEED_INPUT", "SeedFigure",
           "clients_input", "fix5_kept_over_ranges", "inputs", "note", "reconfig_input", "seed_bands", "seed_input"]
