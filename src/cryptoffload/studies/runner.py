"""Running every registered study for ``cryptoffload report``: each study's report runs in
turn, one study's bad input or missing tool recorded and the others still run.

Why here and not in the CLI: which runs a study has, and what they need from earlier in the
report, are the studies' business (:mod:`.registry`); the CLI only supplies the progress bar
and prints what comes back.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Callable

from cryptoffload.errors import CryptoffloadError
from cryptoffload.studies import all_studies
from cryptoffload.studies.frame import ProgressFn
from cryptoffload.studies.registry import ReportContext


def run_report(ctx: ReportContext, progress: Callable[[], AbstractContextManager[ProgressFn]],
               show: Callable[[Any], None], fail: Callable[[str, str], None]
               ) -> tuple[list[tuple[Any, str]], list[tuple[str, str]]]:
    """Run every registered study's report runs into ``ctx.out / run.name``.

    ``progress()`` gives a progress bar for one run; ``show(result)`` is called after each run,
    ``fail(name, message)`` for each run that ended in a user error (a
    :class:`~cryptoffload.errors.CryptoffloadError`: bad input, a tool or library missing
    here). Returns ``(result, folder name)`` pairs and ``(name, message)`` failures; any other
    exception is a bug and propagates."""
    results: list[tuple[Any, str]] = []
    failures: list[tuple[str, str]] = []
    for spec in all_studies().values():
        for run in spec.report_runs():
            try:
                cfg = run.config(ctx)
                with progress() as prog:
                    res = spec.run(cfg, ctx.out / run.name, prog)
            except CryptoffloadError as exc:
                failures.append((run.name, str(exc)))
                fail(run.name, str(exc))
                continue
            show(res)
            results.append((res, run.name))
    return results, failures
