"""report/grid.py: cells aligned by what they hold, the paper beside ours only where it has a
value, names that can break, and every table's id and link to itself."""

from __future__ import annotations

from cryptoffload.report.grid import breakable, numeric_columns, paired_columns, table_html
from cryptoffload.report.result import Table


def test_a_column_is_numeric_only_when_every_value_is_a_number() -> None:
    t = Table("t", "T", ["rate", "policy", "p90_s", "why", "flag"],
              [[10, "predict", 1.5, "a reason", True], [100, "oracle", None, "another", False]], "simulated",
              paper=[[10, "predict", 1.2, None, None]], key_columns=2)
    assert numeric_columns(t) == {0, 2}  # booleans, words and an empty paper cell aside
    assert paired_columns(t) == {2}      # key columns and columns the paper never fills: alone


def test_cells_are_aligned_by_kind_and_the_table_links_to_itself() -> None:
    t = Table("t", "T", ["policy", "p90_rel_oracle"], [["fix-all", 0.78]], "simulated", paper=[["fix-all", 0.8]])
    html = table_html(t, "s--t")
    assert "<td class='key text'>fix-all</td><td class='num'>0.78</td><td class='paper num'>0.8</td>" in html
    assert "<th class='num' colspan='2'>p90_<wbr>rel_<wbr>oracle</th>" in html
    assert "<div class='table' id='s--t'>" in html and "<a class='self' href='#s--t'" in html
    assert "<div class='scroll' role='region' tabindex='0'" in html


def test_names_break_after_underscores_and_stay_escaped() -> None:
    assert breakable("a_b<c") == "a_<wbr>b&lt;c"
