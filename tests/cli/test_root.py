"""The root command: version, and the entry point's handling of errors."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import run_cli

from cryptoffload import __version__


def test_version(tmp_path: Path) -> None:
    proc = run_cli(tmp_path, "version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == __version__
