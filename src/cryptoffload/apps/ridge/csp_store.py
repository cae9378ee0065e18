"""The CSP's durable state: the commitment, the one unpack and the one solve of its key pair.

Why on disk: the CSP decrypts for one session only (one aggregate, one system per key pair,
:mod:`.csp`). Kept in memory, that rule would reset whenever the CSP restarts with the same
keys (``--key-dir``), and a decryption oracle would reopen. So every step is committed here
before the CSP answers: the platform's commitment, "this aggregate is being unpacked" (spent
before the decryption starts: a failure says something about the decrypted values and must not
be repeatable with variations), the answer, and the same for the solve; plus the message ids
seen, so a replay stays refused across restarts.

Same database as the platform's (:mod:`.db`: WAL, ``synchronous=FULL``, 0600; it holds w', the
masked solution). ``path=None`` keeps the state in memory, for a CSP whose keys die with it (no
``--key-dir``).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Any

from cryptoffload.apps.ridge.db import Database
from cryptoffload.apps.ridge.messages import Message
from cryptoffload.errors import ConfigError

SCHEMA_VERSION = 3  # 2: the unpack answer is JSON (fields and the excluded contributions); 3: with the
#                      exclusions' proofs, and the solve's answer is w' with its proof

_SCHEMA = """
CREATE TABLE IF NOT EXISTS steps (
    step     TEXT PRIMARY KEY CHECK (step IN ('commitment', 'unpack', 'solve')),
    digest   TEXT NOT NULL,
    result   TEXT,
    failed   INTEGER NOT NULL DEFAULT 0,
    at       REAL NOT NULL
);
"""


@dataclass(frozen=True)
class Step:
    """One spent step: what it was spent on (``digest``), its answer once there is one
    (``result``), or ``failed`` when the input could not be processed."""

    digest: str
    result: str | None
    failed: bool


class CspStore(Database):
    """One SQLite database per CSP key pair (or an in-memory one)."""

    def __init__(self, path: str | os.PathLike[str] | None) -> None:
        super().__init__(path, _SCHEMA, SCHEMA_VERSION, "CSP state database")

    def bind_session(self, upload_fp: str, solve_fp: str) -> None:
        """Tie the state to one key pair; a database of another key pair is refused."""
        stored = self.meta("keys")
        keys = f"{upload_fp}:{solve_fp}"
        if stored is None:
            self.set_meta({"keys": keys})
        elif stored != keys:
            raise ConfigError(f"{self.path} is the state of another CSP key pair; remove it with those keys")

    # -- the one commitment, unpack and solve ---------------------------------------------------
    def step(self, name: str) -> Step | None:
        row = self._conn.execute("SELECT digest, result, failed FROM steps WHERE step = ?", (name,)).fetchone()
        return None if row is None else Step(row[0], row[1], bool(row[2]))

    def spend(self, name: str, digest: str, result: str | None = None) -> None:
        """Mark ``name`` as spent on ``digest`` (with its answer if already known). Raises
        sqlite3.IntegrityError, writing nothing, when it was already spent."""
        self._write("INSERT INTO steps (step, digest, result, failed, at) VALUES (?, ?, ?, 0, ?)",
                    (name, digest, result, time.time()))

    def finish(self, name: str, result: str | None, failed: bool = False) -> None:
        self._write("UPDATE steps SET result = ?, failed = ? WHERE step = ?", (result, int(failed), name))

    def commitment(self) -> Message | None:
        s = self.step("commitment")
        return None if s is None or s.result is None else json.loads(s.result)
