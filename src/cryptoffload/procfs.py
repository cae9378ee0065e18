"""Reading Linux's ``/proc``: process state, CPU times, process groups and start times.

Why its own module: the nginx runner needs it to account its workers' CPU and to empty
nginx's process group, and the nginx prefix folders and the servers' private temporary folders
(:mod:`._private_tmp`) need it to tell a dead owner from a live one (a pid alone can be reused;
a pid with its start time cannot).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True)
class ProcStat:
    """The fields of ``/proc/<pid>/stat`` used here (times in clock ticks)."""

    pid: int
    state: str
    ppid: int
    pgrp: int
    utime: int
    stime: int
    starttime: int  # clock ticks after boot: with the pid, identifies one process


def read_proc_stat(pid: int) -> Optional[ProcStat]:
    """``/proc/<pid>/stat`` parsed, or None when the process is gone.

    The command name may contain spaces and parentheses, so fields are taken after the last ')'.
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read().decode("ascii", "replace")
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    rest = raw[raw.rfind(")") + 2:].split()
    # rest[0] is field 3 (state); utime, stime are fields 14, 15; starttime is field 22.
    return ProcStat(pid, rest[0], int(rest[1]), int(rest[2]), int(rest[11]), int(rest[12]), int(rest[19]))


def all_pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def live_group_members(pgid: int) -> list[int]:
    """Pids in process group ``pgid`` that are not zombies (a zombie runs nothing)."""
    out = []
    for pid in all_pids():
        st = read_proc_stat(pid)
        if st is not None and st.pgrp == pgid and st.state != "Z":
            out.append(pid)
    return out


def is_running(pid: int, starttime: Optional[int] = None) -> bool:
    """The process ``pid`` exists, is no zombie and (when given) started at ``starttime``."""
    st = read_proc_stat(pid)
    return st is not None and st.state != "Z" and (starttime is None or st.starttime == starttime)
