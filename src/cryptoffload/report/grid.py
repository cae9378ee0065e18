"""One study table as HTML: ours beside the paper's, each cell aligned by what it holds.

Why align by kind: a column of numbers is read by comparing digits, so numbers sit right-aligned
in tabular (equal-width) figures; a column of words is read as text, so it sits left-aligned and
wraps. The report used to right-align everything, so a column of explanations read as ragged
right-aligned prose and pushed its table past the window. Long column names break after their
underscores (``p90_rel_<wbr>oracle``), a column the paper never fills gets no column of dashes
beside it, and a table still wider than the page scrolls sideways inside its own box, so the
page itself never does.

Every table has a page-wide id and a link to itself (``#``), so a reader can send a link to one
table; the table of contents (:mod:`.contents`) and the cards' claims link to the same ids.
"""

from __future__ import annotations

import html
from typing import Any

from cryptoffload.report.provenance import PROVENANCE_COLUMN, PROVENANCES, VALUE_PROVENANCES, provenance_word
from cryptoffload.report.result import Table
from cryptoffload.report.tables import fmt, provenance_label

BADGE_CLASSES = frozenset(PROVENANCES + VALUE_PROVENANCES)
#: a table with more rows than this folds under its summary line (``<details>``), unless a
#: claim quotes it (a claim's link must land on an open table)
FOLD_ROWS = 8


def _e(v: object) -> str:
    return html.escape(str(v))


def badge(provenance: str, text: str | None = None) -> str:
    """A coloured provenance badge; the class is one of the known provenances or none."""
    cls = provenance if provenance in BADGE_CLASSES else "derived"
    return f"<span class='badge {cls}'>{_e(text if text is not None else provenance)}</span>"


def self_link(html_id: str, what: str) -> str:
    """The ``#`` beside a heading that links to it (copy it to send someone this very place)."""
    return f" <a class='self' href='#{_e(html_id)}' title='link to this {_e(what)}'>#</a>"


def table_id(anchor: str, table_key: str) -> str:
    """The page-wide id of a study section's table (table ids repeat across studies)."""
    return f"{anchor}--{table_key}"


def breakable(name: str) -> str:
    """A column name escaped, with a line-break opportunity after each ``_`` (``<wbr>``)."""
    return "_<wbr>".join(_e(part) for part in str(name).split("_"))


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def numeric_columns(table: Table) -> set[int]:
    """The columns whose every value (ours and the paper's; empty cells aside) is a number."""
    rows = table.rows + (table.paper or [])
    return {j for j in range(len(table.columns))
            if table.columns[j] != PROVENANCE_COLUMN
            and all(_is_number(r[j]) for r in rows if r[j] is not None)
            and any(r[j] is not None for r in rows)}


def table_html(table: Table, html_id: str = "", quoted: bool = False) -> str:
    """The table's heading, then the table in a box that scrolls sideways; a table longer than
    :data:`FOLD_ROWS` folds under its heading (the reader opens it), a short one or one a
    claim quotes (``quoted``) stays open."""
    heading = f"{_e(table.title)}{badge(table.provenance, provenance_label(table))}"
    link = self_link(html_id, "table") if html_id else ""
    body = (f"<div class='scroll' role='region' tabindex='0' aria-label='{_e(table.title)}'>"
            f"{_grid_html(table)}</div>")
    if table.note:
        body += f"<p class='caption'>{_e(table.note)}</p>"
    ident = f" id='{_e(html_id)}'" if html_id else ""
    if len(table.rows) > FOLD_ROWS:
        return (f"<details class='fold'{ident}{' open' if quoted else ''}><summary>{heading} <span class='rows'>"
                f"{len(table.rows)} rows</span>{link}</summary>{body}</details>")
    return f"<div class='table'{ident}><h3>{heading}{link}</h3>{body}</div>"


def _cell(value: Any, numeric: bool, extra: str = "") -> str:
    cls = " ".join(c for c in (extra, "num" if numeric else "text") if c)
    return f"<td class='{cls}'>{_e(fmt(value)) if numeric else breakable(fmt(value))}</td>"


def paired_columns(table: Table) -> set[int]:
    """The value columns shown as ours beside the paper's: those where the paper has a value in
    some row (a column the paper never fills, such as our ``provenance``, gets no empty twin)."""
    k = table.key_columns
    return {j for j in range(k, len(table.columns))
            if table.columns[j] != PROVENANCE_COLUMN and any(p[j] is not None for p in table.paper or [])}


def _head_html(table: Table, nums: set[int], paired: set[int]) -> str:
    """One header row, or two where some column is ours beside the paper's."""
    two = bool(paired)
    out = ["<thead><tr>"]
    for i, c in enumerate(table.columns):
        align = "num" if i in nums else "text"
        key = "key " if i < table.key_columns else ""
        span = f" colspan='2'" if i in paired else (f" rowspan='2'" if two else "")
        out.append(f"<th class='{key}{align}'{span}>{breakable(c)}</th>")
    out.append("</tr>")
    if two:
        out.append("<tr>" + "".join(f"<th class='{'num' if j in nums else 'text'}'>ours</th>"
                                    f"<th class='{'num' if j in nums else 'text'} paper'>paper</th>"
                                    for j in sorted(paired)) + "</tr>")
    return "".join(out) + "</thead>"


def _grid_html(table: Table) -> str:
    """The ``<table>`` itself: key columns, then ours beside the paper's for each value column
    the paper has values in."""
    k = table.key_columns
    nums, paired = numeric_columns(table), paired_columns(table)
    out = ["<table>", _head_html(table, nums, paired), "<tbody>"]
    for r in table.rows:
        p = table.paper_row(r[:k]) if paired else None
        cells = [_cell(v, j in nums, "key") for j, v in enumerate(r[:k])]
        for j in range(k, len(r)):
            if table.columns[j] == PROVENANCE_COLUMN and provenance_word(r[j]) in BADGE_CLASSES:
                cells.append(f"<td class='prov'>{badge(provenance_word(r[j]), fmt(r[j]))}</td>")
            else:
                cells.append(_cell(r[j], j in nums))
            if j in paired:
                cells.append(_cell(p[j] if p is not None else None, j in nums, "paper"))
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


__all__ = ["BADGE_CLASSES", "FOLD_ROWS", "badge", "breakable", "numeric_columns", "paired_columns", "self_link", "table_html", "table_id"]
