"""The fpga-reconfig study's verdicts (issue 35): every cell of ours beside the paper's Table 6,
its headline means, Table 8 and Table 7, each judged by one rule over its band, and the claims a
user reads first.

Why every cell and not the closest: a headline that picks its closest and furthest rows hides
the rows in between; here each cell is a :class:`~cryptoffload.studies.fpga_reconfig.bands.SeedFigure`
(its value per seed) banded like the headline always was -- the 10th to 90th percentile over the
trace seeds, at the corners of the reconfiguration time and the fitted population's size -- all
from the same re-simulations (one :class:`~cryptoffload.studies.bands.Memo`), so judging 120
cells costs the policies' runs, not 120 runs each.

The simplest alternative each figure names: for a p90 relative to Oracle's, Oracle's own (a
ratio of 1: reconfiguration fully hidden); for Oracle's p90 in seconds, none (0 s); for Table 8's
encryption-time reduction, none (0 %: software alone). A quick run's seeds and requests are
fewer than the full run's, so its bands rest on another sample and it judges nothing but the
fitted Table 7 (``report/verdicts.py``: basis ``sample``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from cryptoffload.report.provenance import from_printed, printed
from cryptoffload.report.result import Claim, Table
from cryptoffload.report.rows import column, table_of
from cryptoffload.report.verdicts import Verdict
from cryptoffload.sim.reconfig.platform import ReconfigPlatform
from cryptoffload.studies.fpga_reconfig import tables
from cryptoffload.studies.bands import Banded
from cryptoffload.studies.fpga_reconfig.bands import SeedFigure
from cryptoffload.studies.fpga_reconfig.paper import (
    PAPER_MEAN_NOPREDICT,
    PAPER_MEAN_PREDICT,
    PAPER_TABLE8,
    PAPER_TABLE8_TOTAL,
    TABLE8_PAPER_POLICIES,
)
from cryptoffload.studies.fpga_reconfig.sweep import SeedOutcome
from cryptoffload.studies.verdicts import Judging, judge

RATIO_ALTERNATIVE = (1.0, "Oracle's own p90 (a ratio of 1: reconfiguration fully hidden)")
SECONDS_ALTERNATIVE = (0.0, "none (0 s)")
REDUCTION_ALTERNATIVE = (0.0, "no reduction (software alone)")
T6, MEANS, T8 = "table6_p90_vs_oracle", "mean_p90_vs_oracle", "table8_over_seeds"
MEAN_COLUMN = "mean_p90_rel_oracle"
#: the paper's highest rate: where its Table 6 and our queues part most
TOP_RATE = 20000.0


@dataclass(frozen=True)
class Cell:
    """One cell of ours beside a paper value, the seed figure that bands it, and how it is judged."""

    table: str
    key: list[Any]
    column: str
    seed: SeedFigure
    paper_source: str
    alternative: tuple[float, str]

    @property
    def label(self) -> str:
        return self.seed.label


def _rel_at(rate: float, policy: str) -> Callable[[Sequence[SeedOutcome]], list[float]]:
    """A policy's p90 / Oracle p90 at one rate, per seed (Oracle: its p90 in s)."""
    return lambda outs: tables.rel_oracle(outs, [policy, "oracle"])[(rate, policy)]


def _mean_rel_of(policy: str) -> Callable[[Sequence[SeedOutcome]], list[float]]:
    """A policy's p90 / Oracle p90 averaged over rates, per seed (as ``mean_p90_vs_oracle``)."""
    return lambda outs: [tables.mean_rel(o, policy) for o in outs]


def table6_cells(outcomes: Sequence[SeedOutcome], policies: Sequence[str]) -> list[Cell]:
    """Every Table 6 cell of ours with a paper value: each policy's p90 / Oracle p90 and Oracle's p90."""
    rels = tables.rel_oracle(outcomes, list(policies))
    cells = []
    for rate, p in sorted(rels):
        pv = tables.paper_table6(rate, p) if tables.paper_rate(rate) else None
        if pv is None:
            continue
        col, oracle = (p, False) if p != "oracle" else ("oracle_p90_s", True)
        src = printed(f"Table 6, {rate:g} req/s, " + ("Oracle's p90" if oracle else tables.paper_column(p)))
        cells.append(Cell(T6, [rate], col, SeedFigure(f"Table 6 {rate:g} req/s {col}", pv, (p, "oracle"),
                                                     _rel_at(rate, p)),
                          src, SECONDS_ALTERNATIVE if oracle else RATIO_ALTERNATIVE))
    return cells


def mean_cells(summary: tables.Table6Summary) -> list[Cell]:
    """The means over rates the paper states (Predict, Nopredict) or we average from its Table 6."""
    cells = []
    for p in summary.mean_rel:
        pv = tables.paper_mean_rel(p)
        if pv is None:
            continue
        col = tables.paper_column(p)
        src = (printed(f"the text, {col.capitalize()}/Oracle {pv:g}") if col in ("predict", "nopredict") else
               from_printed(f"the mean of the paper's Table 6 {col} column over its 10 rates ({pv:.4g})"))
        cells.append(Cell(MEANS, [p], MEAN_COLUMN, SeedFigure(f"mean over rates {p}", pv, (p, "oracle"),
                                                             _mean_rel_of(p)), src, RATIO_ALTERNATIVE))
    return cells


def _reductions(o: SeedOutcome, policy: str) -> np.ndarray:
    """One seed's Table 8 for ``policy``: encryption-time reduction vs Software (%) per cipher,
    the mean over rates (as ``tables.table8_table`` computes the first seed's)."""
    by = tables.by_key(o.runs)
    rates = sorted({r for r, p in by if p == policy})
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.mean([1.0 - by[(r, policy)].enc_time_by_cipher / by[(r, "software")].enc_time_by_cipher
                        for r in rates], axis=0) * 100


def _t8_of(policy: str, index: int | None) -> Callable[[Sequence[SeedOutcome]], list[float]]:
    """Per seed, one cipher's reduction (``index``) or the mean over ciphers (``None``)."""
    def values(outs: Sequence[SeedOutcome]) -> list[float]:
        return [float(np.nanmean(r) if index is None else r[index]) for r in (_reductions(o, policy) for o in outs)]
    return values


@dataclass(frozen=True)
class Table8Row:
    cipher: str = column()
    nopredict: float | None = column()
    predict: float | None = column()
    oracle: float | None = column()


def table8_cells(outcomes: Sequence[SeedOutcome], platform: ReconfigPlatform,
                 policies: Sequence[str]) -> tuple[list[Table], list[Cell]]:
    """Table 8 as medians over every seed (the first seed's table stays, unjudged), and its cells."""
    t8 = [p for p in TABLE8_PAPER_POLICIES if p in policies]
    if "software" not in policies or not t8:
        return [], []
    names = [platform.display(i) for i in range(platform.k)] + ["mean over ciphers"]
    index: list[int | None] = [*range(platform.k), None]
    paper_of = {platform.display(i): PAPER_TABLE8.get(c) for i, c in enumerate(platform.ciphers)}
    paper_of["mean over ciphers"] = PAPER_TABLE8_TOTAL
    figs = {(n, p): SeedFigure(f"Table 8 {n} {p}", None, (p, "software"), _t8_of(p, i)) for n, i in zip(names, index)
            for p in t8}
    med = {k: tables.median(f.values(outcomes)) for k, f in figs.items()}
    rows = [Table8Row(n, *(med[(n, p)] if p in t8 else None for p in TABLE8_PAPER_POLICIES)) for n in names]
    paper = [Table8Row(n, *(row.of(p) if p in t8 else None for p in TABLE8_PAPER_POLICIES))
             for n in names if (row := paper_of[n]) is not None]
    table = (table_of(Table8Row, rows, paper=paper, id=T8, provenance="simulated", reproduces="Table 8",
                        title=f"Table 8 — encryption-time reduction vs Software (%), mean over rates, median over "
                              f"{len(outcomes)} seed(s)",
                        note="The paper's policies over every seed (the first seed's table, with the policies beyond "
                             "the paper, is table8_enc_time_reduction_pct); the paper's 'Total Average' row is the mean "
                             "over ciphers."))
    cells = []
    for n in names:
        row = paper_of[n]
        for p in t8:
            pv = None if row is None else row.of(p)
            if pv is not None:
                cells.append(Cell(T8, [n], p, SeedFigure(figs[(n, p)].label, pv, (p, "software"), figs[(n, p)].values),
                                  printed(f"Table 8, {n if n != 'mean over ciphers' else 'Total Average'}, {p}"),
                                  REDUCTION_ALTERNATIVE))
    return [table], cells


def table7_cells(tables_: Mapping[str, Table]) -> list[tuple[list[Any], str]]:
    """Table 7's cells with a paper value (fitted: not judged, or another program's: no band)."""
    t = tables_.get("table7_cipher_mix")
    if t is None:
        return []
    return [([r[0]], "share") for r in t.rows if r[1] is not None and (p := t.paper_row([r[0]])) is not None
            and p[1] is not None]


def verdicts(tables_: Mapping[str, Table], cells: Sequence[Cell], banded: Mapping[str, Banded],
             how: Judging) -> list[Verdict]:
    """A verdict for every cell of ``tables_`` (by id; Table 7's shares without a band: fitted,
    or a log's mix)."""
    out = [judge(tables_[c.table], c.key, c.column, banded.get(c.label), how, figure=c.label,
                 paper_source=c.paper_source, alternative=c.alternative[0], alternative_what=c.alternative[1],
                 no_band="not banded in this run")
           for c in cells]
    t7 = tables_.get("table7_cipher_mix")
    for key, col in table7_cells(tables_):
        assert t7 is not None
        out.append(judge(t7, key, col, None, how, figure=f"Table 7 rank {key[0]} share", paper_source=
                         printed(f"Table 7, the rank-{key[0]} cipher's share"), alternative=0.1,
                         alternative_what="an even mix (1/10)",
                         no_band="Table 7 from a log or the literal clients: the share of a cipher per seed is not "
                                 "banded", narrow="more seeds (the 10-90 % spread is in the table)"))
    return out


def _by_cell(judged: Sequence[Verdict]) -> dict[tuple[str, str, str], Verdict]:
    return {(v.table, repr(v.key), v.column): v for v in judged}


def _pct(ours: float, paper: float) -> str:
    return f"{100 * (ours / paper - 1):+.0f} %"


def claims(judged: Sequence[Verdict], summary: tables.Table6Summary | None, why_top: str) -> list[Claim]:
    """What a user reads first: whether prediction hides reconfiguration (the paper's Predict
    and Nopredict against Oracle, averaged over rates), our tuned-interval Predict beside it,
    and Oracle's own p90 at the paper's highest rate, where our queues and its table part.
    Each quotes its cell's verdict; the scoreboard counts the rest."""
    by = _by_cell(judged)
    found = []
    paper_predict = "predict-5mb" if summary is not None and "predict-5mb" in summary.mean_rel else "predict"
    for p, label, pv in ((paper_predict, "Predict (the paper's 5 MB interval)" if paper_predict == "predict-5mb"
                          else "Predict", PAPER_MEAN_PREDICT), ("nopredict", "Nopredict", PAPER_MEAN_NOPREDICT)):
        v = by.get((MEANS, repr([p]), MEAN_COLUMN))
        if v is not None:
            found.append(Claim.of_verdict(v, paper=f"{label}/Oracle p90 averaged over rates {pv:.3g}",
                                          ours=f"{label}/Oracle p90 averaged over rates {v.ours:.3g} "
                                               f"({_pct(v.ours, pv)})",
                                          why="predicted from the paper's inputs, nothing fitted to its Table 6"))
    tuned = by.get((MEANS, repr(["predict"]), MEAN_COLUMN))
    if tuned is not None and paper_predict == "predict-5mb":
        found.append(Claim.of_verdict(
            tuned, paper=f"Predict/Oracle p90 averaged over rates {PAPER_MEAN_PREDICT:.3g} (its 5 MB interval)",
            ours=f"our tuned-interval Predict/Oracle p90 averaged over rates {tuned.ours:.3g} "
                 f"({_pct(tuned.ours, PAPER_MEAN_PREDICT)})",
            why="our extension, not the paper's policy: Predict choosing its interval on the history per rate "
                "(policies/interval_tuner.py), beside the paper's 5 MB Predict"))
    top = by.get((T6, repr([TOP_RATE]), "oracle_p90_s"))
    if top is not None:
        found.append(Claim.of_verdict(top, paper=f"Oracle p90 {top.paper:.3g} s at {TOP_RATE:,.0f} req/s",
                                      ours=f"Oracle p90 at {TOP_RATE:,.0f} req/s is {top.ours:.3g} s", why=why_top))
    return found


def headline_figures(judged: Sequence[Verdict], banded: Mapping[str, Banded]) -> list[Banded]:
    """The bands of the cells the claims quote (for the headline band and tornado tables)."""
    quoted = {v.figure for v in judged if v.table == MEANS or (v.table == T6 and v.key == [TOP_RATE]
                                                              and v.column == "oracle_p90_s")}
    return [b for name, b in banded.items() if name in quoted]


__all__ = ["Cell", "MEANS", "REDUCTION_ALTERNATIVE", "RATIO_ALTERNATIVE", "SECONDS_ALTERNATIVE", "T6", "T8", "TOP_RATE",
           "claims", "headline_figures", "mean_cells", "table6_cells", "table7_cells", "table8_cells", "verdicts"]
