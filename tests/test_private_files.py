"""Secrets only from what we own: every way another user could plant or swap a private file or
folder, tried as that user would, is refused with one line naming the path, the fault and the
fix; what we make ourselves passes."""

from __future__ import annotations

import os
import shutil
import stat
from typing import Iterator
from pathlib import Path

import pytest

from attacker_helpers import ATTACKER, PLAIN_USER, as_plain_user, planted_dir, planted_file, root_only, shared_tmp
from cryptoffload import private_files as pf
from cryptoffload.errors import ConfigError, OutputError

SECRET = "alice.c2VjcmV0LXRva2VuLXZhbHVl"


def _one_line(exc: pytest.ExceptionInfo[BaseException]) -> str:
    text = str(exc.value)
    assert "\n" not in text
    return text


def _mine(path: Path, text: str = SECRET) -> Path:
    return pf.write_private(path, text, "test token")


# -- what we make passes ----------------------------------------------------------------------


def test_a_folder_we_make_is_private_and_its_files_0600_whatever_the_umask(tmp_path: Path) -> None:
    folder = tmp_path / "a" / "b" / "keys"
    old = os.umask(0)
    try:
        assert pf.private_dir(folder, "test key") == folder
        _mine(folder / "t.token")
    finally:
        os.umask(old)
    for p in (tmp_path / "a", tmp_path / "a" / "b", folder):
        assert stat.S_IMODE(p.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "t.token").stat().st_mode) == 0o600
    assert pf.read_private(folder / "t.token", "test token", max_bytes=100) == SECRET.encode()
    assert pf.private_dir(folder, "test key") == folder  # an existing one of ours: reused
    assert [p.name for p in folder.iterdir()] == ["t.token"]  # no temporary file left


def test_write_private_streams_chunks_into_one_private_file(tmp_path: Path) -> None:
    """A file too large to hold twice (a key file) is written from chunks, still 0600 from
    creation and linked into place only once whole: a generator that fails midway leaves
    nothing behind."""
    path = pf.write_private(tmp_path / "big", (bytes([i]) * 1000 for i in range(5)), "test key")
    assert path.read_bytes() == b"".join(bytes([i]) * 1000 for i in range(5))
    assert path.stat().st_mode & 0o777 == 0o600

    def failing() -> Iterator[bytes]:
        yield b"half"
        raise RuntimeError("the source failed")

    with pytest.raises(RuntimeError, match="the source failed"):
        pf.write_private(tmp_path / "half", failing(), "test key")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big"]


def test_write_private_never_overwrites_unless_asked_and_never_through_a_link(tmp_path: Path) -> None:
    path = _mine(tmp_path / "t")
    with pytest.raises(OutputError, match="exists; refusing to overwrite"):
        _mine(path, "other")
    victim = tmp_path / "victim"
    victim.write_text("precious")
    link = tmp_path / "link"
    link.symlink_to(victim)
    with pytest.raises(OutputError, match="exists"):
        _mine(link)
    pf.write_private(link, "new", "test token", overwrite=True)  # the link is replaced, not its target
    assert not link.is_symlink() and link.read_text() == "new" and victim.read_text() == "precious"
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(OutputError, match="exists"):
        _mine(dangling)
    assert not (tmp_path / "nowhere").exists()


# -- a folder or file another user made ---------------------------------------------------------


@root_only
def test_a_folder_another_user_made_is_refused_even_as_root(tmp_path: Path) -> None:
    keys = planted_dir(tmp_path / "keys")  # 0700: the mode alone looked fine
    for create in (True, False):
        with pytest.raises(ConfigError) as exc:
            pf.private_dir(keys, "CSP key", create=create)
        line = _one_line(exc)
        assert f"the CSP key folder {keys} belongs to uid {ATTACKER}, not to you (uid 0 (root))" in line
        assert "remove it and let cryptoffload create it" in line and f"chown -R 0 {keys}" in line


@root_only
def test_a_token_another_user_wrote_is_refused_though_0600(tmp_path: Path) -> None:
    token = planted_file(tmp_path / "platform.token", SECRET)
    with pytest.raises(ConfigError) as exc:
        pf.read_private(token, "platform token", max_bytes=100)
    line = _one_line(exc)
    assert f"the platform token file {token} belongs to uid {ATTACKER}" in line and "remove it" in line


@root_only
def test_a_folder_above_owned_by_another_user_is_refused(tmp_path: Path) -> None:
    mine = pf.private_dir(tmp_path / "theirs" / "keys", "test key")
    _mine(mine / "t")
    theirs = planted_dir(tmp_path / "theirs", mode=0o755)  # its owner can swap the entries, ours among them
    with pytest.raises(ConfigError, match=f"lies in {theirs}, which belongs to uid {ATTACKER}"):
        pf.private_dir(mine, "test key")
    with pytest.raises(ConfigError, match=f"lies in {theirs}, which belongs to uid {ATTACKER}"):
        pf.read_private(mine / "t", "test token", max_bytes=100)


def test_as_a_plain_user_a_folder_root_made_is_not_ours(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same rule for a user who is not root: a folder owned by anyone else (here: the user
    running the tests, seen by uid 23456) is refused; root's folders above are trusted."""
    keys = tmp_path / "keys"
    pf.private_dir(keys, "test key")
    me = os.geteuid()
    monkeypatch.setattr(pf, "_euid", lambda: 23456)
    with pytest.raises(ConfigError, match=f"belongs to uid {me}.*not to you .uid 23456"):
        pf.private_dir(keys, "test key")
    if me == 0:  # root's folders above (/tmp, pytest's) stay trusted for the plain user
        pf.check_folders_above(tmp_path, "test")


@root_only
def test_a_real_plain_user_gets_the_same_rule() -> None:
    """Not root: a folder another user (or root) made, or a token root wrote into our folder,
    is refused naming its owner; our own folder and token pass."""
    base = shared_tmp("private-files-")
    try:
        theirs = planted_dir(base / "theirs")
        roots = base / "roots"
        roots.mkdir(mode=0o700)
        mine = planted_dir(base / "mine", uid=PLAIN_USER)
        planted_file(mine / "root.token", SECRET, uid=0)

        def own_token() -> None:
            _mine(mine / "t")
            assert pf.read_private(mine / "t", "test token", max_bytes=100) == SECRET.encode()

        assert as_plain_user(PLAIN_USER, own_token) == "ok"
        assert (mine / "t").stat().st_uid == PLAIN_USER
        refused = as_plain_user(PLAIN_USER, lambda: pf.private_dir(theirs, "test key"))
        assert f"belongs to uid {ATTACKER}, not to you (uid {PLAIN_USER})" in refused, refused
        refused = as_plain_user(PLAIN_USER, lambda: pf.private_dir(roots, "test key"))
        assert "belongs to uid 0 (root), not to you" in refused, refused
        refused = as_plain_user(PLAIN_USER, lambda: pf.read_private(mine / "root.token", "test token", max_bytes=99))
        assert f"the test token file {mine / 'root.token'} belongs to uid 0 (root)" in refused, refused
    finally:
        shutil.rmtree(base)


# -- modes -----------------------------------------------------------------------------------


def test_a_group_writable_folder_or_an_open_file_is_refused_with_the_chmod(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    keys.mkdir()
    keys.chmod(0o770)
    with pytest.raises(ConfigError) as exc:
        pf.private_dir(keys, "test key")
    assert _one_line(exc) == f"the test key folder {keys} is open to others (mode 0770); run: chmod 700 {keys}"
    keys.chmod(0o700)
    token = _mine(keys / "t")
    for mode in (0o640, 0o604, 0o620, 0o601):
        token.chmod(mode)
        with pytest.raises(ConfigError, match=f"open to others .mode {mode:04o}.; run: chmod 600 {token}"):
            pf.read_private(token, "test token", max_bytes=100)


@pytest.mark.parametrize("mode, refused", [(0o777, "others"), (0o775, "its group"), (0o1777, None),
                                           (0o755, None)])
def test_a_parent_others_can_write_is_refused_unless_sticky(tmp_path: Path, mode: int, refused: str | None) -> None:
    parent = tmp_path / "shared"
    parent.mkdir()
    keys = pf.private_dir(parent / "keys", "test key")
    token = _mine(keys / "t")
    parent.chmod(mode)
    if refused is None:  # /tmp's case: only a file's owner may rename or remove it there
        pf.private_dir(keys, "test key")
        assert pf.read_private(token, "test token", max_bytes=100) == SECRET.encode()
        return
    for call in (lambda: pf.private_dir(keys, "test key"), lambda: pf.private_dir(parent / "new", "test key"),
                 lambda: pf.read_private(token, "test token", max_bytes=100)):
        with pytest.raises(ConfigError) as exc:
            call()
        expected = f"lies in {parent}, which is writable by {refused} (mode {mode:04o}) without the sticky bit"
        assert expected in _one_line(exc)
    assert not (parent / "new").exists()  # refused before anything was made


# -- links -----------------------------------------------------------------------------------


def test_a_linked_key_file_is_refused_not_followed(tmp_path: Path) -> None:
    theirs = tmp_path / "attacker.token"
    theirs.write_text(SECRET)  # a file the attacker controls
    theirs.chmod(0o600)
    keys = pf.private_dir(tmp_path / "keys", "test key")
    (keys / "t").symlink_to(theirs)
    with pytest.raises(ConfigError) as exc:
        pf.read_private(keys / "t", "test token", max_bytes=100)
    assert f"the test token file {keys / 't'} is a symbolic link (to {theirs}); refusing to follow it" in _one_line(exc)


def test_a_linked_folder_is_refused(tmp_path: Path) -> None:
    real = pf.private_dir(tmp_path / "real", "test key")
    link = tmp_path / "keys"
    link.symlink_to(real)
    with pytest.raises(ConfigError) as exc:
        pf.private_dir(link, "test key")
    assert f"the test key folder {link} is a symbolic link (to {real})" in _one_line(exc)


def test_a_link_on_the_way_is_judged_by_both_its_folder_and_its_target(tmp_path: Path) -> None:
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    safe = pf.private_dir(tmp_path / "safe", "test key")
    _mine(safe / "t")
    (open_dir / "via").symlink_to(safe)       # a link in a folder others can write: they can retarget it
    open_dir.chmod(0o777)
    with pytest.raises(ConfigError, match=f"lies in {open_dir}, which is writable by others"):
        pf.read_private(open_dir / "via" / "t", "test token", max_bytes=100)
    (tmp_path / "fine").symlink_to(open_dir)  # a link of ours into a folder others can write
    with pytest.raises(ConfigError, match=f"lies in {open_dir}, which is writable by others"):
        pf.private_dir(tmp_path / "fine" / "keys", "test key")
    (tmp_path / "home").symlink_to(safe)      # a link of ours to a folder of ours: fine
    assert pf.read_private(tmp_path / "home" / "t", "test token", max_bytes=100) == SECRET.encode()


def test_a_folder_swapped_for_a_link_between_check_and_open_is_caught(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    keys = pf.private_dir(tmp_path / "keys", "test key")
    _mine(keys / "t")
    attacker = tmp_path / "attacker"
    attacker.mkdir()
    (attacker / "t").write_text("planted.by-the-attacker-0000")
    (attacker / "t").chmod(0o600)
    real_realpath = os.path.realpath

    def swap_after_resolving(p: str | os.PathLike[str]) -> str:
        resolved = real_realpath(p)
        if Path(resolved) == keys and keys.is_dir() and not keys.is_symlink():
            keys.rename(tmp_path / "moved")  # the attacker's move, in the window after the path was resolved
            keys.symlink_to(attacker)
        return resolved

    monkeypatch.setattr(pf.os.path, "realpath", swap_after_resolving)
    with pytest.raises(ConfigError, match=f"the folder {keys} of the test token file {keys / 't'} is a symbolic "
                                          f"link .to {attacker}.; refusing to follow it"):
        pf.read_private(keys / "t", "test token", max_bytes=100)


def test_a_descriptor_of_a_private_folder_keeps_naming_the_folder_that_was_checked(tmp_path: Path) -> None:
    keys = pf.private_dir(tmp_path / "keys", "test key")
    _mine(keys / "t")
    with pf.open_private_dir(keys, "test key") as fd:
        keys.rename(tmp_path / "moved")
        keys.mkdir()
        (keys / "t").write_text("planted")
        assert os.open("t", os.O_RDONLY, dir_fd=fd) >= 0  # still the checked folder's own file
        assert os.stat("t", dir_fd=fd).st_ino == (tmp_path / "moved" / "t").stat().st_ino


# -- a file checked after another reader opened it (Paillier keys) -------------------------------


def test_check_private_wants_the_paths_own_entry(tmp_path: Path) -> None:
    path = _mine(tmp_path / "k")
    st = os.stat(path)
    pf.check_private(path, st, "private key")
    link = tmp_path / "link"
    link.symlink_to(path)
    with pytest.raises(ConfigError, match="is a symbolic link"):
        pf.check_private(link, os.stat(link), "private key")
    other = _mine(tmp_path / "other")
    with pytest.raises(ConfigError, match="was replaced while it was read"):
        pf.check_private(path, os.stat(other), "private key")


def test_not_a_regular_file_or_missing(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo", 0o600)
    with pytest.raises(ConfigError, match="not a regular file .it is a FIFO"):
        pf.read_private(tmp_path / "fifo", "test token", max_bytes=100)
    with pytest.raises(ConfigError, match="cannot read the test token file .*No such file"):
        pf.read_private(tmp_path / "missing", "test token", max_bytes=100)
    with pytest.raises(ConfigError, match="cannot open the folder"):
        pf.read_private(tmp_path / "nodir" / "t", "test token", max_bytes=100)
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="is not a folder"):
        pf.private_dir(tmp_path / "file", "test key")
