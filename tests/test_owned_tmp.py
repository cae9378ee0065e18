"""Owned temporary folders: the owner file names this process (pid and start time), and a
new folder of a prefix sweeps this user's folders whose owner is gone -- not a live owner's,
not a young folder without an owner file, not a link, not another user's."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cryptoffload.owned_tmp import OWNER_FILE, UNOWNED_GRACE_S, owned_temp_dir, remove_stale
from cryptoffload.procfs import read_proc_stat


def start_time(pid: int) -> int | None:
    st = read_proc_stat(pid)
    return None if st is None or st.state == "Z" else st.starttime

PREFIX = "cryptoffload-test-owned-"


def _dead_pid() -> tuple[int, int]:
    """The pid and start time of a process that has exited (reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    started = start_time(proc.pid)
    assert started is not None
    proc.communicate(b"")
    return proc.pid, started


def _folder(root: Path, name: str, owner: str | None) -> Path:
    folder = root / f"{PREFIX}{name}"
    folder.mkdir(mode=0o700)
    (folder / "key.pem").write_text("secret")
    if owner is not None:
        (folder / OWNER_FILE).write_text(owner)
    return folder


def test_owned_temp_dir_records_this_process(tmp_path: Path) -> None:
    folder = owned_temp_dir(PREFIX, tmp_path)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    pid, started = (int(x) for x in (folder / OWNER_FILE).read_text().split())
    assert pid == os.getpid() and started == start_time(os.getpid())


def test_start_time_of_a_gone_process_is_none() -> None:
    pid, _ = _dead_pid()
    assert start_time(pid) is None
    assert start_time(os.getpid()) == start_time(os.getpid())


def test_remove_stale_sweeps_only_the_dead_owners(tmp_path: Path) -> None:
    pid, started = _dead_pid()
    dead = _folder(tmp_path, "dead", f"{pid} {started}\n")
    mine = start_time(os.getpid())
    assert mine is not None
    reused = _folder(tmp_path, "reused", f"{os.getpid()} {mine + 1}\n")
    alive = _folder(tmp_path, "alive", f"{os.getpid()} {start_time(os.getpid())}\n")
    young = _folder(tmp_path, "young", None)
    old = _folder(tmp_path, "old", "garbage")
    past = time.time() - UNOWNED_GRACE_S - 10
    os.utime(old, (past, past))
    link = tmp_path / f"{PREFIX}link"
    link.symlink_to(dead)
    other = tmp_path / "unrelated"
    other.mkdir()
    removed = remove_stale(PREFIX, tmp_path)
    assert sorted(removed) == sorted([dead, reused, old])     # a pid whose start time differs was reused
    assert alive.exists() and young.exists() and link.is_symlink() and other.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="making a folder another user's needs root")
def test_remove_stale_leaves_another_users_folder(tmp_path: Path) -> None:
    pid, started = _dead_pid()
    theirs = _folder(tmp_path, "theirs", f"{pid} {started}\n")
    os.chown(theirs, 4242, 4242)
    assert remove_stale(PREFIX, tmp_path) == []
    assert theirs.exists()


def test_a_new_folder_sweeps_first(tmp_path: Path) -> None:
    pid, started = _dead_pid()
    dead = _folder(tmp_path, "dead", f"{pid} {started}\n")
    fresh = owned_temp_dir(PREFIX, tmp_path)
    assert not dead.exists() and fresh.exists()
