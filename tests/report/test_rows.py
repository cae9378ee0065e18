from __future__ import annotations

from dataclasses import dataclass

import pytest

from cryptoffload.report.rows import by_key, cells_of, column, columns_of, hidden, rows_of, table_of


@dataclass(frozen=True)
class Row:
    bandwidth: str = column("bandwidth")
    latency_s: float = column()
    gbps: float = hidden(default=0.0)


@dataclass(frozen=True)
class Other:
    x: int = column()


def test_columns_follow_fields_and_skip_hidden() -> None:
    assert columns_of(Row) == ["bandwidth", "latency_s"]
    assert cells_of(Row("4 GB/s", 1.5, 4.0)) == ["4 GB/s", 1.5]


def test_table_of_flattens_rows_and_paper_rows() -> None:
    rows = [Row("4 GB/s", 1.5, 4.0), Row("16 GB/s", 0.5, 16.0)]
    t = table_of(Row, rows, paper=[Row("16 GB/s", 0.6)], id="t", title="T", provenance="simulated")
    assert t.columns == ["bandwidth", "latency_s"]
    assert t.rows == [["4 GB/s", 1.5], ["16 GB/s", 0.5]]
    assert t.paper == [["16 GB/s", 0.6]]


def test_a_row_of_another_type_is_refused() -> None:
    with pytest.raises(TypeError, match="Other row in a table of Row rows"):
        rows_of(Row, [Row("a", 1.0), Other(1)])


def test_by_key_finds_exactly_one_row() -> None:
    rows = [Row("4 GB/s", 1.5, 4.0), Row("16 GB/s", 0.5, 16.0)]
    assert by_key(rows, gbps=16.0).latency_s == 0.5
    with pytest.raises(LookupError, match="0 rows match"):
        by_key(rows, gbps=8.0)
    with pytest.raises(LookupError, match="2 rows match"):
        by_key(rows + rows[:1], gbps=4.0)


def test_a_plain_class_is_not_a_row_type() -> None:
    with pytest.raises(TypeError, match="not a dataclass row type"):
        columns_of(int)
