"""The CSP's SQLite state: steps spent once, answers and message ids kept across reopening."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cryptoffload.apps.ridge.csp_store import CspStore
from cryptoffload.errors import ConfigError


def test_steps_are_spent_once_and_survive_reopening(tmp_path: Path) -> None:
    db = tmp_path / "csp.db"
    st = CspStore(db)
    st.bind_session("a" * 32, "b" * 32)
    assert st.step("unpack") is None and st.commitment() is None
    st.spend("commitment", "c1", '{"records": 3}')
    st.spend("unpack", "d1")
    with pytest.raises(sqlite3.IntegrityError):
        st.spend("unpack", "d2")              # spent: nothing written
    st.remember_message("m1", "unpack_request")
    st.close()
    st = CspStore(db)
    assert st.commitment() == {"records": 3}
    step = st.step("unpack")
    assert step is not None and (step.digest, step.result, step.failed) == ("d1", None, False)
    st.finish("unpack", None, failed=True)
    assert st.step("unpack").failed and st.has_message("m1") and not st.has_message("m2")
    with pytest.raises(ConfigError, match="another CSP key pair"):
        st.bind_session("c" * 32, "b" * 32)
    st.close()
    assert (db.stat().st_mode & 0o777) == 0o600


def test_in_memory_and_bad_files(tmp_path: Path) -> None:
    st = CspStore(None)
    st.spend("solve", "x", "[]")
    assert st.step("solve").result == "[]"
    st.close()
    with pytest.raises(ConfigError, match="directory"):
        CspStore(tmp_path)
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not sqlite" * 100)
    junk.chmod(0o600)
    with pytest.raises(ConfigError, match="not a usable"):
        CspStore(junk)
