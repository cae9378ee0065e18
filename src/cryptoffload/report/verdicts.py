"""Verdicts: every figure of ours that stands beside a paper value, judged by one rule (issue 35).

Why every figure and one rule: a headline that picks "the closest" and "the furthest" row and
judges those can show no divergence for a study whose other rows miss the paper, and a band
wide enough to admit every outcome turns any result into an agreement. So each study gives a
:class:`Verdict` for every cell of its tables that has a paper value (``check_verdicts``
refuses a result that leaves one out), and the kind follows from the numbers alone
(:func:`verdict_kind`), never from the study's wording:

* **divergence**: the paper's value (its stated range, when it gives one in words) lies outside
  our band: every outcome our inputs and noise allow misses it;
* **agreement**: inside an *informative* band (:func:`informative`);
* **inconclusive**: inside a band that is not informative, or no band could be made (one seed,
  too few repeats): the verdict says what makes the band wide and what would narrow it;
* **fitted**: the figure was fitted to that very paper value, so it agrees by construction and is
  not judged;
* **not judged in quick mode**: quick mode's band is not the full run's (fewer seeds, fewer
  fetches, fewer corners) and its verdict could differ from the full run's
  (:func:`quick_kind`); the verdict names the full run's command.

The informativeness rule, in one place (:data:`MAX_HALF_WIDTH`): a band judges a paper figure
only when it is **narrower than the effect the figure states** -- its width below
``|paper - alternative|``, where the alternative is the figure's value under the simplest
alternative the study names for it (no offload: a ratio of 1; no saving: 0; Oracle's own p90:
1) -- **and its half-width is at most a quarter of the paper's value**. A band that contains
both the paper's value and the alternative cannot tell them apart; one wider than half the
paper's value tells nothing about its size.

Where a quick run's verdict stands (:func:`quick_kind`): a band computed exactly as the full run
computes it (``basis="full"``) keeps every verdict; one computed on the full run's samples but
at fewer points (``"inner"``: the tornado's ends, a lower bound of the full band) keeps only
*inconclusive* (a wider band stays uninformative) and *fitted*; one computed on other samples
(``"sample"``: fewer seeds, records or fetches) keeps only *fitted*.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Sequence, TypeGuard

from cryptoffload.checks import JsonDict
from cryptoffload.io import json_safe

if TYPE_CHECKING:  # annotations only: result.py imports this module
    from cryptoffload.report.result import Cell, StudyResult, Table

AGREEMENT, DIVERGENCE, INCONCLUSIVE, FITTED, NOT_JUDGED = (
    "agreement", "divergence", "inconclusive", "fitted", "not judged in quick mode")
KINDS = (AGREEMENT, DIVERGENCE, INCONCLUSIVE, FITTED, NOT_JUDGED)
#: The widest half-width an informative band may have, as a fraction of the paper's value.
MAX_HALF_WIDTH = 0.25
#: How a quick run's band relates to the full run's (see the module's docstring).
BASES = ("full", "inner", "sample")
VERDICTS_ID = "verdicts"


def paper_inside(band: Sequence[float], paper: float, paper_range: Sequence[float] | None = None) -> bool:
    """Whether the paper's value (its stated range, when it has one) meets the band."""
    lo, hi = (paper_range[0], paper_range[1]) if paper_range is not None else (paper, paper)
    return lo <= band[1] and band[0] <= hi


def informative(band: Sequence[float], paper: float, alternative: float) -> bool:
    """The rule: the band is narrower than the effect the paper states (``|paper -
    alternative|``) and its half-width is at most :data:`MAX_HALF_WIDTH` of the paper's value."""
    width = band[1] - band[0]
    return width < abs(paper - alternative) and width / 2 <= MAX_HALF_WIDTH * abs(paper)


def verdict_kind(band: Sequence[float] | None, paper: float, alternative: float,
                 paper_range: Sequence[float] | None = None, fitted: bool = False) -> str:
    """The full run's verdict on one figure: fitted, divergence, agreement or inconclusive."""
    if fitted:
        return FITTED
    if band is None:
        return INCONCLUSIVE
    if not paper_inside(band, paper, paper_range):
        return DIVERGENCE
    return AGREEMENT if informative(band, paper, alternative) else INCONCLUSIVE


def quick_kind(kind: str, basis: str) -> str:
    """What a quick run may say of a figure whose full-rule verdict on its own band is ``kind``:
    the verdict when the full run could not say otherwise, else :data:`NOT_JUDGED`."""
    if basis not in BASES:
        raise ValueError(f"basis must be one of {BASES}, got {basis!r}")
    if kind == FITTED or basis == "full":
        return kind
    if basis == "inner" and kind == INCONCLUSIVE:
        return kind
    return NOT_JUDGED


def _num(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 1e4 else f"{v:.4g}"


@dataclass(frozen=True)
class Verdict:
    """One figure of ours beside the paper's value, and what the rule makes of it.

    ``table``/``key``/``column`` point at the cell (its value ``ours``, its provenance, and the
    paper's value in the same column are read from the table by :func:`verdict_for`);
    ``paper_source`` says where the paper's value comes from (``cited: Table 6`` or
    ``derived: 27,400 / 110``: arithmetic on printed numbers, with the arithmetic);
    ``alternative`` is the figure under the simplest alternative the study names
    (``alternative_what``); ``band`` is ours over its inputs and noise (``None``: no band could
    be made, ``why`` says why); ``narrow`` what would narrow it; ``basis`` how a quick run's
    band relates to the full run's, ``quick_why`` how it differs; ``rerun`` the full run's command."""

    figure: str
    table: str
    key: list[Cell]
    column: str
    ours: float
    paper: float
    provenance: str
    paper_source: str
    alternative: float
    alternative_what: str
    band: list[float] | None
    kind: str
    quick: bool = False
    basis: str = "full"
    paper_range: list[float] | None = None
    most_sensitive: str = ""
    closes: str = ""
    band_method: str = ""
    why: str = ""
    narrow: str = ""
    rerun: str = ""
    quick_why: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"verdict kind must be one of {KINDS}, got {self.kind!r}")
        expected = self.expected_kind()
        if self.kind != expected:
            raise ValueError(f"verdict on {self.figure!r}: the rule gives {expected!r}, not {self.kind!r}")
        if self.band is not None and not (len(self.band) == 2 and self.band[0] <= self.band[1]):
            raise ValueError(f"verdict band must be [low, high], got {self.band!r}")

    def expected_kind(self) -> str:
        """The kind the rule gives this verdict's numbers (in its run's mode)."""
        full = verdict_kind(self.band, self.paper, self.alternative, self.paper_range,
                            fitted=self.provenance == FITTED)
        return quick_kind(full, self.basis) if self.quick else full

    @property
    def full_kind(self) -> str:
        """The rule's verdict on this band as if it were the full run's."""
        return verdict_kind(self.band, self.paper, self.alternative, self.paper_range,
                            fitted=self.provenance == FITTED)

    def reason(self) -> str:
        """Why the verdict is what it is, in words."""
        paper = (_num(self.paper) if self.paper_range is None
                 else f"{_num(self.paper_range[0])} .. {_num(self.paper_range[1])}")
        if self.kind == FITTED:
            return "computed from inputs fitted to this very table: a fit shows the model can match, not that it predicts; not judged"
        if self.kind == NOT_JUDGED:
            what = {"inner": "a lower bound of the full run's band",
                    "sample": "made otherwise than the full run's"}.get(self.basis, "")
            how = f" ({self.quick_why})" if self.quick_why else ""
            return (f"quick mode's band is {what}{how}, so its verdict ({self.full_kind}) could differ from the full "
                    f"run's: {self.rerun or 'run the study in full mode'}")
        if self.band is None:
            return f"no band: {self.why}" + (f"; {self.narrow}" if self.narrow else "")
        band = f"[{_num(self.band[0])}, {_num(self.band[1])}]"
        if self.kind == DIVERGENCE:
            moves = f"{self.closes} moves ours furthest towards it" if self.closes else "no input of ours moves towards it"
            return f"the paper's {paper} lies outside our band {band}; {moves}"
        effect = abs(self.paper - self.alternative)
        if self.kind == AGREEMENT:
            return (f"the paper's {paper} lies inside our band {band}, narrower than the {_num(effect)} effect "
                    f"from {self.alternative_what} ({_num(self.alternative)})")
        width = self.band[1] - self.band[0]
        wide = (f"wider than the {_num(effect)} effect from {self.alternative_what} ({_num(self.alternative)})"
                if width >= effect else
                f"a half-width over {MAX_HALF_WIDTH * 100:g} % of the paper's value")
        moved = f"; {self.most_sensitive} moves it most" if self.most_sensitive else ""
        return (f"the paper's {paper} lies inside our band {band}, but the band is {wide}{moved}"
                + (f"; {self.narrow}" if self.narrow else ""))

    def to_contract(self) -> JsonDict:
        return {k: json_safe(getattr(self, k)) for k in self.__dataclass_fields__} | {"reason": self.reason()}

    @classmethod
    def from_contract(cls, d: dict[str, Any]) -> "Verdict":
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})


@dataclass
class Scoreboard:
    """How many rows have a paper value, and what each became."""

    rows: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))

    @classmethod
    def of(cls, verdicts: Iterable[Verdict]) -> "Scoreboard":
        board = cls()
        for v in verdicts:
            board.rows += 1
            board.counts[v.kind] += 1
        return board

    def add(self, other: "Scoreboard") -> "Scoreboard":
        return Scoreboard(self.rows + other.rows, {k: self.counts[k] + other.counts[k] for k in KINDS})

    def parts(self) -> list[tuple[str, str]]:
        """``[(kind, "3 agreements"), ...]`` for every kind with at least one verdict."""
        names = {AGREEMENT: ("agreement", "agreements"), DIVERGENCE: ("divergence", "divergences"),
                 INCONCLUSIVE: ("inconclusive", "inconclusive"), FITTED: ("fitted", "fitted"),
                 NOT_JUDGED: ("not judged in quick mode", "not judged in quick mode")}
        return [(k, f"{n} {names[k][n != 1]}") for k in KINDS if (n := self.counts[k])]

    def text(self) -> str:
        """``"87 rows with a paper value: 3 agreements, 40 divergences, 20 inconclusive, 10 fitted,
        14 not judged in quick mode"`` (kinds with none left out)."""
        parts = [t for _, t in self.parts()]
        return f"{self.rows} row{'s' if self.rows != 1 else ''} with a paper value" + (
            ": " + ", ".join(parts) if parts else "")

    def to_contract(self) -> dict[str, int]:
        return {"rows": self.rows} | dict(self.counts)


def _cell(table: Table, key: Sequence[Cell], column: str) -> tuple[int, Cell, Cell]:
    """The row index, our value and the paper's value of one cell."""
    k = table.key_columns
    j = table.columns.index(column)
    for i, r in enumerate(table.rows):
        if list(r[:k]) == list(key):
            p = table.paper_row(r[:k])
            return i, r[j], None if p is None else p[j]
    raise LookupError(f"table {table.id} has no row {list(key)!r}")


def verdict_for(table: Table, key: Sequence[Cell], column: str, *, figure: str, paper_source: str,
                alternative: float, alternative_what: str, band: Sequence[float] | None, quick: bool = False,
                basis: str = "full", paper_range: Sequence[float] | None = None, most_sensitive: str = "",
                closes: str = "", band_method: str = "", why: str = "", narrow: str = "",
                rerun: str = "", quick_why: str = "") -> Verdict:
    """The verdict on one cell: ours, the paper's value and our provenance read from ``table``
    (never restated by the study), the kind from the rule."""
    i, ours, paper = _cell(table, key, column)
    if paper is None or ours is None:
        raise ValueError(f"table {table.id} row {list(key)!r} column {column}: no value of ours or the paper's")
    prov = table.cell_provenance(i, column)
    b = None if band is None else [float(band[0]), float(band[1])]
    pr = None if paper_range is None else [float(paper_range[0]), float(paper_range[1])]
    full = verdict_kind(b, float(paper), alternative, pr, fitted=prov == FITTED)
    kind = quick_kind(full, basis) if quick else full
    return Verdict(figure, table.id, list(key), column, float(ours), float(paper), prov, paper_source,
                   float(alternative), alternative_what, b, kind, quick, basis, pr, most_sensitive,
                   "" if kind != DIVERGENCE else closes, band_method, why, narrow, rerun, quick_why if quick else "")


def _same(cell: object, ours: float) -> bool:
    """Our figure in the verdict is the table's: equal, or both undefined (NaN: a figure with no
    requests in a small run, whose verdict is then inconclusive)."""
    if isinstance(cell, float) and math.isnan(cell):
        return math.isnan(ours)
    return isinstance(cell, (int, float)) and _numeric(cell) and math.isclose(cell, ours, rel_tol=1e-9, abs_tol=1e-12)


def _numeric(v: object) -> TypeGuard[float]:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def paper_cells(table: Table) -> list[tuple[list[Any], str]]:
    """Every (key, column) of ``table`` where both ours and the paper's value are numbers and
    ours is not itself cited (a cited row beside the paper's is the paper's own figure copied:
    nothing of ours to judge)."""
    if not table.paper:
        return []
    k = table.key_columns
    cells = []
    for i, r in enumerate(table.rows):
        p = table.paper_row(r[:k])
        if p is None:
            continue
        for j in range(k, len(r)):
            col = table.columns[j]
            if (col != "provenance" and _numeric(p[j]) and _numeric(r[j])
                    and table.cell_provenance(i, col) != "cited"):
                cells.append((list(r[:k]), col))
    return cells


def check_verdicts(result: StudyResult) -> list[str]:
    """Every cell with a paper value has exactly one verdict (unless its table says why its
    paper values are judged elsewhere, ``Table.unjudged``), each verdict matches its cell (ours,
    the paper's, our provenance) and the rule, a claim that quotes a judged cell says the same
    kind, and a quick run's verdicts are quick ones."""
    problems: list[str] = []
    seen: dict[tuple[str, str, str], Verdict] = {}
    for v in result.verdicts:
        where = (v.table, repr(v.key), v.column)
        if where in seen:
            problems.append(f"verdict on {v.figure!r}: a second verdict for table {v.table} {v.key!r} {v.column}")
        seen[where] = v
        if v.quick != (result.mode == "quick"):
            problems.append(f"verdict on {v.figure!r}: quick={v.quick} in a {result.mode} run")
        t = result.tables.get(v.table)
        if t is None:
            problems.append(f"verdict on {v.figure!r}: no table {v.table!r}")
            continue
        try:
            i, ours, paper = _cell(t, v.key, v.column)
        except (LookupError, ValueError):
            problems.append(f"verdict on {v.figure!r}: table {v.table} has no cell {v.key!r} {v.column}")
            continue
        if not (_same(ours, v.ours) and _numeric(paper) and math.isclose(paper, v.paper, rel_tol=1e-9, abs_tol=1e-12)):
            problems.append(f"verdict on {v.figure!r}: ours {v.ours!r} / paper {v.paper!r} are not the table's "
                            f"({ours!r} / {paper!r})")
        if t.cell_provenance(i, v.column) != v.provenance:
            problems.append(f"verdict on {v.figure!r}: provenance {v.provenance!r}, the table's cell says "
                            f"{t.cell_provenance(i, v.column)!r}")
    for t in result.tables.values():
        if t.unjudged:
            continue
        for key, col in paper_cells(t):
            if (t.id, repr(key), col) not in seen:
                problems.append(f"table {t.id} row {key!r} column {col}: a paper value without a verdict (give one, "
                                "or say in Table.unjudged where these paper values are judged)")
    for c in result.claims:
        quoted = seen.get((c.table, repr(list(c.key)), c.column)) if c.column else None
        if quoted is not None and c.kind != quoted.kind:
            problems.append(f"claim {c.ours!r}: kind {c.kind!r}, its verdict says {quoted.kind!r}")
    return problems


__all__ = ["AGREEMENT", "BASES", "DIVERGENCE", "FITTED", "INCONCLUSIVE", "KINDS", "MAX_HALF_WIDTH", "NOT_JUDGED",
           "Scoreboard", "VERDICTS_ID", "Verdict", "check_verdicts", "informative", "paper_cells", "paper_inside",
           "quick_kind", "verdict_for", "verdict_kind"]
