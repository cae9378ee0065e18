"""The report runner: every run of every study, a user error in one recorded while the others
still run, a bug propagating."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from types import SimpleNamespace

import pytest

from cryptoffload.errors import ConfigError
from cryptoffload.studies import ReportContext, ReportRun, runner


def _spec(name: str, runs: list[ReportRun], run):
    return SimpleNamespace(name=name, report_runs=lambda: runs, run=run)


def test_runs_all_and_records_user_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def needs_missing(ctx):
        raise ConfigError("no trace")

    calls = []
    specs = {"a": _spec("a", [ReportRun("a", lambda ctx: 1), ReportRun("a-extra", needs_missing)],
                        lambda cfg, out, prog: calls.append((cfg, out)) or f"result {cfg}"),
             "b": _spec("b", [ReportRun("b", lambda ctx: 2)], lambda cfg, out, prog: calls.append((cfg, out)) or "rb")}
    monkeypatch.setattr(runner, "all_studies", lambda: specs)
    shown, failed = [], []
    results, failures = runner.run_report(ReportContext(tmp_path), nullcontext, shown.append,
                                          lambda n, m: failed.append((n, m)))
    assert calls == [(1, tmp_path / "a"), (2, tmp_path / "b")]
    assert results == [("result 1", "a"), ("rb", "b")] and shown == ["result 1", "rb"]
    assert failures == failed == [("a-extra", "no trace")]


def test_a_bug_is_not_swallowed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def bug(cfg, out, prog):
        raise ZeroDivisionError

    monkeypatch.setattr(runner, "all_studies", lambda: {"a": _spec("a", [ReportRun("a", lambda ctx: 1)], bug)})
    with pytest.raises(ZeroDivisionError):
        runner.run_report(ReportContext(tmp_path), nullcontext, print, print)
