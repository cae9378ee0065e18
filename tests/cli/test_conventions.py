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

from cli_helpers import run_cli

STUDY = "--insecure-study-size"
CLI = [sys.executable, "-m", "cryptoffload.cli"]


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "COLUMNS": "200", "PYTHONWARNINGS": "ignore", **extra}


def test_shell_completion_is_on_and_completes_study_names(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from cryptoffload.cli import app

    # what `--install-completion` writes and `--show-completion` prints (for the shell it detects)
    script = CliRunner().invoke(app, [], prog_name="cryptoffload", env={"_CRYPTOFFLOAD_COMPLETE": "source_bash"})
    assert script.exit_code == 0 and "_CRYPTOFFLOAD_COMPLETE=complete_bash" in script.output
    done = CliRunner().invoke(app, [], prog_name="cryptoffload", env={
        "_CRYPTOFFLOAD_COMPLETE": "complete_bash", "COMP_WORDS": "cryptoffload study ri", "COMP_CWORD": "2"})
    assert done.exit_code == 0 and done.output.split() == ["ridge"]
    assert "--install-completion" in CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"}).output


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


def _main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``cryptoffload argv`` in this process (the CLI's modules are imported once for all)."""
    from cryptoffload.cli import main

    try:
        main(list(argv))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_quiet_leaves_results_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    k, m, c = tmp_path / "k.json", tmp_path / "m.txt", tmp_path / "c.bin"
    assert _main(capsys, "-q", "paillier", "keygen", "--out", str(k), "--bits", "1024", STUDY) == (0, "", "")
    m.write_text("5\n")
    assert _main(capsys, "paillier", "encrypt", "--key", f"{k}.pub", "--in", str(m), "--out", str(c), STUDY,
                 "--quiet") == (0, "", "")
    assert _main(capsys, "paillier", "decrypt", "--key", str(k), "--in", str(c), STUDY, "-q") == (0, "5\n", "")
    code, out, err = _main(capsys, "-q", "paillier", "decrypt", "--key", f"{k}.pub", "--in", str(c), STUDY)
    assert code == 2 and out == "" and err.startswith("error: ") and "holds a public key" in err
    code, out, err = _main(capsys, "paillier", "encrypt", "--key", f"{k}.pub", "--in", str(m), "--out",
                           str(tmp_path / "d.bin"), STUDY)
    assert code == 0 and out == "" and err.startswith("wrote ")  # without --quiet: the status line


def test_prose_follows_columns(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "50")
    code, out, _ = _main(capsys, "study", "list")
    assert code == 0 and out.count("\n") > 6 and max(len(line) for line in out.splitlines()) <= 50


def test_did_you_mean_for_studies_and_commands(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, needle in ((["study", "ridg"], "No such command 'ridg'. Did you mean 'ridge'?"),
                         (["he-cnn", "infr"], "Did you mean 'infer'")):
        code, _, err = _main(capsys, *argv)
        assert code == 2 and len(err.splitlines()) == 1 and needle in err, err


def test_infer_answers_in_one_line_and_keeps_its_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The emulator (exact arithmetic) keeps this fast; SEAL's key set is the same kind of file."""
    monkeypatch.setenv("COLUMNS", "400")  # the status line whole (it names a long temporary path)
    keys = tmp_path / "keys"
    args = ["he-cnn", "infer", "--image", "3", "--backend", "emulator", "--key-dir", str(keys)]
    code, out, err = _main(capsys, *args)
    assert code == 0, err
    assert re.fullmatch(r"digit 3 \(p=\d\.\d\d, label 3\) in \d+\.\d\d s\n", out), out
    assert err.startswith("made new keys in ") and f"kept for the next call in {keys}/emulator-16384-" in err
    code, out, err = _main(capsys, *args, "--json")
    doc = json.loads(out)
    assert code == 0 and err == "" and doc["keys"] == "reused" and doc["prediction"] == 3 and "load_keys" in doc["seconds"]
    code, out, _ = _main(capsys, *args, "--verbose")
    lines = out.splitlines()
    assert len(lines) == 5 and lines[1].startswith("plaintext model: digit 3 (agrees") and "keys: reused" in lines[3]
    assert keys.stat().st_mode & 0o777 == 0o700
    code, _, err = _main(capsys, *args, "--no-keep-keys")
    assert code == 2 and "--key-dir has no use with --no-keep-keys" in err
