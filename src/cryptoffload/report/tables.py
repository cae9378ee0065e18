"""Terminal rendering of study tables: ours beside the paper's, with provenance in the title."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable
from rich.text import Text

from cryptoffload.report.result import StudyResult, Table


def fmt(v: object) -> str:
    """Numbers with 3 significant digits (the precision of the papers' tables)."""
    if v is None:
        return "—"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if v != v:
            return "—"
        a = abs(v)
        if a == 0:
            return "0"
        if v.is_integer() and 1 <= a < 1e5:  # rates, counts: 100 not 100.0
            return f"{int(v):,}"
        if a >= 1e5 or a < 1e-3:
            return f"{v:.3g}"
        if a >= 100:
            return f"{v:,.0f}" if a >= 1000 else f"{v:.1f}"
        return f"{v:.3g}"
    return str(v)


def merged_rows(table: Table) -> tuple[list[str], list[list[str]]]:
    """Header and rows with each value column as 'ours (paper)' when the paper has one."""
    k = table.key_columns
    header = list(table.columns)
    rows = []
    for r in table.rows:
        p = table.paper_row(r[:k]) if table.paper else None
        cells = [fmt(v) for v in r[:k]]
        for j in range(k, len(r)):
            ours = fmt(r[j])
            if p is not None and p[j] is not None:
                ours = f"{ours} ({fmt(p[j])})"
            cells.append(ours)
        rows.append(cells)
    return header, rows


def provenance_label(table: Table) -> str:
    """The table's provenance as shown in titles: a fitted table names what it was fitted to,
    a column-mixed table lists its columns' provenances."""
    if table.provenance == "fitted" and (table.fitted_to or table.reproduces):
        return f"fitted to {table.fitted_to or table.reproduces}"
    if table.column_provenance and table.has_provenance_column:
        return "mixed: by row, " + ", ".join(f"{c} {p}" for c, p in table.column_provenance.items())
    if table.column_provenance:
        kinds = dict.fromkeys(table.column_provenance.values())
        return "mixed: " + ", ".join(kinds)
    return table.provenance


def table_heading(table: Table) -> str:
    """The line above a table: its title, provenance and, when the paper has values, how to read
    the cells."""
    title = f"{table.title}  [{provenance_label(table)}]"
    return title + "  ours (paper)" if table.paper else title


def print_whole(console: Console, rt: RichTable) -> None:
    """A rich table, on a pipe or in a log at its natural width: squeezed to the console's
    width, rich folds or cuts the cells ("-1.2345" -> "-…"), and whoever reads the output reads
    another number. A terminal keeps rich's fitting (a person reads it, and a line wider than the
    screen is folded by the terminal anyway)."""
    if not console.is_terminal:
        natural = console.measure(rt, options=console.options.update_width(1 << 16)).maximum
        if natural > console.width:
            rt.width = natural
    console.print(rt, crop=False)


def render_table(table: Table, console: Console) -> None:
    # The heading is a line of its own, not the rich table's title: a title longer than the
    # table would wrap into the table's width (a thin column of words). Text is not markup:
    # rich would read "[simulated]" (or any bracket in a title, cell or note) and drop it.
    console.print(Text(table_heading(table), style="bold"))
    rt = RichTable()
    header, rows = merged_rows(table)
    for i, h in enumerate(header):
        rt.add_column(escape(h), justify="left" if i < table.key_columns else "right")
    for r in rows:
        rt.add_row(*(escape(c) for c in r))
    print_whole(console, rt)
    if table.note:
        console.print(f"[dim]{escape(table.note)}[/dim]")


def _say(console: Console, text: Text, one_line: bool) -> None:
    if one_line:  # cropped on purpose (the full text is in result.json), also on a soft-wrapping console
        console.print(text, no_wrap=True, overflow="ellipsis", crop=True, soft_wrap=False)
    else:
        console.print(text)


def render_findings(result: StudyResult, console: Console, *, one_line: bool = False) -> None:
    """The headline findings and notes: what a terminal shows without ``--tables``.

    ``one_line`` crops each to one line of the terminal (``report`` shows every study, and the
    full text is in its result.json and the HTML report)."""
    for line in result.headline:
        _say(console, Text(f"• {line}"), one_line)
    for note in result.notes:
        _say(console, Text.assemble(("note:", "yellow"), f" {note}"), one_line)


def render_result(result: StudyResult, console: Console | None = None, *, tables: bool = True,
                  one_line: bool = False) -> None:
    """The study's title rule, its tables (unless ``tables`` is false), then its findings."""
    console = console or Console()
    console.rule(escape(f"{result.title} ({result.mode} mode, seed {result.seed})"))
    if tables:
        for table in result.tables.values():
            render_table(table, console)
    render_findings(result, console, one_line=one_line)
