"""The platform's durable state: accepted uploads, the running aggregate, finalisation.

Why a database at all: the platform is the one party that accumulates other parties' work
over time. If it crashes after acknowledging an upload, the provider has moved on and the
contribution would be lost; if it crashes after adding an upload but before acknowledging
it, the provider retries and the contribution would be counted twice. Both are ruled out by
one rule: **an upload's id, its metadata and the new aggregate are committed in a single
SQLite transaction before the HTTP 200 is sent.** On restart the platform reloads the
aggregate and the accepted ids, so a retry of an accepted upload (same ``upload_id``) is
answered "already accepted" and not added again, and an upload the platform never committed
is simply added when the provider retries it.

Each provider has an aggregate of its own (the product of its uploads): the CSP checks every
provider's contribution on its own at unpacking and leaves out one whose sums overflowed, so
one malicious upload cannot spoil the others' (:meth:`~.protocol.Csp.unpack_contributions`).

Why SQLite, and how it is opened and written: :mod:`.db` (the platform serialises uploads
anyway, each one replaces the aggregate, so SQLite's single-writer model costs nothing). The
file is 0600: besides ciphertexts it holds the unpacking masks and the masks R, r of the
solve, which together with the CSP's w' reveal the model.

Finalisation is a small persisted state machine (``collecting`` -> ``unpacking`` ->
``solving`` -> ``finalized``); each step's inputs (the masks and the masked aggregate, then
R, r and the masked system) are committed before the CSP is asked, so a platform killed
during finalisation resumes by resending the *same* request, which the CSP answers from its
cache (it unpacks and solves one aggregate per key pair, see :mod:`.csp`).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from typing import Any, Iterable

from cryptoffload.apps.ridge.db import Database
from cryptoffload.checks import JsonDict
from cryptoffload.errors import ConfigError

SCHEMA_VERSION = 2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS aggregates (
    provider_id TEXT PRIMARY KEY,
    records     INTEGER NOT NULL,
    uploads     INTEGER NOT NULL,
    bytes       INTEGER NOT NULL,
    words       BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS uploads (
    upload_id   TEXT PRIMARY KEY,
    provider_id TEXT NOT NULL,
    message_id  TEXT NOT NULL,
    records     INTEGER NOT NULL,
    vectors     INTEGER NOT NULL,
    bytes       INTEGER NOT NULL,
    digest      TEXT NOT NULL,
    accepted_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS finalize (
    id            INTEGER PRIMARY KEY CHECK (id = 1),
    state         TEXT NOT NULL,
    records       INTEGER NOT NULL,
    masks         TEXT,
    masked        BLOB,
    mask_r_big    TEXT,
    mask_r_small  TEXT,
    system        BLOB,
    system_digest TEXT,
    contributors  TEXT,
    excluded      TEXT
);
"""

STATES = ("collecting", "unpacking", "solving", "finalized")


@dataclass(frozen=True)
class UploadRecord:
    """What the platform remembers of an accepted upload (never its ciphertexts)."""

    upload_id: str
    provider_id: str
    message_id: str
    records: int
    vectors: int
    bytes: int
    digest: str


@dataclass
class FinalizeState:
    """Where finalisation stands, with the inputs of the step in progress."""

    state: str = "collecting"
    records: int = 0
    masks: list[list[int]] = field(default_factory=list)
    masked: bytes = b""
    R: list[list[int]] = field(default_factory=list)
    r: list[int] = field(default_factory=list)
    system: bytes = b""
    system_digest: str = ""
    #: the providers whose aggregates were sent for unpacking, in that order, and the
    #: positions the CSP excluded (their sums overflowed)
    contributors: list[str] = field(default_factory=list)
    excluded: list[int] = field(default_factory=list)


@dataclass
class StoredState:
    """What the platform reloads on start: per provider, its aggregate and its totals (records,
    uploads). Bounded by the number of providers, not by the uploads: the uploads themselves
    and the processed message ids stay in the database and are looked up one at a time."""

    aggregates: dict[str, bytes]
    totals: dict[str, tuple[int, int]]
    bytes: int
    uploads: int
    finalize: FinalizeState

    @property
    def records(self) -> int:
        return sum(r for r, _ in self.totals.values())


def uploads_digest(uploads: Iterable[UploadRecord]) -> str:
    """SHA-256 of the accepted uploads (id, provider, records, vectors, ciphertext digest),
    sorted by id: what the platform commits to at the CSP, and what a provider who knows the
    list can recompute. ``uploads`` must come sorted by id; the JSON list is hashed as it is
    written, so the uploads are never all held at once."""
    h = hashlib.sha256(b"[")
    for i, u in enumerate(uploads):
        row = [u.upload_id, u.provider_id, u.records, u.vectors, u.digest]
        h.update((b"," if i else b"") + json.dumps(row, separators=(",", ":")).encode())
    h.update(b"]")
    return h.hexdigest()


def _hex_list(values: list[int]) -> str:
    return json.dumps([format(v, "x") for v in values])


def _from_hex_list(text: str | None) -> list[int]:
    return [int(v, 16) for v in json.loads(text)] if text else []


class PlatformStore(Database):
    """One SQLite database per platform session (one CSP key pair)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(path, _SCHEMA, SCHEMA_VERSION, "platform database")

    # -- session binding ----------------------------------------------------------------------
    def bind_session(self, upload_fp: str, solve_fp: str, params: JsonDict) -> None:
        """Tie the database to one CSP key pair and parameter set; a restart against another
        CSP session is refused rather than mixing aggregates under different keys."""
        stored = self.meta("upload_key")
        if stored is None:
            self.set_meta({"upload_key": upload_fp, "solve_key": solve_fp,
                            "params": json.dumps(params, sort_keys=True), "created_at": str(time.time())})
            return
        if stored != upload_fp or self.meta("solve_key") != solve_fp:
            raise ConfigError(f"{self.path} belongs to the CSP session with upload key {stored}, not {upload_fp}; "
                              "use another --db for a new session")
        if self.meta("params") != json.dumps(params, sort_keys=True):
            raise ConfigError(f"{self.path} was made for other protocol parameters than the CSP's")

    # -- loading --------------------------------------------------------------------------------
    def load(self) -> StoredState:
        c = self._conn
        rows = c.execute("SELECT provider_id, records, uploads, bytes, words FROM aggregates").fetchall()
        fin = FinalizeState()
        f = c.execute("SELECT state, records, masks, masked, mask_r_big, mask_r_small, system, system_digest, "
                      "contributors, excluded FROM finalize WHERE id = 1").fetchone()
        if f is not None:
            big = json.loads(f[4]) if f[4] else []
            masks = [[int(v, 16) for v in part] for part in json.loads(f[2])] if f[2] else []
            fin = FinalizeState(state=f[0], records=f[1], masks=masks, masked=f[3] or b"",
                                R=[[int(v, 16) for v in row_] for row_ in big], r=_from_hex_list(f[5]),
                                system=f[6] or b"", system_digest=f[7] or "",
                                contributors=json.loads(f[8]) if f[8] else [], excluded=json.loads(f[9]) if f[9] else [])
        return StoredState({r[0]: bytes(r[4]) for r in rows}, {r[0]: (int(r[1]), int(r[2])) for r in rows},
                           sum(int(r[3]) for r in rows), sum(int(r[2]) for r in rows), fin)

    def upload(self, upload_id: str) -> UploadRecord | None:
        """The accepted upload ``upload_id``, or None."""
        with self._lock:
            row = self._conn.execute("SELECT upload_id, provider_id, message_id, records, vectors, bytes, digest "
                                     "FROM uploads WHERE upload_id = ?", (upload_id,)).fetchone()
        return None if row is None else UploadRecord(*row)

    def uploads_digest(self) -> str:
        """:func:`uploads_digest` of every accepted upload, streamed from the database in id
        order (SQLite's BINARY collation orders ASCII ids as Python's ``sorted`` does)."""
        with self._lock:
            cur = self._conn.execute("SELECT upload_id, provider_id, message_id, records, vectors, bytes, digest "
                                     "FROM uploads ORDER BY upload_id")
            return uploads_digest(UploadRecord(*r) for r in cur)

    # -- writes (each one transaction) --------------------------------------------------------
    def accept_upload(self, upload: UploadRecord, aggregate_words: bytes) -> None:
        """The upload's id and message id, and its provider's aggregate that includes it, in one
        commit. Raises sqlite3.IntegrityError (nothing written) if the upload id is already there."""
        now = time.time()
        with self.transaction():
            self._conn.execute("INSERT INTO uploads VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                               (upload.upload_id, upload.provider_id, upload.message_id, upload.records,
                                upload.vectors, upload.bytes, upload.digest, now))
            self._conn.execute("INSERT OR IGNORE INTO messages VALUES (?, ?, ?)", (upload.message_id, "upload", now))
            self._conn.execute(
                "INSERT INTO aggregates (provider_id, records, uploads, bytes, words) VALUES (?, ?, 1, ?, ?) "
                "ON CONFLICT(provider_id) DO UPDATE SET records = records + excluded.records, uploads = uploads + 1, "
                "bytes = bytes + excluded.bytes, words = excluded.words",
                (upload.provider_id, upload.records, upload.bytes, aggregate_words))

    def save_unpacking(self, records: int, masks: list[list[int]], masked_words: bytes, contributors: list[str]) -> None:
        """Each contributor's masks and the masked aggregates (concatenated, in ``contributors``'
        order)."""
        with self.transaction():
            self._conn.execute(
                "INSERT OR REPLACE INTO finalize (id, state, records, masks, masked, contributors) "
                "VALUES (1, 'unpacking', ?, ?, ?, ?)",
                (records, json.dumps([[format(v, "x") for v in part] for part in masks]), masked_words,
                 json.dumps(contributors)))

    def save_solving(self, R: list[list[int]], r: list[int], system_words: bytes, digest: str, records: int,
                     excluded: list[int]) -> None:
        """R, r and the masked system, the records kept and the contributions the CSP excluded;
        the unpacking masks are spent and deleted."""
        with self.transaction():
            self._conn.execute(
                "UPDATE finalize SET state = 'solving', masks = NULL, masked = NULL, mask_r_big = ?, "
                "mask_r_small = ?, system = ?, system_digest = ?, records = ?, excluded = ? WHERE id = 1",
                (json.dumps([[format(v, "x") for v in row] for row in R]), _hex_list(r), system_words, digest,
                 records, json.dumps(excluded)))

    def mark_finalized(self) -> None:
        """The CSP has solved the system. The masked system stays: the buyer gets it with R, r
        to check the CSP's proof for w' (:func:`~.proofs.verify_solution`)."""
        with self.transaction():
            self._conn.execute("UPDATE finalize SET state = 'finalized' WHERE id = 1")

