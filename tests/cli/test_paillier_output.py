"""``cryptoffload paillier``'s output read by another program (issue 32): values one per line,
never wrapped whatever the terminal or ``COLUMNS``; stdout carrying data only (status lines on
stderr); ``--json`` on every command, parsed by ``json.loads``.

The attack: ``paillier decrypt`` printed through rich's console, which wraps a line at its
width (200 on a pipe): a 2048-bit plaintext (up to 617 digits) came out as four lines, so
``decrypt | wc -l`` counted four values per value and the next command read numbers that were
never encrypted, with exit 0."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import run_cli

from cryptoffload.crypto import paillier as pl

STUDY = "--insecure-study-size"


@pytest.fixture(scope="module")
def wide(tmp_path_factory) -> tuple[Path, list[int]]:
    """A 2048-bit key (what users have: no study flag) and a file of values up to 2,040 bits
    (612 digits), made through the CLI itself."""
    root = tmp_path_factory.mktemp("paillier-wide")
    proc = run_cli(root, "paillier", "keygen", "--out", "k.json")
    assert proc.returncode == 0, proc.stderr
    values = [(1 << 2040) - 12345, -(1 << 2039) - 7, 0, 1, -1] + [(1 << 2030) + i for i in range(195)]
    (root / "m.txt").write_text("".join(f"{v}\n" for v in values))
    proc = run_cli(root, "paillier", "encrypt", "--key", "k.json.pub", "--in", "m.txt", "--out", "c.bin",
                   "--bound", str(1 << 2040))
    assert proc.returncode == 0, proc.stderr
    return root, values


def _cli(*args: str) -> str:
    return " ".join([sys.executable, "-m", "cryptoffload.cli", *args])


def _env(columns: int) -> dict[str, str]:
    return {**os.environ, "COLUMNS": str(columns), "PYTHONWARNINGS": "ignore"}


def test_decrypt_piped_to_wc_counts_exactly_the_values(wide) -> None:
    root, values = wide
    proc = subprocess.run(_cli("paillier", "decrypt", "--key", "k.json", "--in", "c.bin") + " | wc -l", shell=True,
                          cwd=root, env=_env(20), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(len(values)) == "200"
    assert proc.stderr == ""
    proc = run_cli(root, "paillier", "decrypt", "--key", "k.json", "--in", "c.bin", columns=20)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [str(v) for v in values]  # each whole, in order, nothing else


def test_decrypt_on_a_narrow_terminal_prints_each_value_whole(wide) -> None:
    """A terminal 20 columns wide (a pseudo-terminal): still one value a line -- the terminal
    may fold a long line on screen, but the bytes hold no line break inside a value."""
    import fcntl
    import pty
    import struct
    import termios

    root, values = wide
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 20, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "cryptoffload.cli", "paillier", "decrypt", "--key", "k.json", "--in",
                             "c.bin"], cwd=root, env=_env(20), stdin=subprocess.DEVNULL, stdout=follower,
                            stderr=subprocess.PIPE)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 1 << 16)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert proc.wait(timeout=300) == 0, proc.stderr.read() if proc.stderr else ""
    lines = b"".join(chunks).decode().replace("\r\n", "\n").splitlines()
    assert lines == [str(v) for v in values]


def test_decrypt_to_a_reader_that_stops_early_is_no_traceback(wide) -> None:
    """`decrypt | head -1` (the reader leaves after one line of 120 KB): the broken pipe ends
    the command quietly, as it would a C program."""
    root, values = wide
    proc = subprocess.run("set -o pipefail; " + _cli("paillier", "decrypt", "--key", "k.json", "--in", "c.bin")
                          + " | head -1", shell=True, executable="/bin/bash", cwd=root, env=_env(80),
                          capture_output=True, text=True, timeout=300)
    assert proc.stdout == f"{values[0]}\n"
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    assert proc.returncode in (0, 141), proc.stderr


def test_decrypt_json_holds_every_value_exactly(wide) -> None:
    root, values = wide
    proc = run_cli(root, "paillier", "decrypt", "--key", "k.json", "--in", "c.bin", "--json", columns=20)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    fingerprint = json.loads((root / "k.json.pub").read_text())["fingerprint"]
    assert doc == {"values": [str(v) for v in values], "count": 200, "bound": str(1 << 2040), "bound_recorded": True,
                   "key": fingerprint, "fixed_point": None}
    assert proc.stderr == ""
    proc = run_cli(root, "paillier", "decrypt", "--key", "k.json", "--in", "c.bin", "--json", "--out", "p.txt")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"out": "p.txt", "count": 200, "bound": str(1 << 2040), "bound_recorded": True,
                                       "key": fingerprint, "fixed_point": None}
    assert (root / "p.txt").read_text().splitlines() == [str(v) for v in values]


def test_every_command_has_json_and_keeps_stdout_for_data(tmp_path: Path) -> None:
    """keygen, encrypt, add, sum and mul with --json print one JSON object describing what was
    written (and nothing on stderr); without it, stdout stays empty and the status line goes
    to stderr."""
    proc = run_cli(tmp_path, "paillier", "keygen", "--out", "k.json", "--bits", "1024", STUDY, "--json")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    key = json.loads(proc.stdout)
    fingerprint = json.loads((tmp_path / "k.json.pub").read_text())["fingerprint"]
    assert key == {"private_key": "k.json", "public_key": "k.json.pub", "bits": 1024, "key": fingerprint}
    (tmp_path / "m.txt").write_text("5\n-17\n100\n")
    proc = run_cli(tmp_path, "paillier", "encrypt", "--key", "k.json.pub", "--in", "m.txt", "--out", "c.bin",
                   "--bound", "100", STUDY, "--json")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    enc = json.loads(proc.stdout)
    assert enc.pop("backend") and enc == {"out": "c.bin", "count": 3, "bound": "100",
                                          "format_version": pl.CIPHERTEXT_VERSION, "key": fingerprint,
                                          "fixed_point": None}
    for args, expected in (
            (["add", "--in", "c.bin", "--in", "c.bin", "--out", "a.bin"],
             {"operation": "add", "count": 3, "bound": "200", "inputs": ["c.bin", "c.bin"], "rerandomized": True}),
            (["sum", "--no-rerandomize", "--in", "c.bin", "--in", "a.bin", "--out", "s.bin"],
             {"operation": "sum", "count": 1, "bound": "900", "inputs": ["c.bin", "a.bin"], "rerandomized": False}),
            (["mul", "--in", "s.bin", "--scalar", "-3", "--out", "p.bin"],
             {"operation": "mul", "count": 1, "bound": "2700", "inputs": ["s.bin"], "rerandomized": True,
              "scalar": "-3"})):
        proc = run_cli(tmp_path, "paillier", args[0], "--key", "k.json.pub", *args[1:], STUDY, "--json")
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
        assert json.loads(proc.stdout) == {**expected, "out": args[args.index("--out") + 1], "key": fingerprint}
        proc = run_cli(tmp_path, "paillier", args[0], "--key", "k.json.pub", *args[1:-1], "x" + args[-1], STUDY)
        assert proc.returncode == 0 and proc.stdout == "" and proc.stderr.startswith("wrote x"), proc.stderr
    proc = run_cli(tmp_path, "paillier", "decrypt", "--key", "k.json", "--in", "p.bin", STUDY)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "-792\n", "")  # -3 x (88 + 2 x 88)
    proc = run_cli(tmp_path, "paillier", "decrypt", "--key", "k.json", "--in", "p.bin", "--out", "p.txt", STUDY)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "wrote p.txt: 1 integers\n")
