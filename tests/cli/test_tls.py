"""``cryptoffload tls``: detect reports what this kernel offers; bench and serve refuse bad
options in one line before nginx starts; a tiny bench end to end reports what really ran."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

from cli_helpers import assert_user_error, run_cli
from tls_helpers import KERNEL_HAS_TLS, needs_nginx, needs_tools

from cryptoffload.apps.tls.detect import NO_TLS_ULP


def cli(tmp_path: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return run_cli(tmp_path, *args, timeout=timeout)


def test_cli_detect(tmp_path: Path) -> None:
    proc = run_cli(tmp_path, "tls", "detect", "--json", "d.json", timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "kernel tls ULP" in proc.stdout and "kTLS requests here run as" in proc.stdout
    assert (tmp_path / "d.json").exists()
    if not KERNEL_HAS_TLS:
        assert NO_TLS_ULP in proc.stdout


def test_cli_user_errors(tmp_path: Path) -> None:
    assert_user_error(cli(tmp_path, "tls", "bench", "--modes", "plain,quic", "--out", "o"), "unknown TLS mode 'quic'")
    assert_user_error(cli(tmp_path, "tls", "bench", "--sizes", "2Q", "--out", "o"), "bad file size")
    assert_user_error(cli(tmp_path, "tls", "bench", "--clients", "lynx", "--out", "o"), "unknown client 'lynx'")
    assert_user_error(cli(tmp_path, "tls", "serve", "--mode", "quic", "--root", "."), "unknown TLS mode")
    assert not (tmp_path / "o").exists()


def test_cli_bench_guest_errors_before_any_boot(tmp_path: Path) -> None:
    """A size the guest cannot hold, and a machine without the guest tools: one line, exit 2."""
    assert_user_error(cli(tmp_path, "tls", "bench", "--guest", "--sizes", "1G", "--out", "o"), "--sizes")
    env = {k: v for k, v in os.environ.items()}
    env["CRYPTOFFLOAD_GUEST_VENV"] = str(tmp_path / "no-venv")
    env["PATH"] = "/nonexistent"
    proc = run_cli(tmp_path, "tls", "bench", "--guest", "--out", "o", env=env, timeout=60)
    assert_user_error(proc, "no qemu-system-x86_64 (Debian package qemu-system-x86)", "make ktls")
    assert not (tmp_path / "o").exists()


@needs_nginx
def test_cli_serve_errors(tmp_path: Path) -> None:
    assert_user_error(cli(tmp_path, "tls", "serve", "--mode", "tls", "--root", "nope"), "does not exist")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        assert_user_error(cli(tmp_path, "tls", "serve", "--mode", "plain", "--root", ".", "--port", str(port)),
                          f"port {port}", "already in use")


@needs_nginx
@needs_tools
def test_cli_bench_tiny(tmp_path: Path) -> None:
    proc = cli(tmp_path, "tls", "bench", "--modes", "plain,tls,ktls-nic", "--count", "2", "--interval", "0",
               "--sizes", "2K", "--clients", "curl", "--wrk-connections", "1", "--wrk-duration", "1",
               "--out", "o", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "worker CPU ms/req" in proc.stdout and "max req/s" in proc.stdout
    data = json.loads((tmp_path / "o" / "bench.json").read_text())
    assert set(data["max_requests_per_s"]) == {"plain", "tls", "ktls-nic"}
    assert data["bench"]["verified"]["ktls-nic"].startswith("requested ktls-nic, ran")
    if not Path("/proc/net/tls_stat").exists():
        assert "ran user-space TLS" in data["bench"]["verified"]["ktls-nic"]
