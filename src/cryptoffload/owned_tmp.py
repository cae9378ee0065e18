"""Private temporary folders that record their owner process, found again and removed when
their owner died without cleaning up.

Why: a server started without a folder of its own (``ridge csp`` without ``--key-dir``, ``ridge
platform`` or ``he-cnn serve`` without ``--token-dir``, every ``ridge demo``) and every local
Dask cluster (its per-run TLS key and its workers' scratch space) keep their secrets in a
temporary folder (0700, files 0600) removed at exit. A SIGKILL runs no cleanup, so the folder
stayed behind with its secrets. Each folder records its owner (pid and start time: a pid alone
can be reused), and every new folder of the same prefix first removes this user's folders
whose owners are gone -- the scheme of the nginx prefix folders
(:mod:`cryptoffload.apps.tls.prefix`). One module in the base library, because ``apps/`` and
``engines/`` both need it and neither may import the other.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import time
from pathlib import Path
from typing import Callable

from cryptoffload.errors import ConfigError
from cryptoffload.private_files import private_dir
from cryptoffload.procfs import is_running, read_proc_stat

OWNER_FILE = ".owner"
#: a folder without an owner file (made by an older version, or being made this instant) is
#: stale only when older than this
UNOWNED_GRACE_S = 3600.0


def owned_temp_dir(prefix: str, root: Path | None = None) -> Path:
    """A new folder ``<tmp>/<prefix>XXXX`` (0700) recording this process as its owner, after
    removing the folders of the same prefix whose owners are gone."""
    remove_stale(prefix, root)
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=root))
    try:
        # mkdtemp made it ours and 0700; the folders above ($TMPDIR) must not let others replace it
        private_dir(folder, "temporary secrets", create=False)
    except ConfigError:
        os.rmdir(folder)
        raise
    me = read_proc_stat(os.getpid())
    (folder / OWNER_FILE).write_text(f"{os.getpid()} {me.starttime if me else -1}\n", encoding="ascii")
    return folder


def _in_use(folder: Path) -> bool:
    try:
        pid, start = (int(x) for x in (folder / OWNER_FILE).read_text(encoding="ascii").split())
    except (OSError, ValueError, UnicodeDecodeError):
        try:
            return time.time() - folder.lstat().st_mtime < UNOWNED_GRACE_S
        except OSError:
            return True
    return is_running(pid, start if start >= 0 else None)


def remove_stale(prefix: str, root: Path | None = None, in_use: Callable[[Path], bool] | None = None) -> list[Path]:
    """Remove this user's ``<prefix>*`` folders under ``root`` (default: the system temporary
    folder) that no running process owns (``in_use``, default: the owner file's process is
    alive); returns them. Another user's folder, a symlink or a folder in use is left alone."""
    in_use = in_use or _in_use
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
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or in_use(folder):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed

