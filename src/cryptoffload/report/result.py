"""Study results as plain dataclasses, and the one place they are written to disk.

Why one writer: every study must leave either a complete result (CSV, PNG, and last of all
``result.json``) or nothing that looks complete. :func:`write_result` stages everything in a
hidden temporary folder inside ``out`` and moves files into place only when all were written,
``result.json`` last, so a reader that finds ``result.json`` finds the rest.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence, TypeAlias

from cryptoffload.checks import strict_json
from cryptoffload.checks import JsonDict
from cryptoffload.errors import ConfigError
from cryptoffload.io import json_safe, read_input_text
from cryptoffload.report.provenance import (
    PROVENANCE_COLUMN,
    PROVENANCES,
    VALUE_PROVENANCES,
    check_provenance,
    provenance_word,
)
from cryptoffload.report.verdicts import (
    AGREEMENT,
    DIVERGENCE,
    INCONCLUSIVE,
    KINDS,
    Scoreboard,
    Verdict,
    check_verdicts,
    quick_kind,
    verdict_kind,
)

MAX_RESULT_BYTES = 256 * 1024 * 1024  # a result.json (tables of a full run)


#: A cell of a table's key or a value read back from it: a number, a word, a flag or nothing.
Cell: TypeAlias = "str | int | float | bool | None"

@dataclass
class Table:
    """One table of a study. The first ``key_columns`` columns identify a row; ``paper`` holds
    the paper's rows in the same columns (``None`` where the paper has no value).

    Provenance is declared, not guessed: ``provenance`` for the whole table; a ``mixed`` table
    says it per row (a ``provenance`` column) or per value column (``column_provenance``).
    ``reproduces`` names the paper's table the ``paper`` rows come from (``"Table 2"``), and
    ``inputs`` the model inputs the computed values depend on (``"profile"`` or
    ``"profile:field"``, or a study's own fit name; ``None``: every input the study fitted);
    ``row_inputs`` narrows them per row; ``fitted_to`` names what a fitted table was fitted to
    when that is not the table it reproduces. :func:`cryptoffload.report.provenance.check_provenance`
    then refuses a row computed from an input fitted to the very table it stands beside
    unless the row says ``fitted``.

    Every cell beside a paper value gets a verdict (:mod:`cryptoffload.report.verdicts`) unless
    ``unjudged`` says where those paper values are judged instead (a view of another table,
    a reading of the paper rather than our prediction); ``paper_derived`` says which of the
    paper's columns are arithmetic on its printed numbers, with the arithmetic (``{column:
    "derived: 11,359 ms / latency_ms"}``): the paper's CSV labels them so, never cited."""

    id: str
    title: str
    columns: list[str]
    rows: list[list[Any]]
    provenance: str
    paper: list[list[Any]] | None = None
    key_columns: int = 1
    note: str = ""
    reproduces: str = ""
    inputs: list[str] | None = None
    row_inputs: Sequence[list[str] | None] | None = None
    column_provenance: dict[str, str] | None = None
    fitted_to: str = ""
    unjudged: str = ""
    paper_derived: dict[str, str] | None = None

    def __post_init__(self) -> None:
        if self.provenance not in PROVENANCES:
            raise ValueError(f"provenance must be one of {PROVENANCES}")
        for r in self.rows + (self.paper or []):
            if len(r) != len(self.columns):
                raise ValueError(f"table {self.id}: row {r!r} does not match columns {self.columns}")
        if self.row_inputs is not None and len(self.row_inputs) != len(self.rows):
            raise ValueError(f"table {self.id}: row_inputs has {len(self.row_inputs)} entries for "
                             f"{len(self.rows)} rows")
        for col, prov in (self.column_provenance or {}).items():
            if col not in self.columns:
                raise ValueError(f"table {self.id}: column_provenance names {col!r}, not a column")
            if prov not in VALUE_PROVENANCES:
                raise ValueError(f"table {self.id}: column {col!r} provenance must be one of {VALUE_PROVENANCES}")
        for col, how in (self.paper_derived or {}).items():
            if col not in self.columns or provenance_word(how) != "derived":
                raise ValueError(f"table {self.id}: paper_derived names {col!r} as {how!r}: a column, and "
                                 "'derived: <the arithmetic>'")

    @property
    def has_provenance_column(self) -> bool:
        return PROVENANCE_COLUMN in self.columns

    def row_provenance(self, index: int) -> str:
        """The provenance of row ``index``: its ``provenance`` cell's first word in a table that
        has one, otherwise the table's."""
        if self.has_provenance_column:
            word = provenance_word(self.rows[index][self.columns.index(PROVENANCE_COLUMN)])
            if word:
                return word
        return self.provenance

    def cell_provenance(self, index: int, column: str) -> str:
        """The provenance of one value: the column's (``column_provenance``) if declared, else the row's."""
        if self.column_provenance and column in self.column_provenance:
            return self.column_provenance[column]
        return self.row_provenance(index)

    def inputs_of(self, index: int) -> list[str] | None:
        if self.row_inputs is not None and self.row_inputs[index] is not None:
            return list(self.row_inputs[index] or [])
        return None if self.inputs is None else list(self.inputs)

    def paper_row(self, key: Sequence[object]) -> list[Any] | None:
        for r in self.paper or []:
            if list(r[: self.key_columns]) == list(key):
                return r
        return None

    def to_contract(self) -> JsonDict:
        out = {"title": self.title, "columns": self.columns, "rows": json_safe(self.rows),
               "paper": json_safe(self.paper) if self.paper is not None else None,
               "provenance": self.provenance, "key_columns": self.key_columns, "note": self.note,
               "reproduces": self.reproduces, "inputs": self.inputs}
        if self.fitted_to:
            out["fitted_to"] = self.fitted_to
        if self.unjudged:
            out["unjudged"] = self.unjudged
        if self.paper_derived:
            out["paper_derived"] = self.paper_derived
        if self.row_inputs is not None:
            out["row_inputs"] = self.row_inputs
        if self.column_provenance:
            out["column_provenance"] = self.column_provenance
        return out

    def csv_columns_rows(self) -> tuple[list[str], list[list[object]]]:
        """Columns and rows as written to the CSV: a table without a ``provenance`` column gets
        one (each value column's provenance where they differ), so every CSV row says where
        its numbers come from; a table with both says each row's word, then the columns that
        differ from it (``measured; time_s_at_1m_records: derived``)."""
        if self.has_provenance_column:
            at = self.columns.index(PROVENANCE_COLUMN)
            rows, differ = [list(r) for r in self.rows], [f"{c}: {p}" for c, p in (self.column_provenance or {}).items()]
            for r in rows if differ else []:
                r[at] = "; ".join([str(r[at])] + differ)
            return list(self.columns), rows
        if self.column_provenance:
            desc = "; ".join(f"{c}: {self.column_provenance.get(c, self.provenance)}"
                             for c in self.columns[self.key_columns:])
            return self.columns + [PROVENANCE_COLUMN], [list(r) + [desc] for r in self.rows]
        return self.columns + [PROVENANCE_COLUMN], [list(r) + [self.provenance] for r in self.rows]

    def paper_csv_columns_rows(self) -> tuple[list[str], list[list[object]]]:
        """The paper's rows as written to ``*_paper.csv``, with a ``provenance`` column: ``cited``
        (as printed), then each column that is arithmetic on printed numbers, with its arithmetic."""
        derived = "; ".join(f"{c}: {how}" for c, how in (self.paper_derived or {}).items())
        label = "cited" + (f"; {derived}" if derived else "")
        cols = [c for c in self.columns if c != PROVENANCE_COLUMN]
        at = [j for j, c in enumerate(self.columns) if c != PROVENANCE_COLUMN]
        return cols + [PROVENANCE_COLUMN], [[r[j] for j in at] + [label] for r in self.paper or []]


@dataclass
class Claim:
    """One of the paper's claims beside our result, for the report's first screen and the
    headline. ``provenance`` is our result's (one of :data:`VALUE_PROVENANCES`); ``table`` and
    ``key`` (and ``column``, for a claim that quotes one cell) point at what it quotes, so the
    check can hold the claim to that row's provenance and to the cell's verdict; ``kind`` is a
    verdict's (:data:`~cryptoffload.report.verdicts.KINDS`: ``agreement``, ``divergence``,
    ``inconclusive``, ``fitted``, ``not judged in quick mode``, following the one rule of
    :mod:`cryptoffload.report.verdicts`) or ``claim`` (stated, not judged: our own extension,
    no paper value). An agreement or a divergence needs a band, the paper's value and the
    ``alternative`` the rule measures the effect from.

    A predicted claim carries its band (issue 26): ``band`` is ``[low, high]`` of our figure
    when its uncertain inputs move over their ranges (``profiles/sensitivity.py``),
    ``paper_value`` the paper's figure in the same unit, ``most_sensitive`` the input that
    moves ours most, ``closes`` the one that would move it furthest towards the paper's (a
    divergence names it), ``effect`` the size of the effect the claim describes (``None``: not
    an effect), ``band_method`` how the band was found. An agreement whose paper value lies
    outside its band is refused: build banded claims with :meth:`judged`."""

    paper: str
    ours: str
    provenance: str
    table: str = ""
    key: Sequence[Cell] = field(default_factory=list)
    kind: str = "claim"
    why: str = ""
    band: list[float] | None = None
    paper_value: float | None = None
    most_sensitive: str = ""
    closes: str = ""
    effect: float | None = None
    band_method: str = ""
    paper_range: list[float] | None = None
    column: str = ""
    alternative: float | None = None

    KINDS = KINDS + ("claim",)

    def __post_init__(self) -> None:
        if self.provenance not in VALUE_PROVENANCES:
            raise ValueError(f"claim provenance must be one of {VALUE_PROVENANCES}, got {self.provenance!r}")
        if self.kind not in self.KINDS:
            raise ValueError(f"claim kind must be one of {self.KINDS}, got {self.kind!r}")
        if self.kind in (AGREEMENT, DIVERGENCE) and (self.band is None or self.paper_value is None
                                                     or self.alternative is None):
            raise ValueError(f"claim {self.ours!r}: an {self.kind} with the paper is judged against our band: give "
                             "band, paper_value and alternative (Claim.judged, Claim.of_verdict), or state it "
                             "unjudged (kind 'claim')")
        if self.band is not None:
            if len(self.band) != 2 or not self.band[0] <= self.band[1]:
                raise ValueError(f"claim band must be [low, high], got {self.band!r}")
            if self.paper_range is not None and not (
                    len(self.paper_range) == 2 and self.paper_value is not None
                    and self.paper_range[0] <= self.paper_value <= self.paper_range[1]):
                raise ValueError(f"claim paper_range must be [low, high] around the paper's value, got "
                                 f"{self.paper_range!r} for {self.paper_value!r}")
            if (self.kind in (AGREEMENT, DIVERGENCE, INCONCLUSIVE) and self.paper_value is not None
                    and self.alternative is not None):
                rule = verdict_kind(self.band, self.paper_value, self.alternative, self.paper_range)
                if rule != self.kind:
                    raise ValueError(f"claim {self.ours!r}: the paper's {self.paper_value:g} beside the band "
                                     f"[{self.band[0]:g}, {self.band[1]:g}] (alternative {self.alternative:g}) is "
                                     f"{rule!r} by the rule (report/verdicts.py), not {self.kind!r}")

    @classmethod
    def judged(cls, *, paper: str, ours: str, provenance: str, band: Sequence[float], paper_value: float,
               alternative: float, most_sensitive: str, closes: str = "", why: str = "",
               table: str = "", key: Sequence[Cell] = (), band_method: str = "",
               paper_range: Sequence[float] | None = None, quick_basis: str | None = None) -> "Claim":
        """A banded claim whose kind follows the one rule (:func:`~cryptoffload.report.verdicts.verdict_kind`):
        a divergence when the paper's value (or, with ``paper_range``, its stated precision) lies
        outside the band, naming the input that would close it; an agreement inside a band
        narrower than the effect from ``alternative``; inconclusive inside a wider one. A quick
        run passes how its band relates to the full run's (``quick_basis``), and a verdict the
        full run could contradict becomes "not judged in quick mode"."""
        lo, hi = (paper_range[0], paper_range[1]) if paper_range is not None else (paper_value, paper_value)
        b = [float(band[0]), float(band[1])]
        full = verdict_kind(b, paper_value, alternative, paper_range)
        kind = full if quick_basis is None else quick_kind(full, quick_basis)
        reason = why
        paper_text = _num(paper_value) if paper_range is None else f"{_num(lo)} .. {_num(hi)}"
        if kind == DIVERGENCE:
            gap = f"the paper's {paper_text} lies outside our band [{_num(b[0])}, {_num(b[1])}]"
            moves = f"; {closes} moves ours furthest towards it" if closes else "; no input of ours moves towards it"
            reason = f"{gap}{moves}" + (f"; {why}" if why else "")
        elif kind == INCONCLUSIVE:
            reason = (f"the band [{_num(b[0])}, {_num(b[1])}] is too wide to judge the paper's {paper_text} against "
                      f"{_num(alternative)} (report/verdicts.py)" + (f"; {why}" if why else ""))
        elif kind not in (AGREEMENT, DIVERGENCE):
            reason = f"quick mode's band could give another verdict than the full run's ({full})" + (
                f"; {why}" if why else "")
        return cls(paper=paper, ours=ours, provenance=provenance, table=table, key=list(key), kind=kind, why=reason,
                   band=b, paper_value=float(paper_value), most_sensitive=most_sensitive,
                   closes=closes if kind == DIVERGENCE else "", effect=float(paper_value - alternative),
                   band_method=band_method, paper_range=None if paper_range is None else [float(lo), float(hi)],
                   alternative=float(alternative))

    @classmethod
    def of_verdict(cls, v: Verdict, *, paper: str, ours: str, why: str = "") -> "Claim":
        """A headline claim that quotes one judged cell: its kind, band, provenance and reason
        are the verdict's; only the wording is the study's."""
        reason = v.reason() + (f"; {why}" if why else "")
        return cls(paper=paper, ours=ours, provenance=v.provenance, table=v.table, key=list(v.key), kind=v.kind,
                   why=reason, band=None if v.band is None else list(v.band), paper_value=v.paper,
                   most_sensitive=v.most_sensitive, closes=v.closes, effect=v.paper - v.alternative,
                   band_method=v.band_method, paper_range=None if v.paper_range is None else list(v.paper_range),
                   column=v.column, alternative=v.alternative)

    @property
    def inside(self) -> bool:
        """Whether the paper's value (its stated range, when it has one) meets our band (False
        without either)."""
        if self.band is None or self.paper_value is None:
            return False
        lo, hi = self.paper_range or (self.paper_value, self.paper_value)
        return lo <= self.band[1] and self.band[0] <= hi

    @property
    def within_noise(self) -> bool:
        """Whether the band is wider than the effect the claim describes: then the claim cannot
        tell the effect from no effect."""
        return self.band is not None and self.effect is not None and self.band[1] - self.band[0] > abs(self.effect)

    def label(self) -> str:
        """What the claim is, as the card and the headline name it: only a simulated result is
        a *predicted* agreement. It says what made it one (the paper's value inside an
        informative band, outside it, or inside one too wide to tell), not "strongest" or
        "largest", which the band does not rank."""
        if self.kind == AGREEMENT:
            what = "predicted agreement" if self.provenance == "simulated" else "agreement"
            return f"{what}, " + ("the paper's range meets our band" if self.paper_range else "inside our band")
        return {DIVERGENCE: "divergence, outside our band", INCONCLUSIVE: "inconclusive: our band is too wide to tell",
                "fitted": "fitted: not judged", "claim": "the paper's claim"}.get(self.kind, self.kind)

    def band_text(self) -> str:
        """The band in words: its ends, the input that moves it most, and "within noise" when
        the band is wider than the effect; ``""`` for a claim without a band."""
        if self.band is None:
            return ""
        text = (f"band {_num(self.band[0])} .. {_num(self.band[1])}" if self.band[0] < self.band[1]
                else f"band {_num(self.band[0])} (no input moves it)")
        if self.paper_range is not None:
            text += (f" against the paper's {_num(self.paper_range[0])} .. {_num(self.paper_range[1])} "
                     "(its value at its stated precision)")
        if self.most_sensitive:
            text += f", most sensitive to {self.most_sensitive}"
        if self.within_noise:
            text += f"; within noise (the band is wider than the {abs(self.effect or 0):.3g} effect)"
        return text

    def sentence(self) -> str:
        """The headline sentence: what it is (agreement or divergence), ours, the paper's, and
        the provenance in the same sentence (a fitted number always says so), then the band."""
        lead = "" if self.kind == "claim" else self.label().capitalize() + ": "
        text = f"{lead}{self.ours} (paper: {self.paper}) — {self.provenance}"
        if self.band is not None:
            text += f"; {self.band_text()}"
        if self.why:
            text += f"; {self.why}"
        return text

    def to_contract(self) -> JsonDict:
        out = {"paper": self.paper, "ours": self.ours, "provenance": self.provenance, "table": self.table,
               "key": json_safe(self.key), "kind": self.kind, "why": self.why}
        if self.column:
            out["column"] = self.column
        if self.alternative is not None:
            out["alternative"] = json_safe(self.alternative)
        if self.band is not None:
            out.update(band=json_safe(self.band), paper_value=json_safe(self.paper_value),
                       most_sensitive=self.most_sensitive, closes=self.closes, effect=json_safe(self.effect),
                       within_noise=self.within_noise, band_method=self.band_method)
            if self.paper_range is not None:
                out["paper_range"] = json_safe(self.paper_range)
        return out

    @classmethod
    def from_contract(cls, c: dict[str, Any]) -> "Claim":
        """A claim read back from ``result.json``; one written before bands existed has none, and
        was never judged against one, so it reads back as a stated claim."""
        kind = c.get("kind", "claim")
        judged = c.get("band") is not None and c.get("paper_value") is not None and c.get("alternative") is not None
        if kind in (AGREEMENT, DIVERGENCE) and not judged:
            kind = "claim"  # written before the rule had an alternative: never judged by it
        return cls(paper=c["paper"], ours=c["ours"], provenance=c["provenance"], table=c.get("table", ""),
                   key=c.get("key", []), kind=kind, why=c.get("why", ""), band=c.get("band"),
                   paper_value=c.get("paper_value"), most_sensitive=c.get("most_sensitive", ""),
                   closes=c.get("closes", ""), effect=c.get("effect"), band_method=c.get("band_method", ""),
                   paper_range=c.get("paper_range"), column=c.get("column", ""), alternative=c.get("alternative"))


def _num(v: float) -> str:
    """A band's end as a sentence shows it: 4 significant digits, thousands grouped (27,400 not 2.74e+04)."""
    return f"{v:,.0f}" if abs(v) >= 1e4 else f"{v:.4g}"


@dataclass
class StudyResult:
    study: str
    title: str
    mode: str
    seed: int
    version: str
    machine: dict[str, object]
    tables: dict[str, Table] = field(default_factory=dict)
    figures: list[str] = field(default_factory=list)
    profiles: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    headline: list[str] = field(default_factory=list)
    paper: str = ""
    elapsed_s: float = 0.0
    extra: dict[str, object] = field(default_factory=dict)   # anything json_safe writes
    fits: dict[str, str] = field(default_factory=dict)
    claims: list[Claim] = field(default_factory=list)
    key_figure: str = ""
    verdicts: list[Verdict] = field(default_factory=list)
    #: when the run's result was written (UTC, ``2026-12-06 10:41 UTC``; :func:`write_result`
    #: sets it): the report's figure captions give it beside the machine
    date: str = ""

    @property
    def scoreboard(self) -> Scoreboard:
        """The study's rows with a paper value, and how many of each verdict."""
        return Scoreboard.of(self.verdicts)

    def add(self, table: Table) -> Table:
        self.tables[table.id] = table
        return table

    def claim(self, claim: Claim) -> Claim:
        """Add a claim and its sentence to the headline."""
        self.claims.append(claim)
        self.headline.append(claim.sentence())
        return claim

    def declare_fits(self, fits: dict[str, str]) -> None:
        """Record model inputs fitted to one of the paper's tables: ``{input: "Table 2"}``
        (``""``: fitted to the paper's results without naming a table)."""
        self.fits.update(fits)

    def to_contract(self) -> JsonDict:
        return {
            "study": self.study, "title": self.title, "mode": self.mode, "seed": self.seed,
            "version": self.version, "machine": self.machine, "date": self.date,
            "tables": {k: t.to_contract() for k, t in self.tables.items()},
            "figures": self.figures, "profiles": self.profiles, "notes": self.notes,
            "headline": self.headline, "paper": self.paper, "elapsed_s": self.elapsed_s,
            "fits": self.fits, "claims": [c.to_contract() for c in self.claims], "key_figure": self.key_figure,
            "scoreboard": self.scoreboard.to_contract(), "verdicts": [v.to_contract() for v in self.verdicts],
            "extra": json_safe(self.extra),
        }


def load_result(path: str | os.PathLike[str]) -> StudyResult:
    """Read a ``result.json`` back (for the report, ``api.study.read`` and tests).

    The file comes from outside (a user's folder, a colleague's run): it is read strictly (no
    NaN literal, no key twice, bounded) and any field missing or of the wrong shape is one
    :class:`ConfigError` naming the file and the fix, never a traceback."""
    text = read_input_text(path, "study result", max_bytes=MAX_RESULT_BYTES, error=ConfigError)
    try:
        data = strict_json(text)
        if not isinstance(data, dict) or not isinstance(data.get("tables"), dict):
            raise ValueError("not a study result (no 'tables' object)")
        return _result_of(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        what = f"field {exc} missing" if isinstance(exc, KeyError) else str(exc)
        raise ConfigError(f"cannot read study result {os.fspath(path)}: {what}; write it again with "
                          "`cryptoffload study <name> --out DIR` (the reader takes what that writes)") from None


def _result_of(data: dict[str, Any]) -> StudyResult:
    """The result held by ``data`` (a decoded ``result.json``); KeyError/TypeError on a bad shape."""
    tables = {tid: Table(id=tid, title=t["title"], columns=t["columns"], rows=t["rows"],
                         provenance=t["provenance"], paper=t.get("paper"),
                         key_columns=t.get("key_columns", 1), note=t.get("note", ""),
                         reproduces=t.get("reproduces", ""), inputs=t.get("inputs"),
                         row_inputs=t.get("row_inputs"), column_provenance=t.get("column_provenance"),
                         fitted_to=t.get("fitted_to", ""), unjudged=t.get("unjudged", ""),
                         paper_derived=t.get("paper_derived"))
              for tid, t in data["tables"].items()}
    claims = [Claim.from_contract(c) for c in data.get("claims", [])]
    verdicts = [Verdict.from_contract(v) for v in data.get("verdicts", [])]
    return StudyResult(study=data["study"], title=data.get("title", data["study"]), mode=data["mode"],
                       seed=data["seed"], version=data["version"], machine=data["machine"], tables=tables,
                       figures=data["figures"], profiles=data["profiles"], notes=data["notes"],
                       headline=data.get("headline", []), paper=data.get("paper", ""),
                       elapsed_s=data.get("elapsed_s", 0.0), extra=data.get("extra", {}),
                       fits=data.get("fits", {}), claims=claims, key_figure=data.get("key_figure", ""),
                       verdicts=verdicts, date=str(data.get("date") or ""))


def write_result(result: StudyResult, out: str | os.PathLike[str],
                 figures: Sequence[tuple[str, Callable[[Path], None]]] = ()) -> Path:
    """Write CSVs, the figures (each drawn by a callable into the given path) and result.json.

    Nothing is left half-written: on any error the staging folder is removed and ``out`` is
    as it was, apart from the folder itself if it did not exist. A result that labels a fitted
    value as a prediction, leaves a mixed table unexplained or makes a claim without its band
    is a bug in its study: it is refused before anything is written (``ValueError`` listing
    every problem)."""
    problems = check_provenance(result) + check_verdicts(result)
    if problems:
        raise ValueError(f"study {result.study}: provenance labels or claim bands are not honest:\n  " + "\n  ".join(problems))
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    if not result.date:
        result.date = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    stage = Path(tempfile.mkdtemp(prefix=".partial-", dir=out_dir))
    try:
        names: list[str] = []
        for table in result.tables.values():
            _write_csv(stage / f"{table.id}.csv", *table.csv_columns_rows())
            names.append(f"{table.id}.csv")
            if table.paper is not None:
                _write_csv(stage / f"{table.id}_paper.csv", *table.paper_csv_columns_rows())
                names.append(f"{table.id}_paper.csv")
        result.figures = []
        for fname, draw in figures:
            draw(stage / fname)
            result.figures.append(fname)
            names.append(fname)
        (stage / "result.json").write_text(json.dumps(result.to_contract(), indent=2), encoding="utf-8")
        stale = out_dir / "result.json"
        if stale.exists():
            stale.unlink()  # the old result must not describe the new files while they move in
        for name in names:
            os.replace(stage / name, out_dir / name)
        os.replace(stage / "result.json", out_dir / "result.json")
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return out_dir / "result.json"


def _write_csv(path: Path, columns: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(columns)
        for r in rows:
            w.writerow(["" if v is None else v for v in json_safe(list(r))])
