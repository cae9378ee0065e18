"""What both ridge databases share: a 0600 file, a schema version checked on opening, and
transactions that write all or nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cryptoffload.apps.ridge.db import Database
from cryptoffload.errors import ConfigError

SCHEMA = "CREATE TABLE IF NOT EXISTS rows (id TEXT PRIMARY KEY);\n"


def test_file_mode_schema_version_and_meta(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    db = Database(path, SCHEMA, 1, "test database")
    db.set_meta({"session": "abc"})
    db.close()
    assert (path.stat().st_mode & 0o777) == 0o600
    db = Database(path, SCHEMA, 1, "test database")
    assert db.meta("schema_version") == "1" and db.meta("session") == "abc" and db.meta("absent") is None
    db.close()
    with pytest.raises(ConfigError, match="test database schema 1, this version reads 2"):
        Database(path, SCHEMA, 2, "test database")


def test_a_failed_transaction_writes_nothing() -> None:
    db = Database(None, SCHEMA, 1, "test database")
    with db.transaction() as c:
        c.execute("INSERT INTO rows VALUES ('a')")
    with pytest.raises(sqlite3.IntegrityError):
        with db.transaction() as c:
            c.execute("INSERT INTO rows VALUES ('b')")
            c.execute("INSERT INTO rows VALUES ('a')")      # duplicate: the whole transaction goes
    with pytest.raises(RuntimeError):
        with db.transaction() as c:
            c.execute("INSERT INTO rows VALUES ('c')")
            raise RuntimeError("a bug half-way")
    with db.transaction() as c:
        assert [r[0] for r in c.execute("SELECT id FROM rows")] == ["a"]
    db.close()


def test_unusable_paths_are_one_line_user_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is a directory, expected test database"):
        Database(tmp_path, SCHEMA, 1, "test database")
    with pytest.raises(ConfigError, match="folder .*missing does not exist"):
        Database(tmp_path / "missing" / "t.db", SCHEMA, 1, "test database")
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not sqlite" * 100)
    junk.chmod(0o600)  # else refused before it is read: a database holds secrets (next test)
    with pytest.raises(ConfigError, match="not a usable test database"):
        Database(junk, SCHEMA, 1, "test database")


def test_check_database_file_refuses_a_file_that_is_not_sqlite(tmp_path: Path) -> None:
    from cryptoffload.apps.ridge.db import check_database_file

    check_database_file(tmp_path / "new.db")  # a new path: fine, nothing created
    assert not (tmp_path / "new.db").exists()
    Database(tmp_path / "ok.db", SCHEMA, 1, "test database").close()
    check_database_file(tmp_path / "ok.db")
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"not a database at all, just some bytes" * 10)
    with pytest.raises(ConfigError, match=r"^--db .*bad\.db: not a SQLite database \(file is not a database\); "
                                          r"give a new path or the platform's database$"):
        check_database_file(bad)


def test_a_database_planted_by_another_user_or_linked_is_refused(tmp_path: Path) -> None:
    """The platform's and the CSP's databases hold masks and answers: the secret-file rule."""
    import os

    from cryptoffload.apps.ridge.db import Database
    from cryptoffload.errors import ConfigError

    folder = tmp_path / "state"
    folder.mkdir(mode=0o700)
    planted = folder / "planted.db"
    planted.write_bytes(b"")
    os.chmod(planted, 0o600)
    os.chown(planted, 12345, 12345)
    with pytest.raises(ConfigError, match="belongs to uid 12345"):
        Database(planted, "", 1, "platform database")
    target = tmp_path / "elsewhere.db"
    (folder / "link.db").symlink_to(target)
    with pytest.raises(ConfigError, match="is a symbolic link; give the file itself"):
        Database(folder / "link.db", "", 1, "platform database")
    assert not target.exists()
    open_db = Database(folder / "ok.db", "", 1, "platform database")
    open_db.close()
    assert os.stat(folder / "ok.db").st_mode & 0o777 == 0o600
