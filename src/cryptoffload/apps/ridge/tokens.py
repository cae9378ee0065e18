"""Bearer tokens between the ridge parties: how they are read, stored and checked.

A server keeps only a hash of each token it accepts (so a copied database or a published
parameter set reveals no token) and compares hashes in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from pathlib import Path

from cryptoffload.apps.ridge.messages import ProtocolError
from cryptoffload.errors import ConfigError

TOKEN_ENV = "CRYPTOFFLOAD_RIDGE_BUYER_TOKEN"


def token_hash(token: str) -> str:
    """What a server stores and publishes of the buyer's bearer token (sha256, hex)."""
    return hashlib.sha256(b"cryptoffload-ridge-buyer\x00" + token.encode()).hexdigest()


def check_token(header: str | None, expected_hash: str) -> None:
    """Refuse (401/403) a request whose ``Authorization: Bearer`` token does not hash to
    ``expected_hash``. Compared in constant time."""
    if not header or not header.startswith("Bearer ") or not header[7:].strip():
        raise ProtocolError("this message is for the buyer only: send 'Authorization: Bearer <buyer token>'",
                            status=401, code="unauthorized")
    if not hmac.compare_digest(token_hash(header[7:].strip()), expected_hash):
        raise ProtocolError("wrong buyer token", status=403, code="forbidden")


def read_buyer_token(path: Path | None) -> str | None:
    """The buyer token from ``path`` or the environment (``CRYPTOFFLOAD_RIDGE_BUYER_TOKEN``)."""
    if path is not None:
        try:
            token = path.read_text().strip()
        except OSError as exc:
            raise ConfigError(f"cannot read the buyer token file {path}: {exc.strerror}") from None
        if not token:
            raise ConfigError(f"the buyer token file {path} is empty")
        return token
    token = os.environ.get(TOKEN_ENV, "").strip()
    return token or None
