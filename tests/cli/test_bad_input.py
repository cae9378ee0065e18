"""The bad inputs issue 12 names, each through the real entry point: before, they hung, ran out
of memory, gave a traceback or a silently wrong result; now each is one ``error:`` line naming
what was wrong, exit 2, nothing written, at once."""

from __future__ import annotations

import gzip
import tempfile
from importlib import resources
from pathlib import Path

import pytest

from cli_contract import CLEAN, run_cli_forked


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bad-input")
    lines = "".join(f"{i * 0.01:.2f},10.0.0.{i % 9},{100 + i}\n" for i in range(3000)).encode()
    gz = gzip.compress(lines)
    (root / "cut.csv.gz").write_bytes(gz[: len(gz) // 2])
    (root / "latin1.txt").write_bytes(b"caf\xe9\n")
    (root / "deep.toml").write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    bsgs = resources.files("cryptoffload.profiles").joinpath("bsgs_u280.toml").read_text(encoding="utf-8")
    import re

    (root / "zero_diagonals.toml").write_text(re.sub(r"(diagonals\s*=\s*\{\s*value\s*=\s*)\d+", r"\g<1>0", bsgs))
    (root / "frac_diagonals.toml").write_text(re.sub(r"(diagonals\s*=\s*\{\s*value\s*=\s*)\d+", r"\g<1>2.5", bsgs))
    (root / "neg.toml").write_text(re.sub(r"(_s\s*=\s*\{\s*value\s*=\s*)([0-9.eE+-]+)", r"\g<1>-\2", bsgs, count=1))
    (root / "afile").write_text("x")
    (root / "adir").mkdir()
    return root


ATTACKS = [
    # hangs or memory exhaustion
    (["paillier", "keygen", "--out", "k.json", "--bits", "200000"], "8,192"),
    (["plan", "bsgs", "--devices", "100000000"], "--devices"),
    (["plan", "bsgs", "--diagonals", "1000000000"], "--diagonals"),
    (["trace", "generate", "--out", "t.csv", "--requests", "99999999999"], "--requests"),
    (["study", "fpga-reconfig", "--quick", "--requests", "99999999999"], "--requests"),
    # silently wrong results
    (["plan", "bsgs", "--diagonals", "0"], "--diagonals"),
    (["plan", "bsgs", "--profile", "{root}/zero_diagonals.toml"], "diagonals"),
    (["plan", "bsgs", "--profile", "{root}/frac_diagonals.toml"], "whole number"),
    (["plan", "bsgs", "--profile", "{root}/neg.toml"], "cannot be negative"),
    (["plan", "bsgs", "--diagonals", "2.5"], "--diagonals"),
    # tracebacks
    (["plan", "bsgs", "--profile", "{root}/deep.toml"], "nested too deeply"),
    (["trace", "inspect", "{root}/cut.csv.gz"], "truncated"),
    (["paillier", "encrypt", "--key", "{root}/latin1.txt", "--in", "{root}/latin1.txt", "--out", "c.bin"], "UTF-8"),
    (["trace", "generate", "--out", "{root}/nowhere/t.csv", "--requests", "10"], "does not exist"),
    (["trace", "generate", "--out", "{root}/adir", "--requests", "10"], "folder"),
    (["he-cnn", "client", "--url", "http://256.256.256.256:80", "--token-file", "{root}/afile"], "--url"),
    (["tls", "serve", "--root", "{root}/adir", "--host", "999.1.1.1"], "--host"),
    # checked after a server had started
    (["tls", "serve", "--root", "{root}/adir", "--workers", "1000000000000"], "--workers"),
]


@pytest.mark.parametrize("argv, needle", ATTACKS, ids=[" ".join(a[:3]) + f" {n}" for a, n in ATTACKS])
def test_named_attack_is_a_clean_error(files: Path, argv: list[str], needle: str) -> None:
    argv = [a.format(root=files) for a in argv]
    with tempfile.TemporaryDirectory(prefix="bad-input-") as work:
        outcome = run_cli_forked(argv, Path(work), watch=[files], timeout=60.0)
    assert outcome.verdict == CLEAN, outcome.describe()
    assert needle in outcome.stderr, outcome.stderr
