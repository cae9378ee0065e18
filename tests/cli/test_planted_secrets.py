"""Secrets only from what we own, through the real commands: a key or token folder, a token, a
TLS key or a private key that another user planted (tests run as root: planted with ``chown``
to uid 12345), that others may open or swap, or that is a link to a file the attacker controls,
is refused before any server listens, with exit 2 and one ``error:`` line naming the path, the
fault and the fix -- and nothing is written into the planted folder."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from attacker_helpers import ATTACKER, planted_dir, planted_file, root_only
from cli_helpers import assert_user_error, run_cli

TOKEN = "someone.0123456789abcdef0123456789abcdef"
CSP = ["ridge", "csp", "--port", "0", "--max-records", "10", "--d", "2"]
HECNN = ["he-cnn", "serve", "--port", "0", "--backend", "emulator"]


def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return run_cli(cwd, *args, timeout=90)  # a refusal is immediate; a server that starts would hang


def _mine(path: Path, text: str = TOKEN, mode: int = 0o600) -> Path:
    path.write_text(text)
    path.chmod(mode)
    return path


def _platform(cwd: Path, csp_token: Path, *extra: str) -> subprocess.CompletedProcess:
    return _cli(cwd, "ridge", "platform", "--port", "0", "--csp", "http://127.0.0.1:1", "--insecure-http",
                "--db", "p.db", "--wait-csp", "0.5", "--csp-token-file", str(csp_token), "--providers", "alice", *extra)


@root_only
@pytest.mark.parametrize("command, flag", [(CSP, "--key-dir"), (HECNN, "--token-dir")])
def test_a_folder_another_user_made_is_refused(tmp_path: Path, command: list[str], flag: str) -> None:
    folder = planted_dir(tmp_path / "planted")  # 0700: the mode check alone accepted it
    line = assert_user_error(_cli(tmp_path, *command, flag, str(folder)), str(folder), f"belongs to uid {ATTACKER}",
                             "not to you (uid 0 (root))", "remove it and let cryptoffload create it")
    assert "chown" in line
    assert list(folder.iterdir()) == []


@root_only
def test_ridge_platform_refuses_a_planted_token_folder_and_token(tmp_path: Path) -> None:
    csp_token = _mine(tmp_path / "platform.token")
    folder = planted_dir(tmp_path / "planted")
    assert_user_error(_platform(tmp_path, csp_token, "--token-dir", str(folder)), str(folder),
                      f"belongs to uid {ATTACKER}")
    mine = tmp_path / "tokens"
    mine.mkdir(mode=0o700)
    planted_file(mine / "alice.token", "alice.planted-by-the-attacker-0123456789")  # 0600, as we would make it
    assert_user_error(_platform(tmp_path, csp_token, "--token-dir", str(mine)), str(mine / "alice.token"),
                      f"belongs to uid {ATTACKER}", "remove it")
    planted_file(csp_token, TOKEN)  # the platform's own credential for the CSP
    assert_user_error(_platform(tmp_path, csp_token), str(csp_token), f"belongs to uid {ATTACKER}")
    assert not (tmp_path / "p.db").exists()


@root_only
def test_ridge_csp_refuses_a_planted_tls_key(tmp_path: Path) -> None:
    """A TLS key the attacker chose lets them read the CSP's traffic, tokens included."""
    keys = tmp_path / "keys"
    keys.mkdir(mode=0o700)
    _mine(keys / "cert.pem", "-----BEGIN CERTIFICATE-----\n", 0o644)
    planted_file(keys / "key.pem", "-----BEGIN PRIVATE KEY-----\n")
    assert_user_error(_cli(tmp_path, *CSP, "--key-dir", str(keys)), str(keys / "key.pem"),
                      f"belongs to uid {ATTACKER}")
    assert sorted(p.name for p in keys.iterdir()) == ["cert.pem", "key.pem"]


@pytest.mark.parametrize("command, flag", [(CSP, "--key-dir"), (HECNN, "--token-dir")])
def test_a_folder_others_can_open_swap_or_that_is_a_link_is_refused(tmp_path: Path, command: list[str],
                                                                    flag: str) -> None:
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o770)
    assert_user_error(_cli(tmp_path, *command, flag, str(open_dir)), str(open_dir), "mode 0770", "chmod 700")
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    assert_user_error(_cli(tmp_path, *command, flag, str(link)), str(link), "is a symbolic link", "refusing to follow")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # /tmp without its sticky bit: anyone could rename our folder away and put theirs
    assert_user_error(_cli(tmp_path, *command, flag, str(shared / "keys")), str(shared),
                      "writable by others (mode 0777) without the sticky bit")
    assert list(shared.iterdir()) == [] and list(real.iterdir()) == []


def test_a_linked_token_file_is_refused_by_every_party(tmp_path: Path) -> None:
    theirs = _mine(tmp_path / "attacker.token")  # a file the attacker controls
    link = tmp_path / "alice.token"
    link.symlink_to(theirs)
    cases = [
        ["ridge", "provider", "--platform", "https://127.0.0.1:9", "--data", "generate:n=5", "--token-file",
         str(link), "--csp-fingerprint", "0" * 64],
        ["ridge", "buyer", "--platform", "https://127.0.0.1:9", "--csp", "https://127.0.0.1:9",
         "--buyer-token-file", str(link)],
        ["he-cnn", "client", "--url", "https://127.0.0.1:9", "--token-file", str(link)],
    ]
    for args in cases:
        assert_user_error(_cli(tmp_path, *args), str(link), "is a symbolic link", "refusing to follow it")
    assert_user_error(_platform(tmp_path, link), str(link), "is a symbolic link")


def _key_and_ciphertexts(cwd: Path) -> tuple[Path, Path]:
    sk, data, ct = cwd / "k.json", cwd / "m.txt", cwd / "c.bin"
    for args in (["paillier", "keygen", "--bits", "1024", "--insecure-study-size", "--out", str(sk)],
                 ["paillier", "encrypt", "--key", str(sk), "--in", str(data), "--out", str(ct),
                  "--insecure-study-size"]):
        data.write_text("7\n")
        proc = _cli(cwd, *args)
        assert proc.returncode == 0, proc.stderr
    return sk, ct


def test_paillier_decrypt_refuses_a_linked_or_planted_private_key(tmp_path: Path) -> None:
    sk, ct = _key_and_ciphertexts(tmp_path)
    attacker = tmp_path / "attacker"
    attacker.mkdir()
    sk.rename(attacker / "k.json")  # the key now sits where the attacker controls it
    sk.symlink_to(attacker / "k.json")
    decrypt = ["paillier", "decrypt", "--key", str(sk), "--in", str(ct), "--insecure-study-size"]
    assert_user_error(_cli(tmp_path, *decrypt), f"private key file {sk} is a symbolic link",
                      "give the file itself")
    sk.unlink()
    (attacker / "k.json").rename(sk)
    proc = _cli(tmp_path, *decrypt)
    assert proc.returncode == 0 and proc.stdout.split() == ["7"], proc.stderr
    if __import__("os").geteuid() == 0:
        planted_file(sk, sk.read_text())
        assert_user_error(_cli(tmp_path, *decrypt), str(sk), f"belongs to uid {ATTACKER}")
