"""Hypothesis over every CLI entry point: a command line with at least one value that no
option of its kind accepts must end with exit 2, one ``error:`` line, no traceback and nothing
written (the contract of :mod:`cli_contract`).

The commands are read from the typer app (:func:`cli_contract.cli_commands`), so a new command
or option is fuzzed without touching this file. What makes a value wrong for *every* option of
its kind: an integer option never takes a negative number, a non-integer or 10^23 (every count,
size, port, index and seed has a ceiling below that); a float option never takes NaN,
infinities, a negative number, text, 1e308 or 1e-300 (each has a floor and a ceiling); a path option never takes a path through a regular
file. Other options get plausible values, or random ones from the same pools.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_contract import CLEAN, cli_commands, option_name, param_kind, run_cli_forked

COMMANDS = cli_commands()
BAD = {
    "int": ["-1", "abc", "1.5", "", "99999999999999999999999"],
    "float": ["nan", "inf", "-inf", "abc", "-1", "1e308", "1e-300"],
    "path": ["{afile}/x", "{afile}/sub/x.json"],
}
PLAUSIBLE = {"int": ["1", "2", "7"], "float": ["0.5", "2"], "path": ["{afile}", "new.out", "{adir}"],
             "str": ["x", "http://127.0.0.1:1", "1,2", ""]}


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("fuzz-fixtures")
    (root / "afile").write_text("a plain file\n")
    (root / "adir").mkdir()
    return root


@st.composite
def bad_command_lines(draw) -> tuple[list[str], str]:
    path = draw(st.sampled_from(sorted(COMMANDS)))
    params = [p for p in COMMANDS[path] if param_kind(p) != "flag"]
    corruptible = [p for p in params if param_kind(p) in BAD]
    if not corruptible:
        return [*path, "--no-such-option", "1"], "no such option"
    bad = draw(st.sampled_from(corruptible))
    argv = list(path)
    for p in params:
        kind = param_kind(p)
        if p is bad:
            value = draw(st.sampled_from(BAD[kind]))
        elif p.required or draw(st.booleans()):
            value = draw(st.sampled_from(PLAUSIBLE[kind] + (BAD.get(kind, []) if not p.required else [])))
        else:
            continue
        name = option_name(p)
        argv += [value] if not name.startswith("-") else [name, value]
    return argv, option_name(bad)


@settings(max_examples=120, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=bad_command_lines())
@pytest.mark.slow
def test_every_command_refuses_universally_bad_values_cleanly(fixtures: Path, case: tuple[list[str], str]) -> None:
    template, _ = case
    argv = [a.format(afile=fixtures / "afile", adir=fixtures / "adir") for a in template]
    with tempfile.TemporaryDirectory(prefix="cli-fuzz-") as work:
        outcome = run_cli_forked(argv, Path(work), watch=[fixtures], timeout=60.0,
                                 env={"CRYPTOFFLOAD_RIDGE_BUYER_TOKEN": ""})
    assert outcome.verdict == CLEAN, outcome.describe()


def test_the_fuzzer_sees_every_command_group() -> None:
    groups = {path[0] for path in COMMANDS}
    assert {"study", "paillier", "calibrate", "trace", "plan", "he-cnn", "ridge", "tls", "report"} <= groups
    assert sum(1 for path in COMMANDS if path[0] == "study") >= 6
