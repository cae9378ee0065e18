"""Running the real entry point (``python -m cryptoffload.cli``) in a subprocess, and the
project's contract for user errors, shared by every CLI test: exit code 2, exactly one
``error:`` line on stderr, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_cli(cwd: Path, *args: str, env: dict[str, str] | None = None, columns: int = 200,
            timeout: float = 180) -> subprocess.CompletedProcess:
    if env is None:  # pytest-xdist's workers export COLUMNS=80: the width asked for wins
        env = {**os.environ, "COLUMNS": str(columns)}
    env = dict(env)
    env.setdefault("COLUMNS", str(columns))
    env.setdefault("PYTHONWARNINGS", "ignore")
    return subprocess.run([sys.executable, "-m", "cryptoffload.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def assert_user_error(proc: subprocess.CompletedProcess, *needles: str, strict: bool = True) -> str:
    """Exit 2, exactly one line on stderr starting with 'error:' (``strict=False``: blank lines
    besides it are tolerated), no traceback; every needle in that line."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    lines = proc.stderr.splitlines() if strict else [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: "), proc.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def assert_nothing_written(folder: Path) -> None:
    """The output folder is absent or empty (a user error must leave nothing half-written)."""
    assert not folder.exists() or list(folder.iterdir()) == [], sorted(p.name for p in folder.rglob("*"))
