"""cli/coercion.py: every option of the app coerced without pydantic gives what typer's own
coercion gives -- the same value, or the same error -- for text a user may type; the kinds
it does not take keep typer's; and a command line imports no pydantic (issue 37: 0.1 s of
every call)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_contract import cli_commands
from typer import _coercion

from cryptoffload.cli import coercion

TEXTS = ["abc", "", " 7 ", "é", "-", "a\x1bb", "1_000", "0", "-1", "5", "2.5", "1e400", "nan", "inf", "0x10",
         "true", "no", "maybe"]


def _paths(tmp: Path) -> list[str]:
    (tmp / "f").write_text("x")
    return [*TEXTS, str(tmp), str(tmp / "f"), str(tmp / "missing" / "x"), "."]


def _outcome(runtime: _coercion.RuntimeParam, value: Any, param: Any, ctx: Any) -> tuple[str, Any]:
    try:
        out = runtime.coerce(value, param=param, ctx=ctx)
    except Exception as exc:  # noqa: BLE001 -- the error itself is what is compared
        return "error", (type(exc).__name__, getattr(exc, "message", str(exc)))
    return "value", (type(out).__name__, out)


def _options() -> list[tuple[tuple[str, ...], Any]]:
    return [(path, p) for path, params in cli_commands().items() for p in params
            if getattr(p, "type_descriptor", None) is not None]


def test_every_option_is_of_a_kind_we_know() -> None:
    """Direct coercion for flags, text, plain paths and parsed numbers; typer's own for the lists
    of paths. A new kind of option (a choice, a date) is not an error -- it keeps typer's -- but
    it costs every command line the pydantic import again: this names it."""
    direct, typers = 0, set()
    for path, p in _options():
        runtime = coercion.runtime_param(p.type_descriptor)
        if isinstance(runtime, coercion.DirectRuntimeParam):
            direct += 1
        else:
            typers.add(repr(p.type_descriptor.annotation))
    assert direct > 300
    assert typers == {"typing.List[pathlib.Path]"}, typers


def test_direct_coercion_equals_typers_for_every_option(tmp_path: Path) -> None:
    texts = _paths(tmp_path)
    compared = 0
    for path, p in _options():
        ours = coercion.runtime_param(p.type_descriptor)
        if not isinstance(ours, coercion.DirectRuntimeParam):
            continue
        theirs = coercion._TYPER_BUILD(p.type_descriptor)
        for value in [*texts, True, False] if p.type_descriptor.annotation is bool else texts:
            want, got = _outcome(theirs, value, p, None), _outcome(ours, value, p, None)
            assert got == want, (path, p.name, value, got, want)
            compared += 1
    assert compared > 5000, compared


def test_a_command_line_imports_no_pydantic() -> None:
    code = ("import json, sys; from cryptoffload.cli import main\n"
            "try:\n    main(['paillier', 'keygen', '--bits', 'x'])\nexcept SystemExit:\n    pass\n"
            "print(json.dumps([m for m in sys.modules if m.split('.')[0] == 'pydantic']))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "100"})
    assert "--bits must be an integer" in proc.stderr, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


@pytest.mark.parametrize("value", ["yes", "0", "maybe"])
def test_a_flag_given_as_text_keeps_typers_rule(value: str) -> None:
    """A flag's value is a bool from the command line; text (an environment variable) goes to
    typer's own coercion, built then."""
    _, p = next((path, p) for path, p in _options() if p.type_descriptor.annotation is bool)
    ours, theirs = coercion.runtime_param(p.type_descriptor), coercion._TYPER_BUILD(p.type_descriptor)
    assert _outcome(ours, value, p, None) == _outcome(theirs, value, p, None)
