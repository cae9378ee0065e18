"""What the two ridge databases (the platform's :mod:`.store`, the CSP's :mod:`.csp_store`) share.

Why SQLite (stdlib ``sqlite3``) in WAL mode with ``synchronous=FULL``: a commit is one append
to the write-ahead log plus an fsync, durable across a process kill *and* a power loss, with
no server to run. Every write is an explicit ``BEGIN IMMEDIATE`` ... ``COMMIT`` (the connection
runs in autocommit mode, so nothing is ever committed implicitly), one at a time under a lock
(each party writes from executor threads). The file is created 0600 before SQLite opens it
(SQLite gives its -wal/-shm files the same mode): both hold secrets of the protocol.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, TypeAlias

from cryptoffload.errors import ConfigError
from cryptoffload.io import check_output_file
from cryptoffload.private_files import check_private

#: a value SQLite stores (what a statement's parameters may be)
SqlValue: TypeAlias = "str | int | float | bytes | None"

_META = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);\n"
#: every party's processed message ids (a replay stays refused across restarts, and the party's
#: memory does not grow with the messages it has seen)
_MESSAGES = """CREATE TABLE IF NOT EXISTS messages (
    message_id  TEXT PRIMARY KEY,
    type        TEXT NOT NULL,
    received_at REAL NOT NULL
);
"""


def _check_private_file(path: Path, what: str) -> None:
    """The database holds secrets (the platform's masks, the CSP's answers and state), so it
    follows the rule of every secret (:mod:`cryptoffload.private_files`): created 0600 without
    following a link, ours, in folders only we or root can write -- a file or link another
    user planted under ``--db`` is refused, not opened."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ConfigError(f"the {what} {path} is a symbolic link; give the file itself "
                              f"(a link could point at a file another user controls)") from None
        raise
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
    check_private(path, st, what)


class Database:
    """A SQLite file (or, with ``path=None``, memory) holding ``schema`` at ``version``."""

    def __init__(self, path: str | os.PathLike[str] | None, schema: str, version: int, what: str) -> None:
        self.path = Path(path) if path is not None else None
        self._lock = threading.Lock()
        try:
            if self.path is not None:
                if self.path.is_dir():
                    raise ConfigError(f"{self.path} is a directory, expected {what} (a database file)")
                if not self.path.parent.is_dir():
                    raise ConfigError(f"{self.path}: folder {self.path.parent} does not exist")
                _check_private_file(self.path, what)
            # check_same_thread=False: writes come from executor threads, one at a time under
            # the lock; isolation_level=None: transactions are explicit
            self._conn = sqlite3.connect(self.path if self.path is not None else ":memory:", isolation_level=None,
                                         check_same_thread=False, timeout=30)
            if self.path is not None:
                self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=FULL")
            self._conn.executescript(_META + _MESSAGES + schema)
            stored = self.meta("schema_version")
            if stored is None:
                self.set_meta({"schema_version": str(version)})
            elif stored != str(version):
                raise ConfigError(f"{self.path}: {what} schema {stored}, this version reads {version}")
        except sqlite3.DatabaseError as exc:
            raise ConfigError(f"{self.path}: not a usable {what} ({exc})") from None
        except OSError as exc:
            raise ConfigError(f"cannot open {self.path}: {exc.strerror}") from None

    def close(self) -> None:
        self._conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT``, or ``ROLLBACK`` (nothing written) on any error."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def meta(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, values: dict[str, str]) -> None:
        with self.transaction() as c:
            c.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", list(values.items()))

    def _write(self, sql: str, args: tuple[SqlValue, ...]) -> None:
        with self.transaction() as c:
            c.execute(sql, args)

    def has_message(self, message_id: str) -> bool:
        """Whether ``message_id`` was processed (a primary-key lookup, under the write lock so
        that it never sees a transaction half-way)."""
        with self._lock:
            return self._conn.execute("SELECT 1 FROM messages WHERE message_id = ?",
                                      (message_id,)).fetchone() is not None

    def remember_message(self, message_id: str, type_: str) -> None:
        """A processed message id that changed nothing else (kept so that a replay stays refused
        after a restart)."""
        self._write("INSERT OR IGNORE INTO messages VALUES (?, ?, ?)", (message_id, type_, time.time()))


def check_database_file(path: Path, flag: str = "--db") -> None:
    """Before a server starts: ``path`` can be written, and if it exists it is a SQLite
    database (opened read-only, nothing changed), so a wrong file is refused in one line
    instead of after the keys and the network are up."""
    check_output_file(path)
    if path.exists():
        try:
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as con:
                con.execute("PRAGMA schema_version").fetchone()
        except sqlite3.DatabaseError as exc:
            raise ConfigError(f"{flag} {path}: not a SQLite database ({exc}); give a new path or the platform's "
                              "database") from None
