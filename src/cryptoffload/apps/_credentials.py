"""Bearer tokens for the project's servers: issued into private files, kept as hashes, checked in
constant time.

Why bearer tokens: every party of a server (a ridge provider, the ridge platform at the CSP,
an HE-CNN client) must be authenticated, the parties already talk TLS, and a token in a 0600
file is something an operator can hand over, rotate and revoke by hand. A token reads
``<name>.<secret>`` (the name only tells a human which token is which; a server identifies a
caller by the token's hash alone). A server keeps only SHA-256 hashes, so a copied database,
a log or a published parameter set reveals no token.

Secrets never go to stdout: a token is written to a file (mode 0600, in a folder made 0700)
whose *path* is printed. Token files and their folders are read and made under the one rule of
:mod:`cryptoffload.private_files`: ours (also as root), open to nobody else, never through a
link, under folders only we or root can write -- a planted folder or token is refused.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
from pathlib import Path
from typing import Iterable, Mapping

from cryptoffload.errors import ConfigError, CryptoffloadError
from cryptoffload.private_files import private_dir as private_dir  # the servers' key and token folders
from cryptoffload.private_files import read_private, write_private

#: names of token holders (provider ids, client names): also file names, so no dots or slashes
NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: longest ``Authorization`` header value looked at (a token is ~110 characters)
MAX_HEADER = 512
MAX_TOKEN_FILE_BYTES = 4096
_DOMAIN = b"cryptoffload-bearer-token\x00"


class Unauthorized(CryptoffloadError):
    """A request without a valid credential (401: none given, 403: wrong or not allowed here)."""

    def __init__(self, message: str, status: int = 401, code: str = "unauthorized") -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def check_name(name: object, what: str = "name") -> str:
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise ConfigError(f"{what} must be 1..64 letters, digits, '_' or '-', got {str(name)[:80]!r}")
    return name


def token_hash(token: str) -> str:
    """What a server stores (and may publish) of a token: SHA-256, hex."""
    return hashlib.sha256(_DOMAIN + token.encode("utf-8", "surrogatepass")).hexdigest()


def new_token(name: str) -> str:
    return f"{check_name(name)}.{secrets.token_urlsafe(32)}"


def write_secret(path: Path, text: str, what: str = "token") -> Path:
    """``text`` as a new private file (0600 from creation, never through a link, in a folder
    only we or root can write: :func:`cryptoffload.private_files.write_private`); refuses to
    overwrite."""
    return write_private(path, text.rstrip("\n") + "\n", what, overwrite=False, error=ConfigError)


def read_secret(path: Path, what: str) -> str:
    """A token from ``path``, under the rule of :mod:`cryptoffload.private_files` (ours, open to
    nobody else -- as ssh refuses a private key --, not a link, in folders others cannot write);
    refused if empty or not one printable line."""
    raw = read_private(path, what, max_bytes=MAX_TOKEN_FILE_BYTES, error=ConfigError)
    try:
        text = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise ConfigError(f"the {what} file {path} is not UTF-8 text") from None
    if not text or not text.isprintable() or len(text) < 16:
        raise ConfigError(f"the {what} file {path} holds no token (one line of at least 16 printable characters)")
    return text


def issue_tokens(folder: Path, names: Iterable[str], what: str) -> dict[str, str]:
    """One token per name in ``folder/<name>.token`` (0600) of the private folder ``folder``
    (made if missing): an existing file is reused once it passes the rule (ours, 0600, not a
    link), a missing one created. Returns name -> token hash."""
    private_dir(folder, what)
    hashes: dict[str, str] = {}
    for name in names:
        path = folder / f"{check_name(name, what)}.token"
        if os.path.lexists(path):  # a link too: read_secret refuses it, naming it
            token = read_secret(path, f"{name} token")
        else:
            token = new_token(name)
            write_secret(path, token, f"{name} token")
        hashes[name] = token_hash(token)
    return hashes


def bearer(header: str | None) -> str:
    """The token of an ``Authorization: Bearer <token>`` header (401 when there is none)."""
    if not header or len(header) > MAX_HEADER or not header.startswith("Bearer "):
        raise Unauthorized("send 'Authorization: Bearer <token>' (the token file this party was given)")
    token = header[7:].strip()
    if not token:
        raise Unauthorized("send 'Authorization: Bearer <token>' (the token file this party was given)")
    return token


class Credentials:
    """The tokens a server accepts, as ``name -> hash``."""

    def __init__(self, hashes: Mapping[str, str] | None = None) -> None:
        self._hashes: dict[str, str] = {}
        for name, h in (hashes or {}).items():
            self.add(name, h)

    def add(self, name: str, hash_hex: str) -> None:
        if not isinstance(hash_hex, str) or len(hash_hex) != 64:
            raise ConfigError(f"the credential of {name!r} must be a SHA-256 hex digest")
        self._hashes[name] = hash_hex

    def __contains__(self, name: object) -> bool:
        return name in self._hashes

    def names(self) -> list[str]:
        return sorted(self._hashes)

    def hash_of(self, name: str) -> str:
        return self._hashes[name]

    def identify(self, header: str | None) -> str:
        """The name whose token the header carries; every stored hash is compared (in
        constant time each), so the time taken does not depend on which one matches."""
        presented = token_hash(bearer(header))
        found = None
        for name, h in self._hashes.items():
            if hmac.compare_digest(presented, h):
                found = name
        if found is None:
            raise Unauthorized("the token is not valid here", status=403, code="forbidden")
        return found
