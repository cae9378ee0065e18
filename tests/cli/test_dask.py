"""``cryptoffload dask credentials``, and the Dask scheduler options of every command that takes
``--scheduler`` (calibrate ckks, study ridge, study bsgs-multidevice): a plain tcp:// one is
refused in one line before anything starts, as are credentials that do not apply or do not
pass the checks."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from cli_helpers import assert_user_error, run_cli

from cryptoffload.engines.dask_tls import read_credentials

SCHEDULER_COMMANDS = [("calibrate", "ckks", "--out", "p.toml"), ("study", "ridge", "--quick", "--out", "out"),
                      ("study", "bsgs-multidevice", "--quick", "--out", "out")]


def test_credentials_are_written_private_and_the_key_never_printed(tmp_path: Path) -> None:
    proc = run_cli(tmp_path, "dask", "credentials", "--out", "creds", "--days", "30")
    assert proc.returncode == 0, proc.stderr
    folder = tmp_path / "creds"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert sorted(p.name for p in folder.iterdir()) == ["ca.pem", "cert.pem", "key.pem"]
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in folder.iterdir())
    pems = read_credentials(folder)
    assert "PRIVATE KEY" not in proc.stdout + proc.stderr
    assert pems.key.decode().splitlines()[1] not in proc.stdout
    for line in ("dask scheduler --protocol tls", "dask worker tls://SCHEDULER-HOST:8786",
                 "--tls-key creds/key.pem", "--scheduler tls://SCHEDULER-HOST:8786 --dask-credentials creds"):
        assert line in proc.stdout, proc.stdout
    again = run_cli(tmp_path, "dask", "credentials", "--out", "creds")
    assert_user_error(again, "--out creds already holds ca.pem, cert.pem, key.pem")
    assert read_credentials(folder).key == pems.key


@pytest.mark.parametrize("days", ["0", "3651", "-1"])
def test_bad_days_write_nothing(tmp_path: Path, days: str) -> None:
    proc = run_cli(tmp_path, "dask", "credentials", "--out", "creds", "--days", days)
    assert "--days" in proc.stderr and proc.returncode == 2
    assert not (tmp_path / "creds").exists()


@pytest.mark.parametrize("argv", SCHEDULER_COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_a_plain_tcp_scheduler_is_refused_before_anything_starts(tmp_path: Path, argv: tuple[str, ...]) -> None:
    proc = run_cli(tmp_path, *argv, "--scheduler", "tcp://127.0.0.1:8786")
    assert_user_error(proc, "refusing the plain tcp:// Dask scheduler tcp://127.0.0.1:8786",
                      "runs code as you and reads your keys", "--insecure-plain-tcp-scheduler", strict=False)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv", SCHEDULER_COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_credentials_are_checked_before_anything_starts(tmp_path: Path, argv: tuple[str, ...]) -> None:
    creds = tmp_path / "creds"
    assert run_cli(tmp_path, "dask", "credentials", "--out", "creds").returncode == 0
    (creds / "key.pem").chmod(0o644)
    proc = run_cli(tmp_path, *argv, "--scheduler", "tls://127.0.0.1:8786", "--dask-credentials", "creds")
    assert_user_error(proc, "creds/key.pem is open to others (mode 0644); run: chmod 600", strict=False)
    proc = run_cli(tmp_path, *argv, "--dask-credentials", "creds")
    assert_user_error(proc, "--dask-credentials is for a --scheduler tls://HOST:PORT", strict=False)
    proc = run_cli(tmp_path, *argv, "--scheduler", "tls://127.0.0.1:8786")
    assert_user_error(proc, "needs the cluster's TLS credentials: pass --dask-credentials DIR", strict=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["creds"]
