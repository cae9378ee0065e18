"""The platform's SQLite state: reloads the aggregate, the accepted ids and finalisation."""

from __future__ import annotations

from pathlib import Path

import pytest

from cryptoffload.apps.ridge.store import PlatformStore, UploadRecord


def test_store_reloads_aggregate_and_ids(tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    st = PlatformStore(db)
    st.bind_session("a" * 32, "b" * 32, {"d": 2})
    rec = UploadRecord("u1", "p", "m1", 7, 7, 100, "ff")
    st.accept_upload(rec, b"\x01" * 16, 7, 100)
    with pytest.raises(Exception):
        st.accept_upload(rec, b"\x02" * 16, 14, 200)  # same upload id: nothing written
    st.save_unpacking(7, [5, 6], b"\x03" * 8)
    st.close()
    st = PlatformStore(db)
    state = st.load()
    assert state.aggregate == b"\x01" * 16 and state.records == 7 and set(state.uploads) == {"u1"}
    assert "m1" in state.message_ids and state.finalize.state == "unpacking" and state.finalize.masks == [5, 6]
    with pytest.raises(Exception, match="belongs to"):
        st.bind_session("c" * 32, "b" * 32, {"d": 2})
    st.close()
    assert (db.stat().st_mode & 0o777) == 0o600
