"""Atomic writes and JSON conversion: all or nothing, exact modes, clear user errors for a bad
target, and standard JSON out of numpy values."""

from __future__ import annotations

import json
import math
import os
import stat
from pathlib import Path

import numpy as np
import pytest

from cryptoffload.errors import CryptoffloadError, OutputError
from cryptoffload.io import PRIVATE, atomic_write, atomic_writer, json_safe, write_json


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_write_replaces_and_returns_the_path(tmp_path: Path) -> None:
    p = tmp_path / "a.txt"
    assert atomic_write(p, "one\n") == p
    atomic_write(p, b"two")
    assert p.read_bytes() == b"two"
    assert _leftovers(tmp_path) == []


def test_private_mode_is_exact_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        atomic_write(tmp_path / "k", "secret", mode=PRIVATE)
        atomic_write(tmp_path / "pub", "public")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "k").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "pub").stat().st_mode) == 0o666  # ordinary file, umask 0


def test_failure_in_the_middle_leaves_the_old_file(tmp_path: Path) -> None:
    p = tmp_path / "a.txt"
    p.write_text("old")
    with pytest.raises(RuntimeError, match="boom"):  # the caller's error passes through unchanged
        with atomic_writer(p, text=True) as fh:
            fh.write("half of the new")
            raise RuntimeError("boom")
    assert p.read_text() == "old"
    assert _leftovers(tmp_path) == []


def test_a_folder_target_is_a_user_error_naming_path_and_fix(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match=f"cannot write {tmp_path}: it is a folder; give a file name"):
        atomic_write(tmp_path, "x")


def test_a_missing_parent_is_a_user_error(tmp_path: Path) -> None:
    target = tmp_path / "nope" / "a.txt"
    with pytest.raises(OutputError, match="the folder .*nope does not exist; create it first"):
        atomic_write(target, "x")
    assert not (tmp_path / "nope").exists()
    (tmp_path / "file").write_text("")
    with pytest.raises(OutputError, match="is not a folder"):
        atomic_write(tmp_path / "file" / "a.txt", "x")


def test_no_overwrite_refuses_an_existing_file(tmp_path: Path) -> None:
    p = tmp_path / "key"
    atomic_write(p, "first", overwrite=False)
    with pytest.raises(OutputError, match="exists; refusing to overwrite"):
        atomic_write(p, "second", overwrite=False)
    assert p.read_text() == "first"
    assert _leftovers(tmp_path) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder_is_a_user_error(tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o500)
    try:
        with pytest.raises(OutputError, match="cannot write .*Permission denied"):
            atomic_write(ro / "a", "x")
    finally:
        ro.chmod(0o700)


def test_output_errors_are_user_errors() -> None:
    assert issubclass(OutputError, CryptoffloadError)


def test_json_safe_gives_standard_json() -> None:
    obj = {1: np.float64(0.5), "a": np.arange(3, dtype=np.int32), "t": (np.int64(2), math.nan),
           "p": Path("x/y"), "m": np.array([[1.0, np.inf]]), "s": "ok", "n": None}
    safe = json_safe(obj)
    assert safe == {"1": 0.5, "a": [0, 1, 2], "t": [2, None], "p": "x/y", "m": [[1.0, None]], "s": "ok", "n": None}
    assert type(safe["1"]) is float and type(safe["a"][0]) is int
    json.dumps(safe, allow_nan=False)


def test_write_json(tmp_path: Path) -> None:
    p = write_json(tmp_path / "r.json", {"x": np.float32(1.5)}, mode=PRIVATE)
    assert json.loads(p.read_text()) == {"x": 1.5} and p.read_text().endswith("\n")
    assert stat.S_IMODE(p.stat().st_mode) == 0o600


def test_a_full_disk_is_a_user_error_and_leaves_the_old_file(tmp_path: Path, monkeypatch) -> None:
    import errno

    p = tmp_path / "a.txt"
    p.write_text("old")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OutputError, match=f"cannot write {p}: No space left on device"):
        atomic_write(p, "new")
    assert p.read_text() == "old"
    assert _leftovers(tmp_path) == []


def test_output_paths_checked_before_any_work(tmp_path: Path) -> None:
    """check_output_file/folder refuse what atomic_write would refuse at the end of a long run."""
    from cryptoffload.io import check_output_file, check_output_folder

    (tmp_path / "afile").write_text("x")
    (tmp_path / "adir").mkdir()
    assert check_output_file(tmp_path / "new.json") == tmp_path / "new.json"
    assert check_output_file(tmp_path / "a" / "b" / "new.json", create_parents=True)
    for bad, kw, needle in ((tmp_path / "adir", {}, "folder"), (tmp_path / "missing" / "x", {}, "does not exist"),
                            (tmp_path / "afile" / "x", {}, "is not a folder"),
                            (tmp_path / "afile" / "x" / "y", {"create_parents": True}, "is a file"),
                            (tmp_path / "afile", {"overwrite": False}, "exists")):
        with pytest.raises(OutputError, match=needle):
            check_output_file(bad, **kw)
    assert check_output_folder(tmp_path / "adir") and check_output_folder(tmp_path / "new" / "deeper")
    for bad in (tmp_path / "afile", tmp_path / "afile" / "sub"):
        with pytest.raises(OutputError, match="is a file"):
            check_output_folder(bad)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir", "afile"]  # nothing created
