"""The studies' headline figures with their bands (issue 26): one table of bands, one tornado.

Why one module for every study: each study says *what* moves (its inputs, read from the
profiles' ranges) and *how* its figure is predicted (a callable); the arithmetic of the band
(``profiles/sensitivity.py``) and the two tables that show it are the same everywhere, so a
reader meets one layout in every report:

* ``headline_bands``: per headline figure, ours (nominal), the band's ends, the paper's value,
  whether it lies inside, the input that moves ours most, how the band was found;
* ``headline_tornado``: per figure and input, the input's ends (and why) and ours at each end.

:class:`Memo` lets several figures share the runs of one model (one simulation gives the tuned
time and the speedup at once) so a band costs one run per distinct set of overrides.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from cryptoffload.profiles.sensitivity import Band, Input
from cryptoffload.report.result import Table
from cryptoffload.report.rows import column, hidden, table_of

BANDS_ID, TORNADO_ID = "headline_bands", "headline_tornado"


@dataclass
class Memo:
    """``run(overrides) -> {figure: value}`` called once per distinct set of overrides."""

    run: Callable[[Mapping[str, float]], Mapping[str, float]]
    seen: dict[tuple[tuple[str, float], ...], Mapping[str, float]] = field(default_factory=dict)

    def figure(self, name: str) -> Callable[[Mapping[str, float]], float]:
        """The prediction of one figure, as :func:`~cryptoffload.profiles.sensitivity.band` takes it."""
        def predict(overrides: Mapping[str, float]) -> float:
            key = tuple(sorted(overrides.items()))
            if key not in self.seen:
                self.seen[key] = self.run(overrides)
            return float(self.seen[key][name])
        return predict


@dataclass(frozen=True)
class Banded:
    """One headline figure: its label, band, the paper's value (``None``: not in the paper),
    the inputs it was moved over, and the paper's value at its stated precision when the paper
    gives it in words (see :class:`~cryptoffload.report.result.Claim`'s ``paper_range``)."""

    figure: str
    band: Band
    paper: float | None
    inputs: Sequence[Input]
    paper_range: tuple[float, float] | None = None

    def paper_inside(self) -> bool | None:
        """Whether the paper's value (its stated range, when it has one) meets the band."""
        if self.paper is None:
            return None
        lo, hi = self.paper_range or (self.paper, self.paper)
        return lo <= self.band.high and self.band.low <= hi


@dataclass(frozen=True)
class BandRow:
    figure: str = column()
    ours: float = column()
    band_low: float = column()
    band_high: float = column()
    paper: float | None = column()
    paper_inside: bool | None = column()
    most_sensitive: str = column()
    method: str = column()


@dataclass(frozen=True)
class TornadoRow:
    figure: str = column()
    input: str = column()
    provenance: str = column("input_provenance")
    input_low: float = column()
    input_nominal: float = column()
    input_high: float = column()
    ours_at_low: float = column()
    ours_at_high: float = column()
    swing: float = column()
    why: str = column("range_why")
    order: int = hidden(default=0)


def band_rows(figures: Sequence[Banded]) -> list[BandRow]:
    return [BandRow(f.figure, f.band.nominal, f.band.low, f.band.high, f.paper, f.paper_inside(),
                    f.band.most_sensitive, f.band.method) for f in figures]


def tornado_rows(figures: Sequence[Banded]) -> list[TornadoRow]:
    out = []
    for f in figures:
        by_name = {i.name: i for i in f.inputs}
        for n, s in enumerate(f.band.tornado):
            i = by_name[s.input]
            out.append(TornadoRow(f.figure, s.input, i.provenance or "input", i.low, i.nominal, i.high,
                                  s.at_low, s.at_high, s.swing, i.why, n))
    return out


def band_tables(figures: Sequence[Banded], inputs: list[str], note: str,
                provenance: str = "simulated") -> tuple[Table, Table]:
    """The two tables; ``inputs`` names the profiles the figures depend on, ``note`` says what
    was moved, how, and (in quick mode) with how many samples; ``provenance`` is the figures'
    (``fitted`` where they rest on a fitted input)."""
    bands = table_of(BandRow, band_rows(figures), id=BANDS_ID, provenance=provenance, inputs=inputs,
                     title="Headline figures with their bands: every uncertain input over its profile range",
                     note=note)
    tornado = table_of(TornadoRow, tornado_rows(figures), id=TORNADO_ID, provenance=provenance, inputs=inputs,
                       title="Tornado: each input alone at its low and high end, the others nominal (largest swing first)",
                       note="input_provenance: the input's kind in its profile (assumed, fitted, cited, measured); "
                            "range_why: the reason for its ends.")
    return bands, tornado


__all__ = ["BANDS_ID", "TORNADO_ID", "BandRow", "Banded", "Memo", "TornadoRow", "band_rows", "band_tables",
           "tornado_rows"]
