"""Who holds which ridge token: the CSP's two, reused from its folder; the buyer's from a file
or the environment; a role refused what is not its own (403)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cryptoffload.apps._credentials import Unauthorized, token_hash
from cryptoffload.apps.ridge.tokens import BUYER, PLATFORM, TOKEN_ENV, allow, csp_credentials, read_buyer_token
from cryptoffload.errors import ConfigError


def test_the_csp_issues_the_platform_and_buyer_tokens_once(tmp_path: Path) -> None:
    folder = tmp_path / "keys"
    creds = csp_credentials(folder)
    assert creds.names() == sorted([BUYER, PLATFORM])
    buyer = (folder / "buyer.token").read_text().strip()
    assert creds.hash_of(BUYER) == token_hash(buyer)
    assert creds.identify(f"Bearer {buyer}") == BUYER
    again = csp_credentials(folder)                    # a restart reuses them
    assert again.hash_of(BUYER) == creds.hash_of(BUYER) and again.hash_of(PLATFORM) == creds.hash_of(PLATFORM)


def test_the_buyer_token_from_a_file_or_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    assert read_buyer_token(None) is None
    monkeypatch.setenv(TOKEN_ENV, "  from-the-environment-0123456789  ")
    assert read_buyer_token(None) == "from-the-environment-0123456789"
    path = tmp_path / "buyer.token"
    path.write_text("from-the-file-0123456789abcdef\n")
    path.chmod(0o600)
    assert read_buyer_token(path) == "from-the-file-0123456789abcdef"   # a file wins over the environment
    path.chmod(0o644)
    with pytest.raises(ConfigError, match="buyer token file .* chmod 600"):
        read_buyer_token(path)


def test_allow_refuses_other_roles_with_403() -> None:
    allow(PLATFORM, PLATFORM, "commit")
    with pytest.raises(Unauthorized, match="commit is accepted from the platform only") as info:
        allow(BUYER, PLATFORM, "commit")
    assert (info.value.status, info.value.code) == (403, "forbidden")
