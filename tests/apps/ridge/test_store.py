"""The platform's SQLite state: reloads each provider's aggregate, the accepted ids and
finalisation (with the contributors and the contributions the CSP left out)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cryptoffload.apps.ridge.store import PlatformStore, UploadRecord


def test_store_reloads_aggregates_and_ids(tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    st = PlatformStore(db)
    st.bind_session("a" * 32, "b" * 32, {"d": 2})
    rec = UploadRecord("p:1", "p", "m1", 7, 7, 100, "ff")
    st.accept_upload(rec, b"\x01" * 16)
    with pytest.raises(Exception):
        st.accept_upload(rec, b"\x02" * 16)  # same upload id: nothing written
    st.accept_upload(UploadRecord("p:2", "p", "m2", 3, 3, 50, "ee"), b"\x04" * 16)
    st.accept_upload(UploadRecord("q:1", "q", "m3", 2, 1, 40, "dd"), b"\x05" * 16)
    st.save_unpacking(12, [[5, 6], [7, 8]], b"\x03" * 8, ["p", "q"])
    st.close()
    st = PlatformStore(db)
    state = st.load()
    assert state.aggregates == {"p": b"\x04" * 16, "q": b"\x05" * 16}       # one per provider, the latest
    assert state.records == 12 and state.bytes == 190 and set(state.uploads) == {"p:1", "p:2", "q:1"}
    fin = state.finalize
    assert "m1" in state.message_ids and fin.state == "unpacking" and fin.masks == [[5, 6], [7, 8]]
    assert fin.contributors == ["p", "q"] and fin.excluded == []
    st.save_solving([[1]], [2], b"\x06", "ab", 10, [1])
    fin = st.load().finalize
    assert (fin.state, fin.records, fin.excluded, fin.masks, fin.R) == ("solving", 10, [1], [], [[1]])
    with pytest.raises(Exception, match="belongs to"):
        st.bind_session("c" * 32, "b" * 32, {"d": 2})
    st.close()
    assert (db.stat().st_mode & 0o777) == 0o600
