"""docs/security.md, the map of trust boundaries, names for each boundary the test that crosses
it as an attacker would: every such test must exist, or the map promises what nothing checks."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAP = ROOT / "docs" / "security.md"
REF = re.compile(r"`(tests/[A-Za-z0-9_/]+\.py)(?:::([A-Za-z0-9_]+))?`")


def _defined(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def test_every_test_the_map_names_exists() -> None:
    refs = REF.findall(MAP.read_text(encoding="utf-8"))
    assert len(refs) > 60, "the map names a test for each boundary"
    missing = []
    for file, name in refs:
        path = ROOT / file
        if not path.is_file():
            missing.append(file)
        elif name and name not in _defined(path):
            missing.append(f"{file}::{name}")
    assert not missing, f"docs/security.md names tests that do not exist: {missing}"


def test_every_boundary_row_says_prevented_detected_or_out_of_scope() -> None:
    rows = [line for line in MAP.read_text(encoding="utf-8").splitlines()
            if line.startswith("| ") and not line.startswith("| boundary") and not line.startswith("|---")]
    assert rows
    for row in rows:
        assert re.search(r"\*\*(prevented|detected|out of scope|survived)\*\*|outside the ownership rule", row), row
