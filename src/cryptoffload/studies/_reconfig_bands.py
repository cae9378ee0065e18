"""The fpga-reconfig study's headline figures with their bands (issue 26).

Why these two inputs. Every figure the claims quote is a distribution over trace seeds: one
trace is one draw of the paper's heavy-tailed laws, and the paper's own log is a single draw.
So the seed stays an input, "moved" from the 10th to the 90th percentile of the seeds' values.
The other is the reconfiguration time: the profile derives 55.0 ms from the bitstream
(29,063,072 bits, 8 per clock, 66 MHz) while the paper states and simulates "about 60 ms"; the
profile's ``board.config_clock_hz`` range holds exactly those two figures, and the time moves
between them. The rest of the profile is cited to its printed digits (Table 2, the 500 ns packet
overhead), which move no headline figure; the derived ``slices_pct`` only order Fix5's circuits,
which no claim quotes. The client population (fitted to Fc and Table 7) is not moved here.

How. At each reconfiguration time the study's seeds are simulated (the nominal end is the
study's own run; the other end re-runs the same seeds with only the policies the figures need),
and a figure's value at a corner is the seeds' percentile there. Two inputs: the joint band is
found at its 4 corners (:func:`~cryptoffload.profiles.sensitivity.band`), one :class:`Memo`
shared by every figure so a reconfiguration time is simulated once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Mapping, Sequence

import numpy as np

from cryptoffload.profiles.loader import load_profile
from cryptoffload.profiles.sensitivity import Input, band, profile_input
from cryptoffload.sim.devices import reconfig_time_from_bitstream
from cryptoffload.studies._bands import Banded, Memo
from cryptoffload.studies._reconfig_sweep import FpgaReconfigConfig, SeedOutcome, run_seeds

SEED_INPUT = "trace seed (client and cipher draw)"
RECONFIG_INPUT = "reconfiguration time (ms)"
CLOCK = "board.config_clock_hz"


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
        return Input(RECONFIG_INPUT, ms, ms, ms, "set with --reconfig-ms: not moved", "assumed")
    prof = load_profile(cfg.profile)
    clock = profile_input(prof, CLOCK)

    def at(hz: float) -> float:
        return 1e3 * reconfig_time_from_bitstream(prof.value("board.bitstream_bits"),
                                                  prof.value("board.config_bits_per_clock"), hz)
    return Input(RECONFIG_INPUT, ms, at(clock.high), at(clock.low),
                 f"{CLOCK} over its range: {clock.why}" if clock.why else f"{CLOCK} has no range: not moved",
                 clock.provenance)


def inputs(cfg: FpgaReconfigConfig, n_seeds: int, nominal_s: float) -> list[Input]:
    """The two inputs every figure moves over (the seed's first)."""
    return [seed_input(n_seeds), reconfig_input(cfg, nominal_s)]


def seed_bands(cfg: FpgaReconfigConfig, seeds: Sequence[int], outcomes: Sequence[SeedOutcome],
               figures: Sequence[SeedFigure], nominal_s: float) -> dict[str, Banded]:
    """Each figure's band over the trace seed and the reconfiguration time, at the 4 corners;
    ``outcomes`` are the study's own runs of ``seeds`` at ``nominal_s``."""
    moving = inputs(cfg, len(outcomes), nominal_s)
    at_time = _outcomes_at(cfg, seeds, outcomes, nominal_s * 1e3, sorted({p for f in figures for p in f.policies}))

    def run(ov: Mapping[str, float]) -> dict[str, float]:
        outs = at_time(ov.get(RECONFIG_INPUT, nominal_s * 1e3))
        q = ov.get(SEED_INPUT, 50.0)
        return {f.label: float(np.percentile(np.asarray(f.values(outs), dtype=np.float64), q)) for f in figures}

    memo = Memo(run)
    return {f.label: Banded(f.label, band(memo.figure(f.label), moving), f.paper, moving) for f in figures}


def _outcomes_at(cfg: FpgaReconfigConfig, seeds: Sequence[int], outcomes: Sequence[SeedOutcome], nominal_ms: float,
                 policies: Sequence[str]) -> Callable[[float], Sequence[SeedOutcome]]:
    """The seeds' outcomes at a reconfiguration time: the study's own at the nominal one, the
    others simulated once each (only ``policies``, the ones the figures read)."""
    simulated: dict[float, Sequence[SeedOutcome]] = {nominal_ms: outcomes}

    def at(ms: float) -> Sequence[SeedOutcome]:
        if ms not in simulated:
            simulated[ms] = run_seeds(replace(cfg, reconfig_ms=ms, sw_profile=None), seeds, policies)[0]
        return simulated[ms]
    return at


def note(cfg: FpgaReconfigConfig, n_seeds: int) -> str:
    """The bands table's note: what moved, how, and how many seeds a quick run has."""
    return (f"Each figure over the trace seed (10th to 90th percentile of {n_seeds} seeds"
            + (", a quick run's few: the full run has 24" if cfg.quick else "")
            + ") and the reconfiguration time ("
            + ("fixed by --reconfig-ms" if cfg.reconfig_ms is not None else
               f"{CLOCK}'s range in the profile: 55.0 ms from the bitstream at 66 MHz to the paper's 'about 60 ms'")
            + "), the seeds re-simulated at the other time with the policies the figures read; the joint band at "
              "the 4 corners. Cited Table 2 throughputs and the 500 ns packet overhead are not moved (their printed "
              "digits move nothing); the fitted client population is not moved.")


__all__ = ["CLOCK", "RECONFIG_INPUT", "SEED_INPUT", "SeedFigure", "inputs", "note", "reconfig_input", "seed_bands", "seed_input"]
