"""Bearer tokens: issued into private files, reused, refused when others can read them,
identified by hash."""

from __future__ import annotations

from pathlib import Path

import pytest

from attacker_helpers import ATTACKER, planted_dir, planted_file, root_only
from cryptoffload.apps._credentials import (
    Credentials,
    Unauthorized,
    bearer,
    issue_tokens,
    new_token,
    read_secret,
    token_hash,
)
from cryptoffload.errors import ConfigError


def test_issue_reuse_and_file_modes(tmp_path: Path) -> None:
    folder = tmp_path / "tokens"
    first = issue_tokens(folder, ["alice", "bob"], "test token")
    assert (folder.stat().st_mode & 0o777) == 0o700
    for name in ("alice", "bob"):
        path = folder / f"{name}.token"
        assert (path.stat().st_mode & 0o777) == 0o600
        assert token_hash(path.read_text().strip()) == first[name]
        assert path.read_text().startswith(f"{name}.")
    assert issue_tokens(folder, ["alice", "bob"], "test token") == first        # reused, not replaced
    (folder / "alice.token").chmod(0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        issue_tokens(folder, ["alice"], "test token")
    for bad in ("a.b", "../x", "", "x" * 65, "a b"):
        with pytest.raises(ConfigError):
            issue_tokens(folder, [bad], "test token")
    open_dir = tmp_path / "open"
    open_dir.mkdir(mode=0o755)
    open_dir.chmod(0o755)
    with pytest.raises(ConfigError, match="chmod 700"):
        issue_tokens(open_dir, ["alice"], "test token")


def test_read_secret_refusals(tmp_path: Path) -> None:
    path = tmp_path / "t"
    path.write_text("short")
    path.chmod(0o600)
    with pytest.raises(ConfigError, match="holds no token"):
        read_secret(path, "test token")
    path.write_bytes(b"\xff" * 20)
    with pytest.raises(ConfigError, match="UTF-8"):
        read_secret(path, "test token")
    with pytest.raises(ConfigError, match="cannot read"):
        read_secret(tmp_path / "missing", "test token")
    with pytest.raises(ConfigError, match="not a regular file"):
        read_secret(tmp_path, "test token")


def test_identify() -> None:
    alice, bob = new_token("alice"), new_token("bob")
    creds = Credentials({"alice": token_hash(alice), "bob": token_hash(bob)})
    assert creds.identify(f"Bearer {alice}") == "alice" and creds.identify(f"Bearer {bob}") == "bob"
    for header, status in ((None, 401), ("", 401), ("Basic x", 401), ("Bearer ", 401),
                           (f"Bearer {alice}x", 403), ("Bearer " + "x" * 600, 401)):
        with pytest.raises(Unauthorized) as exc:
            creds.identify(header)
        assert exc.value.status == status, header
    assert bearer(f"Bearer  {alice} ") == alice


def test_a_linked_token_is_refused_and_a_planted_link_never_written_through(tmp_path: Path) -> None:
    folder = tmp_path / "tokens"
    issue_tokens(folder, ["alice"], "test token")
    theirs = tmp_path / "attacker.token"
    theirs.write_text(new_token("bob"))
    theirs.chmod(0o600)
    (folder / "alice.token").unlink()
    (folder / "alice.token").symlink_to(theirs)
    with pytest.raises(ConfigError, match="alice token file .* is a symbolic link .to .*attacker.token.; refusing"):
        issue_tokens(folder, ["alice"], "test token")
    with pytest.raises(ConfigError, match="is a symbolic link"):
        read_secret(folder / "alice.token", "client token (--token-file)")
    (folder / "carol.token").symlink_to(tmp_path / "nowhere")  # dangling: a token would be written through it
    with pytest.raises(ConfigError, match="carol token file .* is a symbolic link"):
        issue_tokens(folder, ["carol"], "test token")
    assert not (tmp_path / "nowhere").exists()


@root_only
def test_a_planted_token_folder_or_token_is_refused(tmp_path: Path) -> None:
    """Whoever planted the folder or a token in it would hold a party's credential."""
    planted = planted_dir(tmp_path / "planted")
    with pytest.raises(ConfigError, match=f"test token folder {planted} belongs to uid {ATTACKER}"):
        issue_tokens(planted, ["alice"], "test token")
    assert list(planted.iterdir()) == []
    folder = tmp_path / "tokens"
    issue_tokens(folder, ["alice"], "test token")
    planted_file(folder / "bob.token", new_token("bob"))  # 0600, as issue_tokens would make it
    with pytest.raises(ConfigError, match=f"bob token file {folder / 'bob.token'} belongs to uid {ATTACKER}"):
        issue_tokens(folder, ["alice", "bob"], "test token")
