"""``cryptoffload report``: run every registered study (quick mode by default) and write the
HTML report."""

from __future__ import annotations

from pathlib import Path

import typer

from cryptoffload.cli.root import console, err_console, progress_bar


def report(
    out: Path = typer.Option(Path("report"), "--out", help="Report folder (index.html + one folder per study)."),
    full: bool = typer.Option(False, "--full", help="Full mode instead of quick mode."),
    seed: int = typer.Option(1, "--seed"),
    calibrate: bool = typer.Option(True, "--calibrate/--no-calibrate",
                                   help="Measure this machine's cipher throughput for the 'this machine' tables."),
) -> None:
    """Run every available study (quick mode by default) and write OUT/index.html."""
    from cryptoffload.machine import machine_info
    from cryptoffload.report.html import write_index
    from cryptoffload.report.tables import render_result
    from cryptoffload.studies import ReportContext
    from cryptoffload.studies.runner import run_report

    from cryptoffload.checks import check_seed
    from cryptoffload.io import check_output_folder

    check_output_folder(out)
    check_seed("--seed", seed)

    def fail(name: str, message: str) -> None:
        err_console.print(f"error: study {name}: {message}", markup=False, highlight=False)

    ctx = ReportContext(out=out, full=full, seed=seed, calibrate=calibrate,
                        log=lambda line: console.print(line, markup=False, highlight=False))
    results, failures = run_report(ctx, progress_bar, lambda res: render_result(res, console), fail)
    index = write_index(results, out, machine_info(), failures)
    console.print(f"wrote {index}")
