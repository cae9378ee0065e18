"""Reading /proc: this process's own stat line, a command name with spaces and parentheses,
zombies and process groups, and a pid identified by its start time."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from cryptoffload.procfs import all_pids, is_running, live_group_members, read_proc_stat


def test_own_stat_line() -> None:
    me = read_proc_stat(os.getpid())
    assert me is not None and me.pid == os.getpid() and me.state in "RS"
    assert (me.ppid, me.pgrp) == (os.getppid(), os.getpgrp())
    assert me.starttime > 0 and me.utime >= 0 and me.stime >= 0
    assert os.getpid() in all_pids() and os.getpid() in live_group_members(os.getpgrp())
    assert is_running(os.getpid()) and is_running(os.getpid(), me.starttime)
    assert not is_running(os.getpid(), me.starttime + 1)          # the same pid, another process
    assert read_proc_stat(2 ** 22 + 1) is None and not is_running(2 ** 22 + 1)   # above pid_max


def test_command_names_with_spaces_and_parentheses(tmp_path: Path) -> None:
    odd = tmp_path / "a) (b c"                                   # the kernel's comm is the file name
    odd.symlink_to(shutil.which("sleep"))
    proc = subprocess.Popen([str(odd), "30"])
    try:
        comm = Path(f"/proc/{proc.pid}/comm")
        for _ in range(200):                                     # until exec has renamed the child
            if comm.read_text().strip() == odd.name:
                break
            time.sleep(0.01)
        assert comm.read_text().strip() == odd.name
        st = read_proc_stat(proc.pid)
        assert st is not None and (st.pid, st.ppid, st.pgrp) == (proc.pid, os.getpid(), os.getpgrp())
        assert st.state in "RSD" and st.starttime >= read_proc_stat(os.getpid()).starttime
    finally:
        proc.kill()
        proc.wait()


def test_a_zombie_is_not_running() -> None:
    proc = subprocess.Popen(["true"])
    for _ in range(500):                                         # exited, not yet reaped
        st = read_proc_stat(proc.pid)
        if st is not None and st.state == "Z":
            break
        time.sleep(0.01)
    try:
        assert st is not None and st.state == "Z"
        assert not is_running(proc.pid) and proc.pid not in live_group_members(os.getpgrp())
    finally:
        proc.wait()
    assert read_proc_stat(proc.pid) is None
