"""The platform's SQLite state: reloads each provider's aggregate, the accepted ids and
finalisation (with the contributors and the contributions the CSP left out)."""

from __future__ import annotations

from pathlib import Path

import hashlib
import json

import pytest

from cryptoffload.apps.ridge.store import PlatformStore, UploadRecord, uploads_digest


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
    assert state.records == 12 and state.bytes == 190 and state.uploads == 3
    assert state.totals == {"p": (10, 2), "q": (2, 1)}
    assert st.upload("p:2") == UploadRecord("p:2", "p", "m2", 3, 3, 50, "ee") and st.upload("p:3") is None
    assert st.uploads_digest() == uploads_digest(sorted([rec, UploadRecord("q:1", "q", "m3", 2, 1, 40, "dd"),
                                                         UploadRecord("p:2", "p", "m2", 3, 3, 50, "ee")],
                                                        key=lambda u: u.upload_id))
    fin = state.finalize
    assert st.has_message("m1") and not st.has_message("m9") and fin.state == "unpacking" and fin.masks == [[5, 6], [7, 8]]
    assert fin.contributors == ["p", "q"] and fin.excluded == []
    st.save_solving([[1]], [2], b"\x06", "ab", 10, [1])
    fin = st.load().finalize
    assert (fin.state, fin.records, fin.excluded, fin.masks, fin.R) == ("solving", 10, [1], [], [[1]])
    with pytest.raises(Exception, match="belongs to"):
        st.bind_session("c" * 32, "b" * 32, {"d": 2})
    st.close()
    assert (db.stat().st_mode & 0o777) == 0o600


def test_the_streamed_uploads_digest_is_the_hash_of_the_whole_sorted_list() -> None:
    """Providers recompute the digest as SHA-256 of the JSON list of sorted rows; the platform
    streams it row by row from the database: the two must agree byte for byte."""
    ups = [UploadRecord(f"p:{i}", "p", f"m{i}", i + 1, 1, 10, format(i, "x")) for i in (3, 10, 1)]
    rows = sorted([u.upload_id, u.provider_id, u.records, u.vectors, u.digest] for u in ups)
    want = hashlib.sha256(json.dumps(rows, separators=(",", ":")).encode()).hexdigest()
    assert uploads_digest(sorted(ups, key=lambda u: u.upload_id)) == want
    assert uploads_digest([]) == hashlib.sha256(b"[]").hexdigest()
    st = PlatformStore(None)
    for u in ups:
        st.accept_upload(u, b"\x01")
    assert st.uploads_digest() == want
