"""The CLI's user-error contract, checked on any command line: run it the way a user does
(``cryptoffload.cli.main``), in a forked child so a hang is a timeout and not a stuck suite,
and judge what came back.

The contract (issue 12): a bad input gives exit code 2, exactly one line on stderr that starts
with ``error:`` and no traceback, and leaves the folders it was given as they were (nothing
half-written). Anything else -- a traceback, a hang, several lines, another exit code, a file
written -- is a breach, named by :attr:`Outcome.verdict`.

Why fork rather than a subprocess per case: importing the CLI costs about a second, a fork of
a process that already imported it a few milliseconds, so hundreds of cases stay cheap; the
child is put in its own process group, so anything it starts (nginx, Dask workers) dies with it.
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional

CLEAN = "clean"


def snapshot(folders: Iterable[Path]) -> dict[str, tuple[int, int, int]]:
    """Every entry under ``folders``: path -> (mode, size, mtime_ns)."""
    out: dict[str, tuple[int, int, int]] = {}
    for root in folders:
        if not root.exists():
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            for name in dirnames + filenames:
                p = os.path.join(dirpath, name)
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                out[p] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return out


@dataclass
class Outcome:
    argv: list[str]
    rc: Optional[int]  # None: killed after the timeout
    stdout: str
    stderr: str
    seconds: float
    changed: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        """``clean`` when the contract for a bad input holds, else what breaks it."""
        if self.rc is None:
            return "timeout"
        if "Traceback (most recent call last)" in self.stderr + self.stdout:
            return "traceback"
        if self.rc == 0:
            return "accepted"
        if self.rc != 2:
            return f"exit {self.rc}"
        lines = self.stderr.splitlines()
        if len(lines) != 1 or not lines[0].startswith("error: "):
            return "not one error line"
        if self.changed:
            return "wrote files"
        return CLEAN

    def describe(self) -> str:
        return (f"{' '.join(self.argv)!r}: {self.verdict} (exit {self.rc}, {self.seconds:.1f} s); "
                f"stderr: {self.stderr.strip()[-600:]!r}; changed: {self.changed[:5]}")


def run_cli_forked(argv: list[str], cwd: Path, *, watch: Iterable[Path] = (), timeout: float = 60.0,
                   env: Optional[dict[str, str]] = None) -> Outcome:
    """Run ``cryptoffload argv`` in a forked child with ``cwd`` as its working folder; report
    its exit code, output and every change under ``cwd`` and ``watch``."""
    import cryptoffload.cli  # noqa: F401 -- imported once here, inherited by every child

    folders = [Path(cwd), *map(Path, watch)]
    before = snapshot(folders)
    with tempfile.TemporaryFile() as out_f, tempfile.TemporaryFile() as err_f:
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:  # child
            code = 1
            try:
                os.setpgid(0, 0)
                os.chdir(cwd)
                null = os.open(os.devnull, os.O_RDONLY)
                os.dup2(null, 0)
                os.dup2(out_f.fileno(), 1)
                os.dup2(err_f.fileno(), 2)
                sys.stdin = open(0, closefd=False)
                sys.stdout = open(1, "w", closefd=False)
                sys.stderr = open(2, "w", closefd=False)
                os.environ.update({"COLUMNS": "200", "PYTHONWARNINGS": "ignore", **(env or {})})
                from cryptoffload.cli import main

                try:
                    main(list(argv))
                    code = 0
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                    if isinstance(exc.code, str):
                        print(exc.code, file=sys.stderr)
            except BaseException:
                traceback.print_exc()
                code = 1
            finally:
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                finally:
                    os._exit(code)
        rc: Optional[int] = None
        deadline = start + timeout
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                rc = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() > deadline:
                break
            time.sleep(0.005)
        seconds = time.monotonic() - start
        try:  # the child and whatever it started
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if rc is None:
            os.waitpid(pid, 0)
        out_f.seek(0)
        err_f.seek(0)
        stdout = out_f.read().decode("utf-8", "replace")
        stderr = err_f.read().decode("utf-8", "replace")
    after = snapshot(folders)
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    return Outcome(list(argv), rc, stdout, stderr, seconds, changed)


def cli_commands() -> dict[tuple[str, ...], list]:
    """Every leaf command of the typer app (study commands included), read from the app itself
    so a new command is covered without a list to update: path -> its click parameters."""
    from typer.main import get_command

    from cryptoffload.cli import app

    root = get_command(app)
    found: dict[tuple[str, ...], list] = {}

    def walk(cmd, path: tuple[str, ...], parent) -> None:
        if hasattr(cmd, "list_commands"):
            ctx = type(root).context_class(cmd, parent=parent, info_name=path[-1] if path else "cryptoffload")
            if getattr(cmd, "invoke_without_command", False) and path:
                found[path] = list(cmd.params)
            for name in cmd.list_commands(ctx):
                walk(cmd.get_command(ctx, name), path + (name,), ctx)
        else:
            found[path] = list(cmd.params)

    walk(root, (), None)
    return found


def param_kind(param) -> str:
    """``flag``, ``int``, ``float``, ``path`` or ``str`` for a typer parameter (typer names
    the bare type of an ``Optional[X]`` option ``X``)."""
    if getattr(param, "is_flag", False):
        return "flag"
    bare = param.bare_type() if callable(getattr(param, "bare_type", None)) else None
    return {"bool": "flag", "int": "int", "float": "float", "Path": "path"}.get(str(bare), "str")


def option_name(param) -> str:
    """How the option is written (``--bits``), or the argument's name."""
    return param.opts[0] if param.opts and param.opts[0].startswith("-") else param.name
