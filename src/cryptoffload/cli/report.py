"""``cryptoffload report``: run every registered study (quick mode by default) and write the
HTML report."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from cryptoffload.checks import SEED
from cryptoffload.cli.root import console, number_option, progress_bar, warn
from cryptoffload.cli.study import TABLES_HELP


def report(
    out: Path = typer.Option(Path("report"), "--out", help="Report folder (index.html + one folder per study)."),
    full: bool = typer.Option(False, "--full", help="Full mode instead of quick mode."),
    seed: int = number_option(1, "--seed", bound=SEED, help="Seed of the studies' simulations."),
    tables: bool = typer.Option(False, "--tables", help=TABLES_HELP),
    calibrate: bool = typer.Option(True, "--calibrate/--no-calibrate",
                                   help="Measure this machine's cipher throughput for the 'this machine' tables."),
    screenshot: Optional[Path] = typer.Option(
        None, "--screenshot", help="Also write a PNG of the report's first screen (1400 x 1000) as headless "
                                   "Chromium shows it (needs chromium; checked before any study runs)."),
) -> None:
    """Run every available study (quick mode by default) and write OUT/index.html.

    Prints each study's findings, one line each (their full text is in the report), and where
    the files went; ``--tables`` prints every table as well (over a thousand lines)."""
    from cryptoffload.machine import machine_info
    from cryptoffload.report.html import write_index
    from cryptoffload.report.tables import render_result
    from cryptoffload.studies import ReportContext
    from cryptoffload.studies.runner import run_report

    from cryptoffload.io import check_output_folder

    check_output_folder(out)
    if screenshot is not None:
        from cryptoffload.errors import ConfigError
        from cryptoffload.io import check_output_file
        from cryptoffload.report.browser import require_chromium

        if screenshot.suffix.lower() != ".png":
            raise ConfigError(f"--screenshot {screenshot}: the screenshot is a PNG; give a path ending in .png")
        check_output_file(screenshot, create_parents=True)
        require_chromium()

    def fail(name: str, message: str) -> None:
        warn(f"error: study {name}: {message}")

    ctx = ReportContext(out=out, full=full, seed=seed, calibrate=calibrate,
                        log=lambda line: console.print(line, markup=False, highlight=False))
    results, failures = run_report(ctx, progress_bar, lambda res: render_result(
        res, console, tables=tables, one_line=not tables), fail)
    index = write_index(results, out, machine_info(), failures)
    console.print(f"wrote {index}", markup=False)
    if results:
        console.print(f"one folder per study in {out}/ (result.json, a CSV per table, figures): "
                      + ", ".join(name for _, name in results), markup=False, highlight=False)
    if screenshot is not None:
        from cryptoffload.report.browser import screenshot as take_screenshot

        screenshot.parent.mkdir(parents=True, exist_ok=True)
        console.print(f"wrote {take_screenshot(index, screenshot)}", markup=False)
