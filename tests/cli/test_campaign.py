"""The bad-input campaign (tests/cli/campaign.py) in CI: every command of the app has cases,
and a sample of them -- the first case of each command -- holds the contract. The whole
campaign (hundreds of cases) is run by hand: ``PYTHONPATH=src python tests/cli/campaign.py``."""

from __future__ import annotations

import pytest

from cli.campaign import CLEAN, Fixtures, cases, judge, run
from cli_contract import cli_commands


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    fx = Fixtures(tmp_path_factory.mktemp("campaign-fixtures"))
    return fx, cases(fx)


def test_every_command_has_cases(campaign) -> None:
    _, all_cases = campaign
    covered = {c.command for c in all_cases}
    missing = [" ".join(p) for p in cli_commands() if p not in covered and p not in (("version",), ("study", "list"))]
    assert not missing, f"commands without bad-input cases in tests/cli/campaign.py: {missing}"
    assert len(all_cases) >= 400
    assert len({c.argv for c in all_cases}) == len(all_cases)


def test_first_case_of_every_command_is_a_clean_error(campaign) -> None:
    fx, all_cases = campaign
    firsts = {}
    for c in all_cases:
        firsts.setdefault(c.command, c)
    results = run(list(firsts.values()), fx, timeout=60.0, log=lambda line: None)
    bad = [o.describe() for c, o, v in results if v != CLEAN]
    assert not bad, "\n".join(bad)


def test_judge_wants_the_error_to_name_what_was_wrong(campaign) -> None:
    from cli.campaign import Case
    from cli_contract import Outcome

    case = Case(("plan", "bsgs"), ("plan", "bsgs", "--diagonals", "0"), ("--diagonals", "diagonals", "0"))
    good = Outcome(list(case.argv), 2, "", "error: --diagonals must be a positive integer, got 0\n", 0.1)
    other = Outcome(list(case.argv), 2, "", "error: cannot reach the CSP\n", 0.1)
    assert judge(case, good) == CLEAN
    assert judge(case, other) == "error names something else"
    assert judge(case, Outcome([], None, "", "", 60.0)) == "timeout"
    assert judge(case, Outcome([], 1, "", "Traceback (most recent call last):\n", 0.1)) == "traceback"
    assert judge(case, Outcome([], 2, "", "error: a\nerror: b\n", 0.1)) == "not one error line"
    assert judge(case, Outcome([], 2, "", "error: --diagonals x\n", 0.1, changed=["f"])) == "wrote files"
