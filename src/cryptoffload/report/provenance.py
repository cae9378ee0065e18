"""Holding every study to its provenance labels: a fit is never shown as a prediction.

Why a check and not a convention: a table that agrees closely with a paper because its model
inputs were fitted to that same table reads like a successful prediction unless it says
``fitted``. Studies declare what they fitted (``StudyResult.fits``: input -> the paper's table
it was fitted to, usually read from the profiles' sources with :func:`fits_from_sources`) and
what each table reproduces and depends on (``Table.reproduces``, ``Table.inputs``); the
labels must then follow. :func:`check_provenance` lists every violation;
``write_result`` refuses to write a result that has one, and a test walks every registered
study's ``result.json`` with it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

if TYPE_CHECKING:  # annotations only: result.py imports this module to enforce it
    from cryptoffload.report.result import StudyResult, Table

#: Where a number comes from. ``simulated``: predicted by our models from inputs that were not
#: fitted to the paper's table it stands beside; ``measured``: run here, in this run;
#: ``fitted``: fitted to the very table it stands beside (a fit, never a prediction);
#: ``cited``: copied from a paper; ``stored``: measured by our own code in an earlier run, on the
#: machine and date the table names (a stored benchmark shipped as package data: neither this
#: run's measurement nor a paper's figure); ``mixed``: a table whose rows (a ``provenance``
#: column) or columns (``column_provenance``) differ.
PROVENANCES = ("simulated", "measured", "fitted", "cited", "stored", "mixed")
#: The provenance of one value (a cell of a ``provenance`` column, a claim): the table
#: provenances less ``mixed``, plus ``derived`` (arithmetic on other values), ``assumed`` (a
#: profile value no source gives: see its range) and ``input``.
VALUE_PROVENANCES = ("simulated", "measured", "fitted", "cited", "stored", "derived", "assumed", "input")
PROVENANCE_COLUMN = "provenance"


def printed(where: str = "") -> str:
    """The provenance of a number the paper prints (``where``: its table or sentence):
    ``cited``, with where, as a paper row's cell or a verdict's ``paper_source`` says it."""
    return f"cited: {where}" if where else "cited"


def from_printed(arithmetic: str) -> str:
    """A value the paper never prints, computed from numbers it does: ``derived``, with the
    arithmetic (issue 35: never ``cited``)."""
    return f"derived: {arithmetic}"


def computed_from(fitted: bool, otherwise: str) -> str:
    """What a value computed from inputs is: ``fitted`` when one of them was fitted to the
    paper's table it stands beside (the project's rule, read from the declared fits or the
    profiles), else what the computation itself is (``otherwise``: ``simulated``, ``derived``)."""
    return "fitted" if fitted else otherwise


def stored_from(record: Mapping[str, object], what: str) -> str:
    """The provenance of a number read from a stored run of ours: ``stored``, with ``what`` --
    only for a record that names its machine and date (a stored figure without them could be
    anyone's, from any time)."""
    if not record.get("machine") or not record.get("date"):
        raise ValueError(f"a stored record names its machine and date, got keys {sorted(record)}")
    return f"stored ({what})"


def of_fit(fit: str | None) -> str:
    """The kind of a model input whose fit is ``fit`` (a fit target, ``""`` for none named, or
    ``None``: not fitted): ``fitted`` or ``assumed`` (an input no source gives, chosen by us)."""
    return "fitted" if fit is not None else "assumed"


def provenance_word(text: object) -> str:
    """The provenance a cell states: its first word (``"simulated (Table 2 runs)"`` ->
    ``simulated``), lower-cased; ``""`` for an empty cell."""
    words = str(text or "").strip().split()
    return words[0].lower().rstrip(",;:") if words else ""


_FITTED = re.compile(r"^\s*fitted\b(?:\s*\([^)]*\))?(?:\s+to\s+(?P<target>[^:;]*))?", re.IGNORECASE)
_TABLE = re.compile(r"\b(table\s+\d+[a-z]?)(?:'s)?(\s+\w+\s+(?:row|column))?", re.IGNORECASE)


def fitted_target(source: str) -> str | None:
    """What a profile value's ``source`` says it was fitted to: ``"Table 2"`` for ``"fitted
    to Table 2: ..."``, ``""`` for a fit that names no table (``"fitted: ..."``, ``"fitted to
    the paper's ratios"``), ``None`` when the value is not fitted."""
    m = _FITTED.match(source or "")
    if m is None:
        return None
    target = m.group("target") or ""
    t = _TABLE.search(target)
    return _norm(t.group(1) + (t.group(2) or "")) if t else ""


def fits_from_sources(profile: str, sources: Mapping[str, str]) -> dict[str, str]:
    """``{"profile:field": target}`` for every fitted value of one profile, given its
    ``{field: source}`` (e.g. ``{k: v.source for k, v in load_profile(p).values.items()}``)."""
    out = {}
    for field_name, src in sources.items():
        target = fitted_target(src)
        if target is not None:
            out[f"{profile}:{field_name}"] = target
    return out


def _norm(text: str) -> str:
    return " ".join(str(text).split()).lower()


def _related(a: str, b: str) -> bool:
    """Input names match when equal or when one is the other's profile (``p`` and ``p:f``)."""
    return a == b or a.startswith(b + ":") or b.startswith(a + ":")


def _same_target(fit_target: str, reproduces: str) -> bool:
    """A fit to no named table, or a table that does not say what it reproduces, matches
    everything: unknown is treated as the same table, so the check errs towards ``fitted``.
    A whole table and one of its rows or columns match (``table 1`` and ``table 1 naive row``);
    two different rows of one table do not (a fit to the naive row, shown beside the tuned row,
    is a prediction of the tuned row)."""
    if not fit_target or not reproduces:
        return True
    a, b = _norm(fit_target), _norm(reproduces)
    return a == b or a.startswith(b + " ") or b.startswith(a + " ")


def fitted_inputs(table: Table, row: int, fits: Mapping[str, str]) -> list[str]:
    """The inputs of row ``row`` that were fitted to the table this row stands beside."""
    inputs = table.inputs_of(row)
    names: Iterable[str] = fits if inputs is None else inputs
    hits = []
    for name in names:
        for fit, target in fits.items():
            if _related(name, fit) and _same_target(target, table.reproduces):
                hits.append(fit)
    return sorted(set(hits))


def check_table(table: Table, fits: Mapping[str, str]) -> list[str]:
    problems = []
    if table.provenance == "mixed" and not table.has_provenance_column and not table.column_provenance:
        problems.append(f"table {table.id}: provenance 'mixed' but no '{PROVENANCE_COLUMN}' column and no "
                        "column_provenance: say which rows or columns are which")
    if table.provenance == "fitted" and not (table.reproduces or fits):
        problems.append(f"table {table.id}: labelled fitted but the study declares no fit and the table does "
                        "not say which of the paper's tables it reproduces")
    if not table.paper:
        return problems
    k = table.key_columns
    for i, row in enumerate(table.rows):
        p = table.paper_row(row[:k])
        if p is None:
            continue
        hits = fitted_inputs(table, i, fits)
        if not hits:
            continue
        shown = [c for j, c in enumerate(table.columns[k:], start=k)
                 if c != PROVENANCE_COLUMN and p[j] is not None and row[j] is not None]
        wrong = [c for c in shown if table.cell_provenance(i, c) in ("simulated", "measured", "cited", "derived")]
        if wrong:
            where = f"'{table.reproduces}'" if table.reproduces else "the paper's table"
            problems.append(f"table {table.id}, row {row[:k]!r}: {', '.join(wrong)} computed from "
                            f"{', '.join(hits)} (fitted to {where}) beside that very table, but labelled "
                            f"{table.cell_provenance(i, wrong[0])}: label it fitted")
    return problems


def _row_index(table: Table, key: Sequence[object]) -> int | None:
    k = table.key_columns
    for i, r in enumerate(table.rows):
        if list(r[: len(key) or k]) == list(key):
            return i
    return None


def check_bands(result: StudyResult) -> list[str]:
    """Issue 26's rule for every headline claim: it carries the band its inputs and noise allow
    and names the input that moves it most (a band of zero width moves with nothing, so it names
    none). An agreement without a band could not be checked against the paper's value; a claim
    that could get no band (too few repeats) is inconclusive and says why (issue 35)."""
    problems = []
    for c in result.claims:
        if c.band is None and c.kind not in ("inconclusive", "not judged in quick mode", "fitted"):
            problems.append(f"claim {c.ours!r}: no band (every headline claim carries the band its inputs and "
                            "noise allow: studies/_bands.py, profiles/sensitivity.py)")
        elif c.band is not None and c.band[0] < c.band[1] and not c.most_sensitive:
            problems.append(f"claim {c.ours!r}: its band does not name its most sensitive input")
    return problems


def check_claims(result: StudyResult) -> list[str]:
    problems = []
    for c in result.claims:
        if not c.table:
            continue
        t = result.tables.get(c.table)
        if t is None:
            problems.append(f"claim {c.ours!r}: no table {c.table!r}")
            continue
        i = _row_index(t, c.key)
        if i is None:
            problems.append(f"claim {c.ours!r}: table {c.table} has no row {c.key!r}")
            continue
        row = t.row_provenance(i)
        cells = {row} | {t.cell_provenance(i, col) for col in t.columns}
        if row == "fitted" and c.provenance != "fitted":
            problems.append(f"claim {c.ours!r} quotes a fitted row of {c.table} but says {c.provenance}")
        elif t.has_provenance_column and c.provenance not in cells:
            problems.append(f"claim {c.ours!r} quotes a row of {c.table} labelled {row} but says {c.provenance}")
    return problems


def check_provenance(result: StudyResult) -> list[str]:
    """Every place where ``result`` labels a fitted value as something else, leaves a mixed
    table unexplained, or makes a claim without its band; empty when the labels are honest."""
    problems = []
    for target in result.fits.values():
        if not isinstance(target, str):
            problems.append(f"fit target {target!r} is not a string")
    for t in result.tables.values():
        if t.provenance not in PROVENANCES:
            problems.append(f"table {t.id}: unknown provenance {t.provenance!r}")
        problems.extend(check_table(t, result.fits))
    for c in result.claims:
        if c.provenance not in VALUE_PROVENANCES:
            problems.append(f"claim {c.ours!r}: unknown provenance {c.provenance!r}")
    problems.extend(check_claims(result))
    problems.extend(check_bands(result))
    return problems


__all__ = ["PROVENANCES", "PROVENANCE_COLUMN", "VALUE_PROVENANCES", "check_bands", "check_claims", "check_provenance",
           "check_table", "computed_from", "fits_from_sources", "fitted_inputs", "fitted_target", "from_printed",
           "of_fit", "printed", "provenance_word", "stored_from"]
