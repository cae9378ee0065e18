"""issue 37: the conventions users expect of a command line -- shell completion, flags shown as
flags, `-` for standard input and output, `--quiet`, output that follows COLUMNS, did-you-mean,
and `he-cnn infer`'s one-line answer with keys kept between calls."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import assert_user_error, run_cli

STUDY = "--insecure-study-size"
CLI = [sys.executable, "-m", "cryptoffload.cli"]


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "COLUMNS": "200", "PYTHONWARNINGS": "ignore", **extra}


def test_shell_completion_is_on_and_completes_study_names(tmp_path: Path) -> None:
    # what `--install-completion` writes and `--show-completion` prints (for the shell it detects)
    script = subprocess.run(CLI, cwd=tmp_path, capture_output=True, text=True, timeout=120,
                            env=_env(_CRYPTOFFLOAD_COMPLETE="source_bash"))
    assert script.returncode == 0 and "_CRYPTOFFLOAD_COMPLETE=complete_bash" in script.stdout
    assert "--install-completion" in run_cli(tmp_path, "--help").stdout
    proc = subprocess.run(CLI, cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env=_env(_CRYPTOFFLOAD_COMPLETE="complete_bash", COMP_WORDS="cryptoffload study ri",
                                   COMP_CWORD="2"))
    assert proc.returncode == 0 and proc.stdout.split() == ["ridge"]


def test_no_help_shows_a_type_after_a_flag() -> None:
    """The fix sits on typer's option class (cli/root.py), so a command of each kind shows it:
    a generated study command, a paillier command with --flag/--no-flag and repeatable --in, the
    root with completion's options."""
    from typer.testing import CliRunner

    from cryptoffload.cli import app

    runner = CliRunner()
    for path in (("study", "ridge"), ("paillier", "add"), ("he-cnn", "infer"), ()):
        res = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "250"})
        assert res.exit_code == 0, (path, res.output)
        assert "<bool>" not in res.output and "<list[" not in res.output, (path, res.output)


def test_standard_input_and_output_chain_paillier_commands(tmp_path: Path) -> None:
    assert run_cli(tmp_path, "paillier", "keygen", "--out", "k.json", "--bits", "1024", STUDY).returncode == 0
    enc = subprocess.run([*CLI, "paillier", "encrypt", "--key", "k.json.pub", "--in", "-", "--out", "-",
                          "--fixed-point", "16", STUDY, "-q"], cwd=tmp_path, env=_env(), input=b"1.5\n-2.25\n0.1\n",
                         capture_output=True, timeout=120)
    assert enc.returncode == 0 and enc.stderr == b"" and len(enc.stdout) > 3 * 256
    mul = subprocess.run([*CLI, "paillier", "mul", "--key", "k.json.pub", "--in", "-", "--scalar", "4", "--out", "-",
                          STUDY], cwd=tmp_path, env=_env(), input=enc.stdout, capture_output=True, timeout=120)
    assert mul.returncode == 0 and mul.stderr.decode().startswith("wrote standard output: 3 ciphertexts")
    dec = subprocess.run([*CLI, "paillier", "decrypt", "--key", "k.json", "--in", "-", "--out", "-",
                          "--fixed-point", "16", STUDY], cwd=tmp_path, env=_env(), input=mul.stdout,
                         capture_output=True, timeout=120)
    assert dec.returncode == 0 and dec.stdout.decode().splitlines() == ["6", "-9", "0.40002"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.json", "k.json.pub"]  # nothing written but keys


def _on_a_terminal(tmp_path: Path, args: list[str], stream: str) -> subprocess.CompletedProcess[bytes]:
    """The command with its stdin or stdout on a pseudo-terminal (as typed in a shell)."""
    leader, follower = pty.openpty()
    try:
        kw = {"stdin": follower} if stream == "stdin" else {"stdout": follower}
        proc = subprocess.run([*CLI, *args], cwd=tmp_path, env=_env(), stderr=subprocess.PIPE, timeout=120,
                              **({"stdout": subprocess.PIPE} if stream == "stdin" else {}), **kw)
    finally:
        os.close(follower)
        os.close(leader)
    return proc


def test_binary_to_a_terminal_and_waiting_on_one_are_refused(tmp_path: Path) -> None:
    assert run_cli(tmp_path, "paillier", "keygen", "--out", "k.json", "--bits", "1024", STUDY).returncode == 0
    (tmp_path / "m.txt").write_text("1\n")
    out = _on_a_terminal(tmp_path, ["paillier", "encrypt", "--key", "k.json.pub", "--in", "m.txt", "--out", "-", STUDY],
                         "stdout")
    assert out.returncode == 2 and out.stderr.decode().startswith("error: --out -: standard output is a terminal")
    inp = _on_a_terminal(tmp_path, ["paillier", "encrypt", "--key", "k.json.pub", "--in", "-", "--out", "c.bin", STUDY],
                         "stdin")
    assert inp.returncode == 2 and inp.stderr.decode().startswith("error: --in -: standard input is a terminal")
    assert not (tmp_path / "c.bin").exists()


def test_quiet_leaves_results_and_errors(tmp_path: Path) -> None:
    assert run_cli(tmp_path, "-q", "paillier", "keygen", "--out", "k.json", "--bits", "1024", STUDY).stderr == ""
    (tmp_path / "m.txt").write_text("5\n")
    assert run_cli(tmp_path, "paillier", "encrypt", "--key", "k.json.pub", "--in", "m.txt", "--out", "c.bin", STUDY,
                   "--quiet").stderr == ""
    proc = run_cli(tmp_path, "paillier", "decrypt", "--key", "k.json", "--in", "c.bin", STUDY, "-q")
    assert (proc.stdout, proc.stderr) == ("5\n", "")
    assert_user_error(run_cli(tmp_path, "-q", "paillier", "decrypt", "--key", "k.json.pub", "--in", "c.bin", STUDY),
                      "holds a public key")


def test_prose_follows_columns(tmp_path: Path) -> None:
    proc = run_cli(tmp_path, "study", "list", columns=50)
    assert proc.returncode == 0 and proc.stdout.count("\n") > 6
    assert max(len(line) for line in proc.stdout.splitlines()) <= 50


def test_did_you_mean_for_studies_and_commands(tmp_path: Path) -> None:
    assert_user_error(run_cli(tmp_path, "study", "ridg"), "No such command 'ridg'. Did you mean 'ridge'?")
    assert_user_error(run_cli(tmp_path, "he-cnn", "infr"), "Did you mean 'infer'")


def test_infer_answers_in_one_line_and_keeps_its_keys(tmp_path: Path) -> None:
    """The emulator (exact arithmetic) keeps this fast; SEAL's key set is the same file kind."""
    args = ["he-cnn", "infer", "--image", "3", "--backend", "emulator", "--key-dir", "keys"]
    first = run_cli(tmp_path, *args)
    assert first.returncode == 0, first.stderr
    assert re.fullmatch(r"digit 3 \(p=\d\.\d\d, label 3\) in \d+\.\d\d s\n", first.stdout), first.stdout
    assert first.stderr.startswith("made new keys in ") and "kept for the next call in keys/emulator-16384-" in first.stderr
    second = run_cli(tmp_path, *args, "--json")
    assert second.returncode == 0 and second.stderr == ""
    doc = json.loads(second.stdout)
    assert doc["keys"] == "reused" and doc["prediction"] == 3 and "load_keys" in doc["seconds"]
    verbose = run_cli(tmp_path, *args, "--verbose")
    lines = verbose.stdout.splitlines()
    assert len(lines) == 5 and lines[1].startswith("plaintext model: digit 3 (agrees") and "keys: reused" in lines[3]
    assert (tmp_path / "keys").stat().st_mode & 0o777 == 0o700
    assert_user_error(run_cli(tmp_path, *args, "--no-keep-keys"), "--key-dir has no use with --no-keep-keys")
