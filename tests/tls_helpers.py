"""What the TLS tests need from the machine, found once: nginx (looked up the way the app looks
it up), the clients that fetch from it, and whether this kernel has the tls ULP; and which nginx
servers this test process started."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from cryptoffload.apps.tls.nginx import find_nginx
from cryptoffload.apps.tls.prefix import OWNER_FILE
from cryptoffload.errors import BackendUnavailable

try:
    find_nginx()
    WHY_NO_NGINX = ""
except BackendUnavailable as exc:
    WHY_NO_NGINX = str(exc)
HAVE_NGINX = not WHY_NO_NGINX

needs_nginx = pytest.mark.skipif(not HAVE_NGINX, reason=f"nginx not installed: {WHY_NO_NGINX}")
needs_tools = pytest.mark.skipif(not all(shutil.which(t) for t in ("curl", "wget", "wrk")),
                                 reason="curl, wget and wrk are needed")


def _available_ulp() -> list[str]:
    try:
        return Path("/proc/sys/net/ipv4/tcp_available_ulp").read_text().split()
    except OSError:
        return []


KERNEL_HAS_TLS = "tls" in _available_ulp() or Path("/proc/net/tls_stat").exists()


def started_here(cmdline: list[str]) -> bool:
    """The nginx with this command line runs in a prefix folder whose owner is this process
    (other test workers, and other people's runs, have nginx servers of their own on the same
    machine)."""
    try:
        owner = Path(cmdline[cmdline.index("-p") + 1]) / OWNER_FILE
        return int(owner.read_text(encoding="ascii").split()[0]) == os.getpid()
    except (OSError, ValueError, IndexError):
        return False
