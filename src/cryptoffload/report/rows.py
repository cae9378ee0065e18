"""Table rows as typed records: a study builds each row as a dataclass and reads it back by
field name; the report receives plain columns and rows made from them.

Why: a positional row read back by index (``row[3]``), or a number parsed back out of a label,
breaks silently when a column is added or reworded; a record's field cannot be confused with its
neighbour's, and a type checker sees every read. The JSON contract (``columns`` and ``rows``)
is unchanged: :func:`table_of` flattens records in field order.

    @dataclass(frozen=True)
    class LatencyRow:
        bandwidth: str = column("bandwidth")
        latency_s: float = column("latency_s")
        gbps: float = hidden()            # carried for the study, not shown

    table_of(LatencyRow, rows, id="t2", title="...", provenance="simulated")
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Required, Sequence, TypedDict, TypeVar, Unpack

from cryptoffload.report.result import Table

if TYPE_CHECKING:  # typeshed's "any dataclass instance" (no runtime module)
    from _typeshed import DataclassInstance

_KEY = "table_column"
R = TypeVar("R", bound="DataclassInstance")
"""A row type: any dataclass (a type checker refuses rows that are not)."""


def column(label: str | None = None, **kw: Any) -> Any:
    """A field shown as a table column, named ``label`` (default: the field's name)."""
    return dataclasses.field(metadata={_KEY: label or ""}, **kw)


def hidden(**kw: Any) -> Any:
    """A field the study carries with the row (a raw number behind a label) but does not show."""
    return dataclasses.field(metadata={_KEY: None}, **kw)


def _shown(row_type: type[DataclassInstance]) -> list[dataclasses.Field[object]]:
    if not dataclasses.is_dataclass(row_type):
        raise TypeError(f"{row_type!r} is not a dataclass row type")
    return [f for f in dataclasses.fields(row_type) if f.metadata.get(_KEY, "") is not None]


def columns_of(row_type: type[DataclassInstance]) -> list[str]:
    """The table's column names, in field order (hidden fields left out)."""
    return [f.metadata.get(_KEY) or f.name for f in _shown(row_type)]


def cells_of(record: DataclassInstance) -> list[object]:
    """One record's shown values, in column order."""
    return [getattr(record, f.name) for f in _shown(type(record))]


def rows_of(row_type: type[R], records: Sequence[R]) -> list[list[object]]:
    """Records of ``row_type`` as the table's positional rows (refuses a record of another type,
    which would put its values under the wrong columns)."""
    for r in records:
        if type(r) is not row_type:
            raise TypeError(f"a {type(r).__name__} row in a table of {row_type.__name__} rows")
    return [cells_of(r) for r in records]


class TableOptions(TypedDict, total=False):
    """What :func:`table_of` passes on to :class:`Table` besides the columns and rows."""

    id: Required[str]
    title: Required[str]
    provenance: Required[str]
    key_columns: int
    note: str
    reproduces: str
    inputs: list[str] | None
    row_inputs: Sequence[list[str] | None] | None
    column_provenance: dict[str, str] | None
    fitted_to: str
    unjudged: str
    paper_derived: dict[str, str] | None


def table_of(row_type: type[R], records: Sequence[R], *, paper: Sequence[R] | None = None,
             **table: Unpack[TableOptions]) -> Table:
    """A :class:`Table` whose columns are ``row_type``'s shown fields and whose rows (and the
    paper's rows, records of the same type) are ``records``. Every other keyword goes to
    :class:`Table` (``id``, ``title``, ``provenance``, ``note``, ...)."""
    return Table(columns=columns_of(row_type), rows=rows_of(row_type, records),
                 paper=None if paper is None else rows_of(row_type, paper), **table)


def by_key(records: Sequence[R], **match: object) -> R:
    """The one record whose fields equal ``match`` (a study finding its own row by what it is,
    not by where it sits); a missing or repeated match is a bug in the study."""
    found = [r for r in records if all(getattr(r, k) == v for k, v in match.items())]
    if len(found) != 1:
        raise LookupError(f"{len(found)} rows match {match!r}")
    return found[0]
