"""The README's Python examples and docs/examples/ run as written and print what they say
(issue 37: "a new user can copy each README example into Python and get the documented
result").

Each numbered script in docs/examples/ is run from a fresh folder, as a user runs it; every
``print(...)  # expected`` in it must print ``expected`` (a comment starting ``e.g.`` marks a
line whose figures vary: it must print, its text is not compared). Each Python block of the
README is the first paragraph of one of those scripts, verbatim, so running the scripts runs
every README block -- each once, which keeps the suite's time (the HE-CNN example makes a key
set: seconds on a loaded machine).
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "docs" / "examples").glob("[0-9]_*.py"))


def _body(path: Path) -> str:
    """The script without its docstring (and the blank lines after it)."""
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    first = tree.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        text = "\n".join(text.splitlines()[first.end_lineno:])
    return text.strip("\n") + "\n"


def _expected(path: Path) -> list[str | None]:
    """What each ``print(...)  # comment`` line says it prints, in order (None: varies)."""
    out: list[str | None] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\s*print\(.*\)\s+# (.*)$", line)
        if m:
            out.append(None if m.group(1).startswith("e.g.") else m.group(1).rstrip())
    return out


def _readme_blocks() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [b.strip("\n") + "\n" for b in re.findall(r"^```python\n(.*?)^```", text, re.MULTILINE | re.DOTALL)]


def test_the_examples_are_numbered_and_each_readme_block_is_the_start_of_one() -> None:
    assert [p.name[:2] for p in EXAMPLES] == ["1_", "2_", "3_", "4_", "5_"]
    blocks = _readme_blocks()
    bodies = {p.name: _body(p) for p in EXAMPLES}
    owners = []
    for block in blocks:
        found = [name for name, body in bodies.items() if body.startswith(block) and
                 (len(body) == len(block) or body[len(block)] == "\n")]
        assert found, f"a README Python block is not the first paragraph of any docs/examples script:\n{block}"
        owners.append(found[0])
    assert sorted(owners) == sorted(bodies), "every example leads a README block (one each)"


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs_and_prints_what_it_says(tmp_path: Path, script: Path) -> None:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}  # the key folder: this run's (tests/conftest.py)
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    printed = proc.stdout.splitlines()
    expected = _expected(script)
    assert len(printed) == len(expected), (printed, expected)
    for got, want in zip(printed, expected):
        if want is not None:
            assert got == want, f"{script.name}: printed {got!r}, the script says {want!r}"
