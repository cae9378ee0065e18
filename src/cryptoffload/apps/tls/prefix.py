"""nginx's private prefix folder: made with its owner recorded, its key in a 0700 folder, and
found again and removed when its owner died without cleaning up.

Why: everything nginx writes (pid file, logs, temporary files, TLS key and certificate) lives
in one temporary folder that :meth:`NginxServer.stop` removes. A SIGKILL of the Python process
runs no cleanup, so the folder -- with ``key.pem`` -- stayed behind. Each folder now records its
owner (pid and start time: a pid alone can be reused), and every start first removes the
folders of owners that are gone, once their nginx is gone too. The key lives in ``tls/``
(0700, key 0600): nginx's master reads it while starting, before its workers (which may run as
another user and need to reach ``tmp/`` through the 0711 prefix) exist.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Optional

from cryptoffload.owned_tmp import remove_stale
from cryptoffload.procfs import is_running, read_proc_stat
from cryptoffload.private_files import private_dir

PREFIX_NAME = "cryptoffload-nginx-"
OWNER_FILE = "owner"
TLS_DIR = "tls"
#: A folder without an owner file younger than this may be one being made right now.
UNOWNED_GRACE_S = 60.0


def create_prefix(root: Optional[Path] = None) -> Path:
    """A fresh prefix folder (``logs/``, ``tmp/``, ``tls/`` 0700) with its owner recorded,
    after removing the stale folders of dead owners under the same root."""
    remove_stale_prefixes(root)
    prefix = Path(tempfile.mkdtemp(prefix=PREFIX_NAME, dir=root))
    me = read_proc_stat(os.getpid())
    (prefix / OWNER_FILE).write_text(f"{os.getpid()} {me.starttime if me else -1}\n", encoding="ascii")
    # Workers (maybe not our uid) must reach tmp/; the key's folder stays ours alone.
    os.chmod(prefix, 0o711)
    for sub in ("logs", "tmp"):
        (prefix / sub).mkdir()
    (prefix / TLS_DIR).mkdir(mode=0o700)
    os.chmod(prefix / TLS_DIR, 0o700)  # exact, whatever the umask
    private_dir(prefix / TLS_DIR, "nginx TLS key", create=False)  # and no other user can replace it
    return prefix


def _pid_in(path: Path) -> Optional[list[int]]:
    try:
        return [int(x) for x in path.read_text(encoding="ascii").split()]
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def prefix_in_use(prefix: Path) -> bool:
    """True while the folder's owner or its nginx master may still use it."""
    master = _pid_in(prefix / "nginx.pid")
    if master and is_running(master[0]):
        return True
    owner = _pid_in(prefix / OWNER_FILE)
    if owner is None or len(owner) != 2:
        # made before owners were recorded, or being made this instant: stale only when old
        # and without a running master (checked above)
        try:
            age = time.time() - prefix.lstat().st_mtime
        except OSError:
            return True
        return age < UNOWNED_GRACE_S
    pid, start = owner
    return is_running(pid, start if start >= 0 else None)


def remove_stale_prefixes(root: Optional[Path] = None) -> list[Path]:
    """Remove prefix folders under ``root`` (default: the system temporary folder) that belong
    to this user and to no running process; returns what was removed. Anything else (another
    user's folder, a symlink, a folder in use) is left alone."""
    return remove_stale(PREFIX_NAME, root, prefix_in_use)
