"""issue 32: every number typed on the command line is read by one grammar and has a floor and a
ceiling in its unit. typer's own conversion read ``1_000`` as 1000, ``12.0`` as an integer,
``nan``, ``inf`` and ``1e400`` (as infinity) as floats. Now every int and float option of every
command is read by a :class:`~cryptoffload.cli.root.NumberParser` holding a named bound of
:data:`cryptoffload.checks.BOUNDS`; a new option without one fails here."""

from __future__ import annotations

import pytest

from cli_contract import cli_commands, option_name, param_kind
from cryptoffload.checks import BOUNDS
from cryptoffload.cli.root import NumberParser
from cryptoffload.errors import ConfigError

#: commands that read their numbers as text with parse_int themselves (paillier's --scalar and
#: --bound: integers past a float's range); none is skipped any more
ELSEWHERE: set[tuple[str, ...]] = set()


def _numeric_options() -> list[tuple[str, str, object]]:
    found = []
    for path, params in cli_commands().items():
        if path[:1] in {p[:1] for p in ELSEWHERE}:
            continue
        for p in params:
            if param_kind(p) in ("int", "float"):
                found.append((" ".join(path), option_name(p), p.type_descriptor.parameter_info.parser))
    return found


OPTIONS = _numeric_options()


def test_the_walk_finds_the_options() -> None:
    assert len(OPTIONS) > 70 and ("trace generate", "--rate") in {(c, f) for c, f, _ in OPTIONS}


@pytest.mark.parametrize("command, flag, parser", OPTIONS, ids=[f"{c} {f}" for c, f, _ in OPTIONS])
def test_every_numeric_option_is_read_by_the_grammar_against_a_named_bound(command: str, flag: str,
                                                                            parser: object) -> None:
    assert isinstance(parser, NumberParser), f"{command} {flag} is converted by typer, not by a NumberParser"
    assert parser.flag == flag and BOUNDS.get(parser.bound.name) is parser.bound
    for text in ("1_000", "\u0661\u0662", "nan", "inf", "1e400", "0x10", "", " "):
        with pytest.raises(ConfigError, match=flag):
            parser(text)
    high = parser.bound.ceiling if parser.maximum is None else min(parser.bound.ceiling, parser.maximum)
    absurd = str(int(high) + 1) if parser.bound.integer else repr(high * 10)
    with pytest.raises(ConfigError, match=rf"^{flag} must be .*{parser.bound.unit}, got "):
        parser(absurd)
    if parser.bound.integer:
        with pytest.raises(ConfigError, match=flag):
            parser("12.0")


def test_every_named_bound_has_a_finite_range_and_says_its_unit() -> None:
    for name, bound in BOUNDS.items():
        assert bound.name == name and 0 <= bound.floor <= bound.ceiling < float("inf"), name
        assert bound.unit in bound.text(), name
