"""Another user on the same machine, as the tests of the private-files rule play it: folders and
files planted under uid :data:`ATTACKER` (which needs root: ``chown``), and checks run as a
plain user (which needs root to switch to one)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable

import pytest

#: the other user: no account needed, an owner is a number
ATTACKER = 12345
#: the user a non-root run plays
PLAIN_USER = 23456

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="planting files as another user needs root (chown)")


def planted_dir(path: Path, uid: int = ATTACKER, mode: int = 0o700) -> Path:
    """A folder made beforehand by ``uid`` with ``mode`` (0700: it passes a mode check)."""
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, mode)
    os.chown(path, uid, uid)
    return path


def planted_file(path: Path, text: str, uid: int = ATTACKER, mode: int = 0o600) -> Path:
    """A file written by ``uid`` with ``mode`` (0600: it passes a mode check)."""
    path.write_text(text)
    os.chmod(path, mode)
    os.chown(path, uid, uid)
    return path


def shared_tmp(prefix: str) -> Path:
    """A folder in the system's temporary folder that another uid can reach (pytest's
    ``tmp_path`` lies under a 0700 folder of root's); the caller removes it."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    os.chmod(folder, 0o755)
    return folder


def as_plain_user(uid: int, call: Callable[[], object]) -> str:
    """``call()`` in a forked child that has dropped root for the plain user ``uid`` (no
    groups): ``"ok"``, or the message of the error it raised. The child runs the code already
    imported (another uid could not start this Python: it lives under root's home)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        os.close(read)
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            call()
            out = "ok"
        except BaseException as exc:  # noqa: BLE001 - everything goes back to the parent
            out = f"{type(exc).__name__}: {exc}"
        os.write(write, out.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as fh:
        text = fh.read().decode()
    os.waitpid(pid, 0)
    return text
