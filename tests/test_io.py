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

from cryptoffload.errors import CryptoffloadError, InputError, OutputError
from cryptoffload.io import (PRIVATE, atomic_write, atomic_writer, check_not_input, json_safe, open_input, read_input,
                             read_input_stat, read_input_text, same_file, write_json)


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


def test_read_input_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    """The attack: `paillier encrypt --in FIFO` hung for ever. The open does not block and the
    FIFO is refused (a thread with a timeout, so a regression fails instead of hanging)."""
    import threading

    os.mkfifo(tmp_path / "fifo")
    result: list[BaseException] = []

    def read() -> None:
        try:
            read_input(tmp_path / "fifo", "data file")
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            result.append(exc)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(10)
    assert not t.is_alive(), "read_input blocked on a FIFO"
    assert isinstance(result[0], InputError) and "not a regular file (it is a FIFO" in str(result[0])
    with pytest.raises(InputError, match="not a regular file"):
        open_input(tmp_path / "fifo", "log")


def test_read_input_refuses_devices_folders_missing_and_large_files(tmp_path: Path) -> None:
    """The attack: `paillier decrypt --in /dev/zero` read until the memory ran out."""
    with pytest.raises(InputError, match="/dev/zero is not a regular file"):
        read_input("/dev/zero", "ciphertext file")
    with pytest.raises(InputError, match="is a folder"):
        read_input(tmp_path, "data file")
    with pytest.raises(InputError, match="cannot read data file .*missing"):
        read_input(tmp_path / "missing", "data file")
    (tmp_path / "big").write_bytes(b"x" * 101)
    with pytest.raises(InputError, match="is 101 bytes; a data file is at most 100"):
        read_input(tmp_path / "big", "data file", max_bytes=100)
    assert read_input(tmp_path / "big", "data file", max_bytes=101) == b"x" * 101
    with pytest.raises(OutputError, match="is 101 bytes"):
        read_input(tmp_path / "big", "data file", max_bytes=100, error=OutputError)
    assert issubclass(InputError, CryptoffloadError)


def test_read_input_stops_at_the_ceiling_when_the_size_lies(tmp_path: Path, monkeypatch) -> None:
    """A file that grows while read (or whose size the file system under-reports) is read to
    the ceiling plus one byte, never further."""
    (tmp_path / "f").write_bytes(b"y" * 1000)
    real_fstat = os.fstat

    def small_fstat(fd):
        st = real_fstat(fd)
        return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid, st.st_gid, 10,
                               st.st_atime, st.st_mtime, st.st_ctime))

    monkeypatch.setattr(os, "fstat", small_fstat)
    with pytest.raises(InputError, match="grew past 100 bytes"):
        read_input(tmp_path / "f", "data file", max_bytes=100)


def test_read_input_text_and_stat(tmp_path: Path) -> None:
    (tmp_path / "t").write_bytes("\ufeffé\n".encode())
    assert read_input_text(tmp_path / "t", "text", encoding="utf-8-sig") == "é\n"
    data, st = read_input_stat(tmp_path / "t", "text")
    assert len(data) == st.st_size == 6 and stat.S_ISREG(st.st_mode)
    (tmp_path / "l").write_bytes(b"a\xe9")
    with pytest.raises(InputError, match="not UTF-8 text \\(byte 1\\)"):
        read_input_text(tmp_path / "l", "text")
    with open_input(tmp_path / "t", "text") as fh:
        assert fh.read() == "\ufeffé\n".encode()


@pytest.mark.parametrize("how", ["same", "dotdot", "symlink", "hardlink", "new-through-symlinked-folder"])
def test_no_output_is_an_input(tmp_path: Path, how: str) -> None:
    """The attack: `encrypt --key k.json --out k.json` replaced the private key by ciphertexts."""
    key = tmp_path / "k.json"
    key.write_text("key")
    (tmp_path / "sub").mkdir()
    if how == "symlink":
        os.symlink(key, tmp_path / "out")
    elif how == "hardlink":
        os.link(key, tmp_path / "out")
    elif how == "new-through-symlinked-folder":
        os.symlink(tmp_path, tmp_path / "alias")
    out = {"same": key, "dotdot": tmp_path / "sub" / ".." / "k.json", "symlink": tmp_path / "out",
           "hardlink": tmp_path / "out", "new-through-symlinked-folder": tmp_path / "alias" / "k.json"}[how]
    assert same_file(out, key)
    with pytest.raises(OutputError, match=f"--out {out} is the same file as --key {key}.*choose another --out"):
        check_not_input("--out", out, [("--in", tmp_path / "other"), ("--key", key)])
    check_not_input("--out", tmp_path / "new", [("--key", key), ("--in", None)])
    check_not_input("--out", None, [("--key", key)])
    assert not same_file(tmp_path / "new", key)
