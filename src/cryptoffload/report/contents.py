"""The report's table of contents: every study section, and under it every table and figure,
each a link to its id.

Why every table and figure: the report runs to dozens of tables and figures; a contents by study
only left a reader scrolling through a study to find its Table 3. Each entry is the table's or
figure's own title, the study's scoreboard stands beside its name, and the ids are the ones the
tables and figures carry (:func:`~.grid.table_id`, :func:`~.figures.figure_id`), so a link
copied from the contents, from a heading's ``#`` or from a card is the same link.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Sequence

from cryptoffload.report.grid import badge, table_id
from cryptoffload.report.figures import FigureInfo, figure_id
from cryptoffload.report.result import StudyResult

CONTENTS_ID = "contents"


def _e(v: object) -> str:
    return html.escape(str(v))


@dataclass(frozen=True)
class Section:
    """One study run as the page shows it: its result, its id, its heading, the folder its
    figures are in (relative to the page) and what is known of each figure."""

    result: StudyResult
    anchor: str
    title: str
    prefix: str
    figures: list[FigureInfo] = field(default_factory=list)
    #: the number of its first figure (figures are numbered through the whole page)
    first_figure: int = 1


def _table_items(section: Section) -> str:
    return "".join(f"<li><a href='#{_e(table_id(section.anchor, key))}'>{_e(t.title)}</a>"
                   f"{badge(t.provenance)}</li>" for key, t in section.result.tables.items())


def _figure_items(section: Section) -> str:
    return "".join(f"<li><a href='#{_e(figure_id(section.anchor, f.file))}'>Figure {section.first_figure + i}. "
                   f"{_e(f.title)}</a></li>" for i, f in enumerate(section.figures))


def contents_html(sections: Sequence[Section]) -> str:
    """The contents: per study section its link and scoreboard, then its tables (with their
    provenance badges) and its figures."""
    blocks = []
    for s in sections:
        board = s.result.scoreboard
        score = f" <span class='meta'>{_e(board.text())}</span>" if board.rows else ""
        n_t, n_f = len(s.result.tables), len(s.figures)
        counts = f"{n_t} table{'s' if n_t != 1 else ''}, {n_f} figure{'s' if n_f != 1 else ''}"
        tables = f"<ol class='tables'>{_table_items(s)}</ol>" if n_t else ""
        figures = f"<ol class='figures'>{_figure_items(s)}</ol>" if n_f else ""
        blocks.append(f"<li class='study'><a href='#{_e(s.anchor)}'><b>{_e(s.title)}</b></a> "
                      f"<span class='meta'>{counts}</span>{score}{tables}{figures}</li>")
    return (f"<nav class='toc' id='{CONTENTS_ID}' aria-label='contents'><h2>Contents: every table and figure"
            f" <a class='self' href='#{CONTENTS_ID}' title='link to the contents'>#</a></h2>"
            f"<ol class='studies'>{''.join(blocks)}</ol></nav>")


__all__ = ["CONTENTS_ID", "Section", "contents_html"]
