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
from pathlib import Path
from typing import Any, Callable, Sequence

from cryptoffload.io import json_safe

PROVENANCES = ("simulated", "measured", "cited", "mixed")


@dataclass
class Table:
    """One table of a study. The first ``key_columns`` columns identify a row; ``paper`` holds
    the paper's rows in the same columns (``None`` where the paper has no value)."""

    id: str
    title: str
    columns: list[str]
    rows: list[list[Any]]
    provenance: str
    paper: list[list[Any]] | None = None
    key_columns: int = 1
    note: str = ""

    def __post_init__(self) -> None:
        if self.provenance not in PROVENANCES:
            raise ValueError(f"provenance must be one of {PROVENANCES}")
        for r in self.rows + (self.paper or []):
            if len(r) != len(self.columns):
                raise ValueError(f"table {self.id}: row {r!r} does not match columns {self.columns}")

    def paper_row(self, key: Sequence[Any]) -> list[Any] | None:
        for r in self.paper or []:
            if list(r[: self.key_columns]) == list(key):
                return r
        return None

    def to_contract(self) -> dict[str, Any]:
        return {"title": self.title, "columns": self.columns, "rows": json_safe(self.rows),
                "paper": json_safe(self.paper) if self.paper is not None else None,
                "provenance": self.provenance, "key_columns": self.key_columns, "note": self.note}


@dataclass
class StudyResult:
    study: str
    title: str
    mode: str
    seed: int
    version: str
    machine: dict[str, Any]
    tables: dict[str, Table] = field(default_factory=dict)
    figures: list[str] = field(default_factory=list)
    profiles: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    headline: list[str] = field(default_factory=list)
    paper: str = ""
    elapsed_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def add(self, table: Table) -> Table:
        self.tables[table.id] = table
        return table

    def to_contract(self) -> dict[str, Any]:
        return {
            "study": self.study, "title": self.title, "mode": self.mode, "seed": self.seed,
            "version": self.version, "machine": self.machine,
            "tables": {k: t.to_contract() for k, t in self.tables.items()},
            "figures": self.figures, "profiles": self.profiles, "notes": self.notes,
            "headline": self.headline, "paper": self.paper, "elapsed_s": self.elapsed_s,
            "extra": json_safe(self.extra),
        }


def load_result(path: str | os.PathLike[str]) -> StudyResult:
    """Read a ``result.json`` back (for the report and for tests)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    tables = {tid: Table(id=tid, title=t["title"], columns=t["columns"], rows=t["rows"],
                         provenance=t["provenance"], paper=t.get("paper"),
                         key_columns=t.get("key_columns", 1), note=t.get("note", ""))
              for tid, t in data["tables"].items()}
    return StudyResult(study=data["study"], title=data.get("title", data["study"]), mode=data["mode"],
                       seed=data["seed"], version=data["version"], machine=data["machine"], tables=tables,
                       figures=data["figures"], profiles=data["profiles"], notes=data["notes"],
                       headline=data.get("headline", []), paper=data.get("paper", ""),
                       elapsed_s=data.get("elapsed_s", 0.0), extra=data.get("extra", {}))


def write_result(result: StudyResult, out: str | os.PathLike[str],
                 figures: Sequence[tuple[str, Callable[[Path], None]]] = ()) -> Path:
    """Write CSVs, the figures (each drawn by a callable into the given path) and result.json.

    Nothing is left half-written: on any error the staging folder is removed and ``out`` is
    as it was, apart from the folder itself if it did not exist."""
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".partial-", dir=out_dir))
    try:
        names: list[str] = []
        for table in result.tables.values():
            _write_csv(stage / f"{table.id}.csv", table.columns, table.rows)
            names.append(f"{table.id}.csv")
            if table.paper is not None:
                _write_csv(stage / f"{table.id}_paper.csv", table.columns, table.paper)
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


def _write_csv(path: Path, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(columns)
        for r in rows:
            w.writerow(["" if v is None else v for v in json_safe(list(r))])
