"""Prefix folders: made private, and removed at the next start only when their owner (pid and
start time) and their nginx are gone."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from cryptoffload.apps.tls import prefix as px
from cryptoffload.procfs import read_proc_stat


def _fake(root: Path, name: str, owner: str | None = None, master: int | None = None, age_s: float = 0.0) -> Path:
    d = root / f"{px.PREFIX_NAME}{name}"
    (d / px.TLS_DIR).mkdir(parents=True)
    (d / px.TLS_DIR / "key.pem").write_text("secret")
    if owner is not None:
        (d / px.OWNER_FILE).write_text(owner)
    if master is not None:
        (d / "nginx.pid").write_text(f"{master}\n")
    if age_s:
        old = time.time() - age_s
        os.utime(d, (old, old))
    return d


def test_created_prefix_is_private_and_owned(tmp_path: Path) -> None:
    p = px.create_prefix(tmp_path)
    assert stat.S_IMODE(p.stat().st_mode) == 0o711
    assert stat.S_IMODE((p / px.TLS_DIR).stat().st_mode) == 0o700
    pid, start = map(int, (p / px.OWNER_FILE).read_text().split())
    assert pid == os.getpid() and start == read_proc_stat(os.getpid()).starttime
    assert px.prefix_in_use(p)


def test_only_folders_of_dead_owners_are_removed(tmp_path: Path) -> None:
    me = read_proc_stat(os.getpid())
    live = _fake(tmp_path, "live", owner=f"{me.pid} {me.starttime}")
    reused = _fake(tmp_path, "reused", owner=f"{me.pid} {me.starttime + 1}")  # same pid, another process
    dead_with_live_master = _fake(tmp_path, "master", owner=f"{me.pid} {me.starttime + 1}", master=os.getpid())
    old_unowned = _fake(tmp_path, "old", age_s=3600)
    fresh_unowned = _fake(tmp_path, "fresh")
    garbled = _fake(tmp_path, "garbled", owner="not a pid", age_s=3600)
    other = tmp_path / "unrelated"
    other.mkdir()
    link = tmp_path / f"{px.PREFIX_NAME}link"
    link.symlink_to(other)
    removed = px.remove_stale_prefixes(tmp_path)
    assert sorted(removed) == sorted([reused, old_unowned, garbled])
    for kept in (live, dead_with_live_master, fresh_unowned, other, link):
        assert kept.exists() or kept.is_symlink()
    assert not (reused / px.TLS_DIR / "key.pem").exists()


def test_create_prefix_cleans_first(tmp_path: Path) -> None:
    stale = _fake(tmp_path, "stale", owner="999999999 1")
    p = px.create_prefix(tmp_path)
    assert not stale.exists() and p.exists()
