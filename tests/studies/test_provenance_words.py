"""Provenance from data only (issue 35): study code never writes a provenance word that only data
can justify.

Why these four words: ``cited`` (a paper printed it), ``stored`` (an earlier run of ours recorded
it, with its machine and date), ``assumed`` (a profile says no source gives it) and ``fitted`` (a
profile or the study's declared fits say it was fitted to the paper) describe where a number
came from *outside* the run, so they must be read from that source -- a profile value's
``provenance``, a stored record, the paper's data, the declared fits -- through
``report/provenance.py`` (``printed``, ``stored_from``, ``computed_from``), never typed by hand: a
hand-typed word is how a set-up cost stayed "cited" after its profile said "assumed". The words
for what the study itself does in this run (``simulated``, ``measured``, ``derived``, ``input``,
``mixed``) stay the study's to state, and the provenance check holds them to the fits.

The test walks every module under ``studies/`` and fails on a string constant that is one of the
four words, or starts with one followed by ``(``, ``:`` or ``;`` (a label with its reason),
unless it is compared with (``==``, ``in``) or used as a key: reading a word is fine, writing one
is not.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import cryptoffload.studies

DATA_WORDS = ("cited", "stored", "assumed", "fitted")
LABEL = re.compile(r"^(%s)(\s*[(:;]|$)" % "|".join(DATA_WORDS))
ROOT = Path(cryptoffload.studies.__file__).parent


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            out.add(id(body[0].value))
    return out


def _read_only(tree: ast.AST) -> set[int]:
    """Constants that are compared with, looked up or used as keys: words read, not written."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            out |= {id(n) for n in ast.walk(node)}
        elif isinstance(node, ast.Subscript):
            out |= {id(n) for n in ast.walk(node.slice)}
        elif isinstance(node, ast.Dict):
            out |= {id(k) for k in node.keys if k is not None}
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("get", "startswith"):
            out |= {id(a) for a in node.args[:1]}
    return out


def hard_coded_words(source: str) -> list[tuple[int, str]]:
    """(line, text) of every provenance word written by hand in ``source``."""
    tree = ast.parse(source)
    skip = _docstrings(tree) | _read_only(tree)
    found = set()
    for node in ast.walk(tree):  # an f-string's first part is a constant of its own, walked too
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            if LABEL.match(node.value):
                found.add((node.lineno, node.value))
    return sorted(found)


def test_no_study_writes_a_provenance_word_only_data_can_justify() -> None:
    problems = [f"{path.relative_to(ROOT.parent)}:{line}: {text!r}"
                for path in sorted(ROOT.rglob("*.py"))
                for line, text in hard_coded_words(path.read_text(encoding="utf-8"))]
    assert problems == [], ("provenance words written by hand (read them from the profile, the stored record, the "
                            "paper's data or the declared fits: report/provenance.py):\n" + "\n".join(problems))


def test_the_scan_fails_on_a_hand_written_word_and_not_on_a_read_one() -> None:
    assert hard_coded_words('Row("nic set-up", "cited")') == [(1, "cited")]
    assert hard_coded_words('x = f"stored (guest {k})"') == [(1, "stored (guest ")]
    assert hard_coded_words('Claim(provenance="fitted")') == [(1, "fitted")]
    assert hard_coded_words('ok = prov == "fitted" or cpu.provenance in ("cited",)') == []
    assert hard_coded_words('n = names["fitted"]; v = d.get("assumed")') == []
    assert hard_coded_words('"""fitted: a docstring"""\nsay("simulated")') == []
