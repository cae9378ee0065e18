"""Terminal tables: number formatting and 'ours (paper)' cells."""

from __future__ import annotations

import math

import numpy as np
import pytest
from rich.console import Console

from cryptoffload.report.result import StudyResult, Table
from cryptoffload.report.tables import fmt, merged_rows, render_result, render_table


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "—"),
        (True, "True"),
        (0, "0"),
        (1234, "1,234"),
        (-1234567, "-1,234,567"),
        (0.0, "0"),
        (math.nan, "—"),
        (0.5, "0.5"),
        (1.0, "1"),
        (12.345, "12.3"),
        (99.44, "99.4"),
        (123.44, "123.4"),
        (999.94, "999.9"),
        (1234.6, "1,235"),
        (-1500.0, "-1,500"),
        (99_999.0, "99,999"),
        (2.5e6, "2.5e+06"),
        (0.001, "0.001"),
        (0.0001234, "0.000123"),
        (5e-9, "5e-09"),
        (math.inf, "inf"),
        (np.float64(1.5), "1.5"),
        ("AES-ECB", "AES-ECB"),
    ],
)
def test_fmt(value, text: str) -> None:
    assert fmt(value) == text


def _table() -> Table:
    return Table("t6", "Table 6", ["rate", "predict", "nopredict"],
                 rows=[[10, 1.02, 2.5], [100, 1.5, None], [300, 1.1, 1.2]], provenance="simulated",
                 paper=[[10, 1.0, None], [100, 1.29, 3.0]])


def test_merged_rows_shows_ours_then_paper_in_parentheses() -> None:
    header, rows = merged_rows(_table())
    assert header == ["rate", "predict", "nopredict"]
    assert rows == [
        ["10", "1.02 (1)", "2.5"],           # paper has no nopredict value at 10
        ["100", "1.5 (1.29)", "— (3)"],      # we have none, the paper has one
        ["300", "1.1", "1.2"],               # the paper has no row for 300
    ]


def test_merged_rows_without_paper() -> None:
    t = Table("t", "t", ["cipher", "share"], [["AES", 0.25]], "measured")
    assert merged_rows(t) == (["cipher", "share"], [["AES", "0.25"]])


def test_merged_rows_with_two_key_columns() -> None:
    t = Table("t", "t", ["rate", "policy", "p90"], [[10, "a", 2.0], [10, "b", 3.0]], "simulated",
              paper=[[10, "b", 4.0]], key_columns=2)
    assert merged_rows(t)[1] == [["10", "a", "2"], ["10", "b", "3 (4)"]]


def test_render_result_prints_tables_provenance_headline_and_notes() -> None:
    res = StudyResult("s", "My study", "quick", 7, "0.1.0", {"cpu": "c", "cores": 1},
                      headline=["the headline"], notes=["the note"])
    res.add(_table())
    console = Console(record=True, width=200, force_terminal=False)
    render_result(res, console)
    text = " ".join(console.export_text().split())  # the title wraps to the table's width
    for needle in ("My study", "quick mode", "seed 7", "Table 6", "[simulated]", "ours (paper)",
                   "1.5 (1.29)", "the headline", "note: the note"):
        assert needle in text, needle


def test_brackets_in_titles_cells_and_notes_are_shown_verbatim() -> None:
    res = StudyResult("s", "Study [x]", "quick", 1, "0.1.0", {}, headline=["[bold]h[/bold]"],
                      notes=["see [/docs]"])
    res.add(Table("t", "T [ms]", ["name [unit]", "v"], [["[red]AES[/red]", 1.0]], "measured",
                  note="caption [/x]"))
    console = Console(record=True, width=200)
    render_result(res, console)
    text = console.export_text()
    for needle in ("Study [x]", "T [ms]", "[measured]", "name [unit]", "[red]AES[/red]", "[bold]h[/bold]",
                   "see [/docs]", "caption [/x]"):
        assert needle in text, needle


def test_render_table_prints_the_note() -> None:
    t = Table("t", "Tbl", ["a", "b"], [[1, 2.0]], "cited", note="a caption here")
    console = Console(record=True, width=120)
    render_table(t, console)
    text = console.export_text()
    assert "Tbl" in text and "[cited]" in text and "a caption here" in text
    assert "ours (paper)" not in text


def test_provenance_label_names_the_fit_and_the_column_mix() -> None:
    from cryptoffload.report.tables import provenance_label

    assert provenance_label(Table("f", "F", ["k", "v"], [["a", 1.0]], "fitted", reproduces="Table 1")) == "fitted to Table 1"
    mixed = Table("m", "M", ["k", "a", "b"], [["x", 1.0, 2.0]], "mixed",
                  column_provenance={"a": "simulated", "b": "measured"})
    assert provenance_label(mixed) == "mixed: simulated, measured"
    both = Table("m", "M", ["k", "provenance", "a", "b"], [["x", "measured", 1.0, 2.0]], "mixed",
                 column_provenance={"b": "derived"})
    assert provenance_label(both) == "mixed: by row, b derived"
    assert both.csv_columns_rows()[1] == [["x", "measured; b: derived", 1.0, 2.0]]
    assert provenance_label(_table()) == "simulated"


def test_render_result_without_tables_prints_the_findings_one_line_each() -> None:
    res = StudyResult("s", "My study", "quick", 7, "0.1.0", {}, headline=["short", "long " * 20], notes=["[n] " * 15])
    res.add(_table())
    console = Console(record=True, width=40, force_terminal=False)
    render_result(res, console, tables=False, one_line=True)
    assert console.export_text().splitlines() == [
        "──── My study (quick mode, seed 7) ─────",
        "• short",
        "• long long long long long long long lo…",
        "note: [n] [n] [n] [n] [n] [n] [n] [n] […",
    ]


def test_table_heading_is_a_line_of_its_own() -> None:
    """A title wider than the table: before, it wrapped into the table's width."""
    t = Table("t", "A title much wider than the table", ["a", "b"], [[1, 2.0]], "cited")
    console = Console(record=True, width=80)
    render_table(t, console)
    assert console.export_text().splitlines() == [
        "A title much wider than the table  [cited]",
        "┏━━━┳━━━┓", "┃ a ┃ b ┃", "┡━━━╇━━━┩", "│ 1 │ 2 │", "└───┴───┘"]


def test_a_table_on_a_pipe_keeps_every_value_whole() -> None:
    """issue 32: squeezed to a narrow console, rich cut cells to "-…" (or folded them over two
    lines); on a pipe or in a log a table is printed at its natural width instead."""
    t = Table("t", "Coefficients", ["j", "w_j", "sklearn"], [[0, -1.234567891e-05, 3.14159265358979]], "measured")
    console = Console(record=True, width=20, force_terminal=False)
    render_table(t, console)
    text = console.export_text()
    assert "-1.23e-05" in text and "3.14" in text and "…" not in text
    row = next(line for line in text.splitlines() if "-1.23e-05" in line)
    assert "3.14" in row  # one row, one line
