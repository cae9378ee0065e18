"""Private temporary folders that record their owner process, and are removed by the next run
when that process died without cleaning up.

Why: a local Dask cluster keeps its per-run TLS key (and its workers' scratch space) in a
temporary folder (0700) removed when the runner closes. A SIGKILL runs no cleanup, so the
folder, key included, would stay behind. Each folder records its owner -- pid and start time
(``/proc/<pid>/stat`` field 22; a pid alone can be reused) -- and every new folder of the same
prefix first removes this user's folders whose owner is gone.

This is the scheme of :mod:`cryptoffload.apps._private_tmp`, duplicated minimally here because
``engines/`` may not import ``apps/`` (the layer rule); both are candidates for one base-library
module.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import time
from pathlib import Path

OWNER_FILE = ".owner"
#: a folder without a readable owner file (being made this instant, or damaged) is stale only
#: when older than this
UNOWNED_GRACE_S = 3600.0


def start_time(pid: int) -> int | None:
    """Clock ticks after boot at which process ``pid`` started, or None when it is gone (or a
    zombie: it runs nothing)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2:].split()   # the command name may hold spaces and ')'
    if len(fields) < 20 or fields[0] == "Z":
        return None
    return int(fields[19])


def owned_temp_dir(prefix: str, root: Path | None = None) -> Path:
    """A new folder ``<tmp>/<prefix>XXXX`` (0700: ``mkdtemp``) recording this process as its
    owner, after removing this user's folders of the same prefix whose owners are gone."""
    remove_stale(prefix, root)
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=root))
    me = start_time(os.getpid())
    (folder / OWNER_FILE).write_text(f"{os.getpid()} {-1 if me is None else me}\n", encoding="ascii")
    return folder


def _in_use(folder: Path) -> bool:
    try:
        pid, started = (int(x) for x in (folder / OWNER_FILE).read_text(encoding="ascii").split())
    except (OSError, ValueError, UnicodeDecodeError):
        try:
            return time.time() - folder.lstat().st_mtime < UNOWNED_GRACE_S
        except OSError:
            return True
    now = start_time(pid)
    return now is not None and (started < 0 or now == started)


def remove_stale(prefix: str, root: Path | None = None) -> list[Path]:
    """Remove this user's ``<prefix>*`` folders under ``root`` (default: the system temporary
    folder) that no running process owns; returns them. Another user's folder, a symlink or a
    folder in use is left alone."""
    base = Path(root) if root is not None else Path(tempfile.gettempdir())
    removed: list[Path] = []
    try:
        candidates = [p for p in base.iterdir() if p.name.startswith(prefix)]
    except OSError:
        return removed
    for folder in candidates:
        try:
            st = folder.lstat()
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or _in_use(folder):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed
