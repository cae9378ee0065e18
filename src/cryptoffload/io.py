"""Reading files with a ceiling, writing them so that nothing is ever half-written, and turning
results into plain JSON.

Why one reader: every file a command reads is outside input. It must be a regular file (a FIFO
would block the command for ever, /dev/zero would fill the memory) and no larger than what
that input can be, checked before a byte is parsed; :func:`read_input` does both for every
reader. And no output may be one of the command's inputs (``--out`` naming the key would replace
it): :func:`check_not_input`.

Why one module: keys, profiles, traces, results and reports are all written the same way -- to
a temporary file beside the target, flushed to disk, then renamed over it (``os.replace`` is
atomic on POSIX) -- and a crash or a bad path must never leave a truncated file, nor a secret
briefly readable by others. Every way the target can be wrong is a user error
(:class:`~cryptoffload.errors.OutputError`) that names the path and the fix.
"""

from __future__ import annotations

import json
import math
import os
import secrets
from contextlib import contextmanager
from pathlib import Path
import stat
from typing import IO, Any, Iterable, Iterator

from cryptoffload.errors import CryptoffloadError, InputError, OutputError

#: Mode of keys and of files holding keyed or plaintext data: readable by the owner only.
PRIVATE = 0o600


#: The default ceiling of an input file (data sets, traces, ciphertexts); each reader may set its own.
MAX_INPUT_BYTES = 256 * 1024 * 1024


def _open_regular(path: Path, what: str, error: type[CryptoffloadError]) -> tuple[int, os.stat_result]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO must not block the open
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    st = os.fstat(fd)
    try:
        check_regular(st, path, what, error)
    except CryptoffloadError:
        os.close(fd)
        raise
    return fd, st


def check_regular(st: os.stat_result, path: Path, what: str, error: type[CryptoffloadError]) -> None:
    """Refuse anything but a regular file (a FIFO would block a reader for ever, /dev/zero fill
    the memory), naming what it is."""
    if not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "a FIFO, a device or a socket"
        raise error(f"{what} {path} is not a regular file (it is {kind}); give a file")


def read_input(path: str | os.PathLike[str], what: str, *, max_bytes: int = MAX_INPUT_BYTES,
               error: type[CryptoffloadError] = InputError) -> bytes:
    """The bytes of the regular file ``path``; see :func:`read_input_stat`."""
    return read_input_stat(path, what, max_bytes=max_bytes, error=error)[0]


def read_input_stat(path: str | os.PathLike[str], what: str, *, max_bytes: int = MAX_INPUT_BYTES,
                    error: type[CryptoffloadError] = InputError) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file ``path`` (``what`` names it in messages: "key file"), at
    most ``max_bytes`` of them, all checked before anything is parsed: a folder, a FIFO or a
    device, a file too large (or one that grows past the ceiling while read) is refused with
    ``error``. The file is opened once and checked on its descriptor (no race with a rename);
    its status (mode, owner) comes back with the bytes."""
    path = Path(path)
    fd, st = _open_regular(path, what, error)
    try:
        return read_descriptor(fd, st, path, what, max_bytes=max_bytes, error=error), st
    finally:
        os.close(fd)


def read_descriptor(fd: int, st: os.stat_result, path: Path, what: str, *, max_bytes: int,
                    error: type[CryptoffloadError]) -> bytes:
    """The bytes of the regular file open on ``fd`` (``st``: its ``fstat``), at most
    ``max_bytes``: a file larger than that, or one that grows past it while read, is refused
    with ``error`` naming ``path``. The caller opened the file (and closes it): the readers of
    secrets (:mod:`cryptoffload.private_files`) open theirs their own way."""
    if st.st_size > max_bytes:
        raise error(f"{what} {path} is {st.st_size:,} bytes; a {what} is at most {max_bytes:,}")
    chunks, total = [], 0
    try:
        while total <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if total > max_bytes:
        raise error(f"{what} {path} grew past {max_bytes:,} bytes while read; a {what} is at most {max_bytes:,}")
    return b"".join(chunks)


def read_input_text(path: str | os.PathLike[str], what: str, *, max_bytes: int = MAX_INPUT_BYTES,
                    error: type[CryptoffloadError] = InputError, encoding: str = "utf-8") -> str:
    """:func:`read_input` decoded (``utf-8-sig`` drops a byte-order mark); bytes that are not
    text are refused naming the file and the offset."""
    data = read_input(path, what, max_bytes=max_bytes, error=error)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise error(f"{what} {path} is not {encoding.upper()} text (byte {exc.start})") from None


def open_input(path: str | os.PathLike[str], what: str, *,
               error: type[CryptoffloadError] = InputError) -> IO[bytes]:
    """A binary file object on the regular file ``path``, for readers that stream a large input
    (request logs) instead of holding it: the same refusals as :func:`read_input`, no ceiling."""
    fd, _ = _open_regular(Path(path), what, error)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether two paths name one file: the same path once ``..`` and symlinks are resolved
    (also for a file not created yet), or the same inode and device (hard links)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_not_input(out_flag: str, out: str | os.PathLike[str] | None,
                    inputs: Iterable[tuple[str, str | os.PathLike[str] | None]]) -> None:
    """Refuse, before any work starts, an output that is one of the command's inputs (through
    ``..``, a symlink or a hard link): writing it would replace the input, e.g. ``encrypt
    --key k.json --out k.json`` the private key by ciphertexts. ``inputs`` pairs each input's
    option with its path (None: not given)."""
    if out is None:
        return
    for flag, path in inputs:
        if path is not None and same_file(out, path):
            raise OutputError(f"{out_flag} {out} is the same file as {flag} {path}: writing it would destroy the "
                              f"input; choose another {out_flag} path")


def _check_target(path: Path, overwrite: bool) -> None:
    if path.is_dir():
        raise OutputError(f"cannot write {path}: it is a folder; give a file name (e.g. {path / 'out'})")
    parent = path.parent
    if not parent.is_dir():
        what = "is not a folder" if parent.exists() else "does not exist"
        raise OutputError(f"cannot write {path}: the folder {parent} {what}; create it first or choose another path")
    if not overwrite and (path.exists() or path.is_symlink()):
        raise OutputError(f"{path} exists; refusing to overwrite it (remove it or choose another path)")


def _check_creatable(folder: Path, target: Path) -> None:
    """``folder`` exists as a folder, or can be made: its nearest existing ancestor is a folder."""
    probe = folder
    while not probe.exists() and probe != probe.parent:
        if probe.is_symlink():
            raise OutputError(f"cannot write {target}: {probe} is a dangling link")
        probe = probe.parent
    if not probe.is_dir():
        raise OutputError(f"cannot write {target}: {probe} is a file, not a folder; choose another path")


def check_output_file(path: str | os.PathLike[str], *, create_parents: bool = False,
                      overwrite: bool = True) -> Path:
    """Refuse, before any work starts, an output file that could not be written at the end: a
    folder in its place, a missing folder (unless ``create_parents``: then only a file where a
    folder must be), an existing file that must not be replaced. Returns the path."""
    target = Path(path)
    if create_parents and not target.parent.is_dir():
        _check_creatable(target.parent, target)
        return target
    _check_target(target, overwrite)
    return target


def check_output_folder(path: str | os.PathLike[str]) -> Path:
    """Refuse, before any work starts, an output folder that could not be made or written: a
    file in its place or on the way to it. An existing folder or one that can be created is
    fine. Returns the path."""
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise OutputError(f"cannot write into {target}: it is a file, not a folder; choose another path")
    _check_creatable(target, target)
    return target


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - a folder we just wrote into is readable on POSIX
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some file systems refuse fsync on folders
        pass
    finally:
        os.close(fd)


@contextmanager
def atomic_writer(path: str | os.PathLike[str], *, mode: int | None = None, text: bool = False,
                  overwrite: bool = True) -> Iterator[IO[Any]]:
    """A file object whose content appears at ``path`` only when the ``with`` block ends
    without an exception; otherwise ``path`` is as it was and no temporary file is left.

    ``mode`` (e.g. :data:`PRIVATE`) is the file's exact mode from its creation on, never
    widened afterwards; ``None`` gives an ordinary file (0666 less the umask). ``text`` opens
    the file for UTF-8 text with ``\\n`` line ends. ``overwrite=False`` refuses an existing
    ``path``, atomically (a file created meanwhile is not replaced either)."""
    target = Path(path)
    _check_target(target, overwrite)
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if mode is None else mode)
    except OSError as exc:
        raise OutputError(f"cannot write {target}: {exc.strerror or exc}") from None
    in_body = False
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)  # exact, whatever the umask
            fh = os.fdopen(fd, "w", encoding="utf-8", newline="\n") if text else os.fdopen(fd, "wb")
        except BaseException:
            os.close(fd)
            raise
        with fh:
            in_body = True
            yield fh
            in_body = False
            fh.flush()
            os.fsync(fh.fileno())
        if overwrite:
            os.replace(tmp, target)
        else:
            os.link(tmp, target)  # fails if the target appeared meanwhile; tmp is removed below
        _fsync_dir(target.parent)
    except FileExistsError:
        if in_body:
            raise
        raise OutputError(f"{target} exists; refusing to overwrite it (remove it or choose another path)") from None
    except OSError as exc:
        # The caller's own errors pass through; a failed write to this file (a full disk: no
        # file name on the error) or a failed rename is the output's problem.
        if in_body and exc.filename is not None:
            raise
        raise OutputError(f"cannot write {target}: {exc.strerror or exc}") from None
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass


def atomic_write(path: str | os.PathLike[str], data: bytes | str, *, mode: int | None = None,
                 overwrite: bool = True) -> Path:
    """Write ``data`` (text is UTF-8) to ``path`` all at once or not at all; see
    :func:`atomic_writer` for ``mode`` and ``overwrite``. Returns the path."""
    with atomic_writer(path, mode=mode, text=isinstance(data, str), overwrite=overwrite) as fh:
        fh.write(data)
    return Path(path)


def json_safe(obj: Any) -> Any:
    """A copy of ``obj`` that :func:`json.dumps` writes as standard JSON: numpy arrays and
    scalars become lists and Python numbers, NaN and infinities ``null`` (JSON has neither),
    paths strings, tuples lists, mapping keys strings."""
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    if hasattr(obj, "tolist") and callable(obj.tolist):  # numpy arrays and scalars
        obj = obj.tolist()
        if isinstance(obj, list):
            return json_safe(obj)
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def write_json(path: str | os.PathLike[str], obj: object, *, mode: int | None = None, indent: int | None = 2) -> Path:
    """``obj`` (through :func:`json_safe`) as JSON with a final newline, atomically
    (``indent=None``: compact, for large traces)."""
    return atomic_write(path, json.dumps(json_safe(obj), indent=indent) + "\n", mode=mode)
