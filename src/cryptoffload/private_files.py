"""Secrets only from what we own: the one rule for every file holding a key, a token or a TLS
key, and for every folder kept for such files.

Why ownership and not only modes: a mode says what a file's owner lets others do, not who the
owner is. A ``--key-dir`` made beforehand by another user with mode 0700 passed a mode check,
and whoever had planted its tokens became the platform and the buyer -- as root (a container)
nothing even stopped us from using it. And why the folders above: whoever may write a folder
may rename what it holds and put their own file or folder, or a link, under the same name.

The rule, applied by every reader and writer of a secret in the project:

* a **private file** (a private key, a token, a TLS key, a CKKS secret context) is a regular
  file owned by the running user (the effective uid -- also when that is root: a file root did
  not make is not root's), open to nobody else (0600), and reached without following a
  symbolic link (``O_NOFOLLOW`` on the file itself);
* the folder holding it, and every folder above, belongs to the running user or to root and
  is writable by others only with the sticky bit (as ``/tmp``: there only a file's owner may
  rename or remove it) -- checked on the path as written (a link's name lives in its folder)
  and as resolved (a link's target decides where the names live);
* a **private folder** (``--key-dir``, ``--token-dir``, a server's temporary folder) is in
  addition the running user's own, 0700, and not a symbolic link itself.

Files are opened relative to a descriptor of their folder, which is opened without following a
link and checked on that descriptor: a folder swapped for a link (or another folder) between
the check and the open is caught, and what was checked is what is read. A refusal is one line
naming the path, what is wrong (owner, mode, link) and the fix.
"""

from __future__ import annotations

import errno
import os
import pwd
import secrets
import shlex
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

from cryptoffload.errors import ConfigError, CryptoffloadError, OutputError
from cryptoffload.io import PRIVATE, check_regular, read_descriptor

#: mode of a private folder: its owner alone may list, enter or change it
PRIVATE_DIR = 0o700
_OTHERS = 0o077  # any access by the group or by others
_OTHERS_WRITE = 0o022  # writing by the group or by others

Error = type[CryptoffloadError]
PathLike = str | os.PathLike[str]


def _euid() -> int:
    """The user the rule protects (tests stand in another one here)."""
    return os.geteuid()


def who(uid: int) -> str:
    """``uid 12345 (alice)``: an owner as the messages name it."""
    try:
        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except KeyError:
        return f"uid {uid}"


def _mode(st: os.stat_result) -> str:
    return f"mode {stat.S_IMODE(st.st_mode):04o}"


def _q(path: PathLike) -> str:
    return shlex.quote(str(path))


# -- the folders on the way -------------------------------------------------------------------


def _untrusted(st: os.stat_result) -> str | None:
    """Why someone else could rename or replace what a folder holds; None when only we or root
    can (root can do anything anyway: trusting root costs nothing)."""
    if st.st_uid not in (0, _euid()):
        return f"belongs to {who(st.st_uid)}"
    if st.st_mode & _OTHERS_WRITE and not st.st_mode & stat.S_ISVTX:
        by = "others" if st.st_mode & 0o002 else "its group"
        return f"is writable by {by} ({_mode(st)}) without the sticky bit"
    return None


def _refuse_folder(folder: Path, st: os.stat_result, problem: str, target: str, error: Error) -> CryptoffloadError:
    if st.st_uid == _euid():
        fix = f"run: chmod go-w {_q(folder)}, or keep it under folders only you (or root) can write"
    else:
        fix = "keep it under folders only you (or root) can write (e.g. in your home folder)"
    return error(f"{target} lies in {folder}, which {problem}: whoever can write there could replace it with "
                 f"their own; {fix}")


def _folders_above(folder: Path) -> list[Path]:
    """``folder`` and every folder above it, as resolved (first: the messages name real
    folders) and as written (made absolute, links kept)."""
    out: list[Path] = []
    for p in (Path(os.path.realpath(folder)), Path(os.path.abspath(folder))):
        for q in (p, *p.parents):
            if q not in out:
                out.append(q)
    return out


def check_folders_above(folder: PathLike, target: str, error: Error = ConfigError) -> None:
    """Refuse ``target`` (``"the CSP key folder /k"``: a private file or folder in ``folder``)
    when ``folder`` or a folder above it lets another user replace it: owned by someone else
    than us or root, or writable by others without the sticky bit. Folders not made yet are
    skipped (we make them, ours)."""
    for q in _folders_above(Path(folder)):
        try:
            st = os.stat(q)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise error(f"cannot check the folder {q} above {target}: {exc.strerror}") from None
        problem = _untrusted(st)
        if problem:
            raise _refuse_folder(q, st, problem, target, error)


def _open_folder(path: Path, label: str, error: Error) -> int:
    """A descriptor of the folder ``path`` itself: a link in its place is refused, not followed."""
    try:
        return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if os.path.islink(path):
            raise error(f"{label} is a symbolic link (to {os.readlink(path)}); refusing to follow it: name the "
                        "folder itself, or remove the link and let cryptoffload create the folder") from None
        if exc.errno == errno.ENOTDIR:
            raise error(f"{label} is not a folder; remove it or choose another path") from None
        raise error(f"cannot open {label}: {exc.strerror}") from None


# -- private folders --------------------------------------------------------------------------


def _check_private_dir(st: os.stat_result, path: Path, what: str, error: Error) -> None:
    me = _euid()
    if st.st_uid != me:
        raise error(f"the {what} folder {path} belongs to {who(st.st_uid)}, not to you ({who(me)}): whoever made it "
                    f"can read its secrets or plant their own; remove it and let cryptoffload create it, or, if it "
                    f"is yours, run as root: chown -R {me} {_q(path)}")
    if st.st_mode & _OTHERS:
        raise error(f"the {what} folder {path} is open to others ({_mode(st)}); run: chmod 700 {_q(path)}")


def _make_private_dir(path: Path, what: str, error: Error) -> None:
    """Make the missing folders of ``path`` (0700), once the nearest existing one above is
    trusted; one that appears meanwhile is checked afterwards like any existing folder."""
    missing: list[Path] = []
    probe = Path(os.path.abspath(path))
    while not os.path.lexists(probe) and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    if not missing:
        return  # there: judged as it is
    check_folders_above(probe, f"the {what} folder {path}", error)
    for p in reversed(missing):
        try:
            os.mkdir(p, PRIVATE_DIR)
        except FileExistsError:
            pass
        except OSError as exc:
            raise error(f"cannot create the {what} folder {path}: {exc.strerror}") from None


@contextmanager
def open_private_dir(path: PathLike, what: str, *, error: Error = ConfigError) -> Iterator[int]:
    """A descriptor of the private folder ``path`` (``what``: "CSP key" names it in messages),
    opened without following a link and checked on the descriptor: ours, 0700, under folders
    only we or root can write."""
    path = Path(path)
    try:
        seen = os.lstat(path)
    except OSError:
        seen = None
    if seen is not None and stat.S_ISDIR(seen.st_mode):
        _check_private_dir(seen, path, what, error)  # names the owner even of a folder we may not open
    fd = _open_folder(path, f"the {what} folder {path}", error)
    try:
        _check_private_dir(os.fstat(fd), path, what, error)  # the check that counts: on what was opened
        check_folders_above(path.parent, f"the {what} folder {path}", error)
        yield fd
    finally:
        os.close(fd)


def private_dir(path: PathLike, what: str, *, create: bool = True, error: Error = ConfigError) -> Path:
    """``path`` as a private folder (made 0700 when missing and ``create``); a folder another
    user made, one open to others, a link, or one under a folder others can write is refused
    with the fix. Returns the path."""
    path = Path(path)
    if create:
        _make_private_dir(path, what, error)
    with open_private_dir(path, what, error=error):
        pass
    return path


# -- private files ----------------------------------------------------------------------------


@contextmanager
def _open_holder(path: Path, what: str, error: Error) -> Iterator[int]:
    """A descriptor of the folder holding the private file ``path``: opened on its resolved path
    without following a link (a swap after resolving is caught), checked on the descriptor."""
    holder = path.parent
    target = f"the {what} file {path}"
    real = Path(os.path.realpath(holder))
    check_folders_above(holder, target, error)  # names the owner even of a folder we may not open
    fd = _open_folder(real, f"the folder {holder} of {target}", error)
    try:
        st = os.fstat(fd)
        problem = _untrusted(st)
        if problem:
            raise _refuse_folder(holder, st, problem, target, error)
        yield fd
    finally:
        os.close(fd)


def _refuse_link(path: Path, link: str, what: str, error: Error) -> CryptoffloadError:
    return error(f"the {what} file {path} is a symbolic link (to {link}); refusing to follow it: give the file "
                 "itself, or replace the link by the file (mode 0600)")


def _check_private_stat(st: os.stat_result, path: Path, what: str, error: Error, readable: bool = False) -> None:
    check_regular(st, path, f"the {what} file", error)
    me = _euid()
    if st.st_uid != me:
        raise error(f"the {what} file {path} belongs to {who(st.st_uid)}, not to you ({who(me)}): whoever wrote it "
                    f"chose the secret; remove it (cryptoffload makes a new one where it issues them), or, if it is "
                    f"yours, run as root: chown {me} {_q(path)}")
    if readable and st.st_mode & _OTHERS_WRITE:
        raise error(f"the {what} file {path} is writable by others ({_mode(st)}); run: chmod 644 {_q(path)}")
    if not readable and st.st_mode & _OTHERS:
        raise error(f"the {what} file {path} is open to others ({_mode(st)}); run: chmod 600 {_q(path)}")


@contextmanager
def open_private(path: PathLike, what: str, *, error: Error = ConfigError,
                 readable: bool = False) -> Iterator[tuple[int, os.stat_result]]:
    """The private file ``path`` open for reading (``what``: "platform token" names it in
    messages), with its status: opened relative to its checked folder with ``O_NOFOLLOW``, and
    checked on the descriptor (a regular file, ours, 0600). ``readable``: a file that is no
    secret but decides whom we trust (a CA certificate) -- the same rule, except that others
    may read it (0644); nobody else may write it."""
    path = Path(path)
    with _open_holder(path, what, error) as dir_fd:
        try:
            fd = os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _refuse_link(path, os.readlink(path.name, dir_fd=dir_fd), what, error) from None
            if exc.errno == errno.EACCES:  # not ours to read: say whose it is
                _check_private_stat(os.stat(path.name, dir_fd=dir_fd, follow_symlinks=False), path, what, error,
                                    readable)
            raise error(f"cannot read the {what} file {path}: {exc.strerror}") from None
        try:
            st = os.fstat(fd)
            _check_private_stat(st, path, what, error, readable)
            yield fd, st
        finally:
            os.close(fd)


def read_private(path: PathLike, what: str, *, max_bytes: int, error: Error = ConfigError,
                 readable: bool = False) -> bytes:
    """The bytes of the private file ``path`` (see :func:`open_private`), at most ``max_bytes``."""
    with open_private(path, what, error=error, readable=readable) as (fd, st):
        return read_descriptor(fd, st, Path(path), f"the {what} file", max_bytes=max_bytes, error=error)


def check_private(path: PathLike, st: os.stat_result, what: str, *, error: Error = ConfigError) -> None:
    """The rule for a file another reader already opened (``st``: its ``fstat``), for files
    that are secret or not by what they hold (a Paillier key file: private or public): it must
    be ``path``'s own entry, not reached through a link, ours, 0600, in folders only we or root
    can write. Checking after the open is as good as before: only we or root could have
    changed the path meanwhile, or the folder check fails."""
    path = Path(path)
    try:
        lst = os.lstat(path)
    except OSError as exc:
        raise error(f"cannot check the {what} file {path}: {exc.strerror}") from None
    if stat.S_ISLNK(lst.st_mode):
        raise _refuse_link(path, os.readlink(path), what, error)
    if (lst.st_dev, lst.st_ino) != (st.st_dev, st.st_ino):
        raise error(f"the {what} file {path} was replaced while it was read; read it again")
    _check_private_stat(st, path, what, error)
    check_folders_above(path.parent, f"the {what} file {path}", error)


def _write_new(name: str, chunks: Iterable[bytes | memoryview], dir_fd: int) -> None:
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, PRIVATE, dir_fd=dir_fd)
    with os.fdopen(fd, "wb") as fh:
        os.fchmod(fd, PRIVATE)  # exact, whatever the umask
        for chunk in chunks:
            fh.write(chunk)
        fh.flush()
        os.fsync(fd)


def write_private(path: PathLike, data: bytes | str | Iterable[bytes | memoryview], what: str, *,
                  overwrite: bool = False, error: Error = OutputError) -> Path:
    """``data`` (text: UTF-8; or an iterable of byte chunks, for a file too large to hold
    twice in memory) as the private file ``path``, in a folder that passes the rule:
    written to a new temporary file beside it (``O_CREAT|O_EXCL|O_NOFOLLOW``, 0600 from its
    creation), flushed, then linked into place -- so it is never half written, never readable
    by others, never written through a link. An existing ``path`` is refused unless
    ``overwrite`` (then replaced by a rename, which replaces a link, never its target)."""
    path = Path(path)
    raw: Iterable[bytes | memoryview] = ([data.encode("utf-8")] if isinstance(data, str)
                                         else [data] if isinstance(data, (bytes, bytearray, memoryview)) else data)
    with _open_holder(path, what, error) as dir_fd:
        tmp = f".{path.name}.{secrets.token_hex(4)}.tmp"
        try:
            try:
                _write_new(tmp, raw, dir_fd)
            except OSError as exc:
                raise error(f"cannot write the {what} file {path}: {exc.strerror or exc}") from None
            if overwrite:
                os.replace(tmp, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            else:
                os.link(tmp, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except FileExistsError:
            raise error(f"{path} exists; refusing to overwrite it (remove it or choose another path)") from None
        except OSError as exc:
            raise error(f"cannot write the {what} file {path}: {exc.strerror or exc}") from None
        finally:
            try:
                os.unlink(tmp, dir_fd=dir_fd)
            except FileNotFoundError:
                pass
        try:
            os.fsync(dir_fd)
        except OSError:  # pragma: no cover - some file systems refuse fsync on folders
            pass
    return path
