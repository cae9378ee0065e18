"""The ridge parties' credentials (bearer tokens of :mod:`cryptoffload.apps._credentials`).

Who holds which token:

* the CSP issues two, into its key folder (``--key-dir``) or a new private folder whose path
  it prints: ``platform.token`` (the platform's credential for ``commit``, ``unpack`` and
  ``solve``) and ``buyer.token`` (the buyer's, for ``w'``; the CSP publishes its hash so the
  platform can check the buyer too);
* the platform issues one per provider (``--providers alice,bob --token-dir DIR``:
  ``DIR/alice.token``, ...), for uploads.
"""

from __future__ import annotations

import os
from pathlib import Path

from cryptoffload.apps._credentials import Credentials, Unauthorized, issue_tokens, read_secret

TOKEN_ENV = "CRYPTOFFLOAD_RIDGE_BUYER_TOKEN"
BUYER = "buyer"
PLATFORM = "platform"


def csp_credentials(folder: Path) -> Credentials:
    """The platform's and the buyer's tokens, issued into (or reused from) ``folder``."""
    return Credentials(issue_tokens(folder, (PLATFORM, BUYER), "CSP token"))


def read_token(path: Path, what: str) -> str:
    return read_secret(path, what)


def read_buyer_token(path: Path | None) -> str | None:
    """The buyer token from ``path`` or the environment (``CRYPTOFFLOAD_RIDGE_BUYER_TOKEN``)."""
    if path is not None:
        return read_secret(path, "buyer token")
    token = os.environ.get(TOKEN_ENV, "").strip()
    return token or None


def allow(role: str, allowed: str, what: str) -> None:
    """Refuse (403) ``what`` from anyone but ``allowed``."""
    if role != allowed:
        raise Unauthorized(f"{what} is accepted from the {allowed} only", status=403, code="forbidden")
