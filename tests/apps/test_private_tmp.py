"""Private temporary folders: owned, and removed by the next start once their owner is gone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cryptoffload.apps._private_tmp import secrets_folder
from cryptoffload.owned_tmp import OWNER_FILE, owned_temp_dir, remove_stale
from cryptoffload.errors import ConfigError


def test_a_dead_owners_folder_is_removed_by_the_next_start(tmp_path: Path) -> None:
    mine = owned_temp_dir("srv-", tmp_path)
    assert (mine.stat().st_mode & 0o777) == 0o700
    assert (mine / OWNER_FILE).read_text().split()[0] == str(os.getpid())
    # a folder left by a process killed without cleaning up (its secrets inside)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()
    left = tmp_path / "srv-left"
    left.mkdir(mode=0o700)
    (left / OWNER_FILE).write_text(f"{dead} 1\n")
    (left / "key.pem").write_text("secret")
    other = tmp_path / "other-left"
    other.mkdir()
    (other / OWNER_FILE).write_text(f"{dead} 1\n")
    fresh_unowned = tmp_path / "srv-unowned"
    fresh_unowned.mkdir()
    link = tmp_path / "srv-link"
    link.symlink_to(other)
    second = owned_temp_dir("srv-", tmp_path)
    assert not left.exists()                              # the dead owner's, removed
    assert mine.exists() and second.exists()              # ours, in use
    assert other.exists() and fresh_unowned.exists() and link.is_symlink()
    assert remove_stale("srv-", tmp_path) == []


def test_a_named_secrets_folder_is_kept_a_temporary_one_removed(tmp_path: Path) -> None:
    named = tmp_path / "keys"
    with secrets_folder(named, "test key", "srv-") as folder:
        assert folder == named and (folder.stat().st_mode & 0o777) == 0o700
    assert named.is_dir()
    with pytest.raises(RuntimeError), secrets_folder(None, "test key", "srv-secrets-") as folder:
        assert (folder / OWNER_FILE).exists()
        raise RuntimeError("the server failed")
    assert not folder.exists()


def test_a_temporary_folder_under_a_folder_others_can_swap_it_in_is_refused(tmp_path: Path) -> None:
    """A $TMPDIR writable by all without the sticky bit lets anyone rename our folder away and
    put their own (with their tokens) in its place: no server starts there."""
    open_tmp = tmp_path / "tmp"
    open_tmp.mkdir()
    open_tmp.chmod(0o777)
    with pytest.raises(ConfigError, match=f"lies in {open_tmp}, which is writable by others .mode 0777. without "
                                          "the sticky bit"):
        owned_temp_dir("srv-", open_tmp)
    assert list(open_tmp.iterdir()) == []  # nothing left behind
    open_tmp.chmod(0o1777)  # /tmp's case
    assert owned_temp_dir("srv-", open_tmp).parent == open_tmp


def test_a_named_secrets_folder_must_pass_the_rule(tmp_path: Path) -> None:
    link = tmp_path / "keys"
    link.symlink_to(tmp_path)
    with pytest.raises(ConfigError, match="is a symbolic link"), secrets_folder(link, "test key", "srv-"):
        pass
