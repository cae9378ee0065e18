"""``cryptoffload ridge``: bad numbers, files and URLs are one error line before any server
starts or any connection is made, and nothing is left behind."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

from cli_helpers import assert_user_error, run_cli

from cryptoffload.apps.ridge.platform import FAULT_ENV
from cryptoffload.apps.ridge.tokens import TOKEN_ENV

PROVIDER_TOKEN = "alice.0123456789abcdef0123456789"


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """The CLI without a buyer token or an injected fault from this environment."""
    return run_cli(cwd, *args, env={k: v for k, v in os.environ.items() if k not in (FAULT_ENV, TOKEN_ENV)})


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_bad_numbers_are_one_line_before_any_server_starts(tmp_path: Path) -> None:
    token = tmp_path / "t.token"
    token.write_text("x.0123456789abcdef0123456789")
    token.chmod(0o600)
    tok = ["--csp-token-file", str(token), "--providers", "a", "--db", "p.db", "--port", "0"]
    cases = [
        (["demo", "--upload-bits", "1023"], "even number of bits"),
        (["demo", "--upload-bits", "100000"], "8,192"),
        (["demo", "--batch", "0"], "--batch"),
        (["demo", "--upload-bits", "1024"], "insecure-study-size"),  # 2048 unless a study size is asked for
        (["csp", "--port", "0", "--max-records", "10", "--d", "2", "--upload-bits", "1024"], "insecure-study-size"),
        (["csp", "--port", "0", "--max-records", "10", "--solve-bits", "12"], "bits"),
        (["platform", "--csp", "https://127.0.0.1:9", "--workers", "0", *tok], "--workers"),
        (["platform", "--csp", "https://127.0.0.1:9", "--wait-csp", "nan", *tok], "--wait-csp"),
        (["provider", "--platform", "https://127.0.0.1:9", "--data", "generate:n=5", "--token-file", str(token),
          "--csp-fingerprint", "0" * 64, "--batch", "0"], "--batch"),
        (["buyer", "--platform", "https://127.0.0.1:9", "--csp", "https://127.0.0.1:9", "--buyer-token-file",
          str(token), "--timeout", "-1"], "--timeout"),
    ]
    for args, needle in cases:
        assert_user_error(cli(tmp_path, "ridge", *args), needle)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.token"]


def test_bad_options_are_one_line_before_any_connection(tmp_path: Path) -> None:
    token = tmp_path / "alice.token"
    token.write_text(PROVIDER_TOKEN)
    token.chmod(0o600)
    dead = f"https://127.0.0.1:{_free_port()}"
    base = ["ridge", "provider", "--data", "generate:n=10", "--token-file", str(token)]
    assert_user_error(cli(tmp_path, *base, "--platform", dead), "pin the CSP")
    assert_user_error(cli(tmp_path, *base, "--platform", dead, "--csp-fingerprint", "0" * 64),
                      "cannot reach the platform", dead)
    assert_user_error(cli(tmp_path, *base, "--platform", "ftp://x", "--csp-fingerprint", "0" * 64), "https://")
    assert_user_error(cli(tmp_path, *base, "--platform", dead.replace("https", "http"), "--csp-fingerprint",
                          "0" * 64), "--insecure-http")
    token.chmod(0o644)
    assert_user_error(cli(tmp_path, *base, "--platform", dead, "--csp-fingerprint", "0" * 64), "chmod 600")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["alice.token"]


def test_ridge_demo_refuses_its_data_as_output_and_a_fifo_as_data(tmp_path: Path) -> None:
    """issue 22: `--out` naming the CSV (here through a hard link) would replace the data set;
    a FIFO as the CSV would block the command for ever."""
    (tmp_path / "d.csv").write_text("x1,y\n0.1,0.2\n0.3,0.4\n")
    os.link(tmp_path / "d.csv", tmp_path / "same.csv")
    assert_user_error(run_cli(tmp_path, "ridge", "demo", "--data", "csv:d.csv", "--out", "same.csv", timeout=60),
                      "same file", "--data")
    assert (tmp_path / "d.csv").read_text().startswith("x1,y")
    os.mkfifo(tmp_path / "fifo.csv")
    assert_user_error(run_cli(tmp_path, "ridge", "demo", "--data", "csv:fifo.csv", timeout=60), "not a regular file")
