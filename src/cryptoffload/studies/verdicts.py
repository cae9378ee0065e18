"""A study's verdicts (issue 35): one per cell of its tables beside a paper value, and their table.

Why one helper for every study: the rule (``report/verdicts.py``) and the register's layout are
the same everywhere; a study says only *which* band judges a cell, the simplest alternative it
names for that figure, where the paper's value comes from, and how its quick run's band relates
to the full run's. This module turns a :class:`~cryptoffload.studies.bands.Banded` figure (or
its absence, with the reason) into a :class:`~cryptoffload.report.verdicts.Verdict` read from the
table, and writes the ``verdicts`` table every card links to.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from cryptoffload.profiles.sensitivity import closer
from cryptoffload.report.result import StudyResult, Table
from cryptoffload.report.rows import column, table_of
from cryptoffload.report.verdicts import VERDICTS_ID, Verdict, verdict_for
from cryptoffload.studies.bands import Banded


@dataclass(frozen=True)
class Judging:
    """How one run judges its cells: quick or full, how a quick band relates to the full run's
    (``basis``: ``full``, ``inner`` or ``sample``, see ``report/verdicts.py``) and why, and the
    command of the full run a quick verdict defers to."""

    quick: bool
    basis: str
    rerun: str
    why: str = ""


def full_command(study: str, extra: str = "") -> str:
    """The command of the full run of ``study`` (full is every study's default)."""
    return f"cryptoffload study {study} --out DIR" + (f" {extra}" if extra else "")


def judge(table: Table, key: Sequence[Any], col: str, banded: Banded | None, how: Judging, *, figure: str,
          paper_source: str, alternative: float, alternative_what: str, no_band: str = "", narrow: str = "",
          paper_range: Sequence[float] | None = None) -> Verdict:
    """The verdict on one cell: judged by ``banded``'s band, or -- without one, or with one that
    is not a number somewhere (a figure undefined at some point of its inputs: a cipher no
    request used) -- inconclusive, with ``no_band`` saying why no band could be made."""
    if banded is not None and not all(math.isfinite(x) for x in (banded.band.low, banded.band.high)):
        banded, no_band = None, ("the figure is undefined at some point of its inputs (no requests of it in some "
                                 "seed or corner), so it has no band; more requests would give it one")
    if banded is None:
        return verdict_for(table, key, col, figure=figure, paper_source=paper_source, alternative=alternative,
                           alternative_what=alternative_what, band=None, quick=how.quick, basis=how.basis,
                           paper_range=paper_range, why=no_band, narrow=narrow, rerun=how.rerun, quick_why=how.why)
    b = banded.band
    paper = float(banded.paper) if banded.paper is not None else None
    return verdict_for(table, key, col, figure=figure, paper_source=paper_source, alternative=alternative,
                       alternative_what=alternative_what, band=[b.low, b.high], quick=how.quick, basis=how.basis,
                       paper_range=paper_range, most_sensitive=b.most_sensitive,
                       closes=closer(b, paper) if paper is not None else "", band_method=b.method, narrow=narrow,
                       rerun=how.rerun, quick_why=how.why)


@dataclass(frozen=True)
class VerdictRow:
    figure: str = column()
    table: str = column()
    ours: float = column()
    band_low: float | None = column()
    band_high: float | None = column()
    paper: float = column()
    paper_source: str = column()
    alternative: float = column()
    verdict: str = column()
    provenance: str = column()
    reason: str = column()


def verdicts_table(verdicts: Sequence[Verdict]) -> Table:
    """The register: every verdict, its band, the paper's value and where it comes from, the
    alternative the rule measures the effect from, and the reason."""
    rows = [VerdictRow(v.figure, v.table, v.ours, v.band[0] if v.band else None, v.band[1] if v.band else None,
                       v.paper, v.paper_source, v.alternative, v.kind, v.provenance, v.reason()) for v in verdicts]
    return table_of(VerdictRow, rows, id=VERDICTS_ID, provenance="mixed",
                    title="Verdicts: every row of ours beside a paper value, judged by one rule",
                    note="divergence: the paper's value lies outside our band; agreement: inside a band narrower than "
                         "the effect from the alternative (width < |paper - alternative|, half-width <= 25 % of the "
                         "paper's value); inconclusive: inside a wider band, or no band; fitted: not judged; a quick "
                         "run leaves not judged what the full run could judge otherwise (docs/result-contract.md).")


def add_verdicts(result: StudyResult, verdicts: Sequence[Verdict]) -> None:
    """Record the verdicts and their table, and put the scoreboard first in the headline (once per
    run; a run without any adds nothing)."""
    result.verdicts.extend(verdicts)
    if result.verdicts:
        result.add(verdicts_table(result.verdicts))
        result.headline.insert(0, f"Scoreboard: {result.scoreboard.text()} (verdicts table; docs/result-contract.md)")


__all__ = ["Judging", "VerdictRow", "add_verdicts", "full_command", "judge", "verdicts_table"]
