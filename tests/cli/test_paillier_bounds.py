"""``cryptoffload paillier`` and the bound each ciphertext file records (issue 32), through the
real entry point: every refusal is exit 2 with one ``error:`` line and no ``--out`` left behind.

The attacks: ``paillier sum`` of values whose true total passed n, and ``mul --scalar`` whose
product did, decrypted to a small wrong number with exit 0. Now the bound the operands record
refuses the operation before it is computed, and ``decrypt`` refuses a value outside its file's
bound (a hand-edited bound included)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import assert_user_error, run_cli

from cryptoffload.crypto import paillier as pl
from cryptoffload.crypto.paillier import framing

STUDY = "--insecure-study-size"


@pytest.fixture()
def keyed(tmp_path: Path) -> tuple[Path, pl.PublicKey]:
    pk, sk = pl.generate_keypair(1024, insecure_study_size=True)
    pl.save_keypair(pk, sk, tmp_path / "k.json", tmp_path / "k.pub")
    return tmp_path, pk


def _encrypt(root: Path, name: str, values: list[int], *bound: str) -> None:
    (root / f"{name}.txt").write_text("".join(f"{v}\n" for v in values))
    proc = run_cli(root, "paillier", "encrypt", "--key", "k.pub", "--in", f"{name}.txt", "--out", f"{name}.bin",
                   *(("--bound", bound[0]) if bound else ()), STUDY)
    assert proc.returncode == 0, proc.stderr


def _listing(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir())


def _rebound(root: Path, src: str, dst: str, pk: pl.PublicKey, bound: int, *, redo_checksum: bool = True) -> None:
    data = (root / src).read_bytes()
    start, size = framing._HEADER.size, framing.bound_bytes(pk)
    body = data[:start] + bound.to_bytes(size, "big") + data[start + size:-16]
    (root / dst).write_bytes(body + (framing._checksum(body) if redo_checksum else data[-16:]))


def test_a_sum_past_the_limit_is_refused_and_writes_nothing(keyed) -> None:
    root, pk = keyed
    big = pk.max_int - 1
    _encrypt(root, "big", [big, big, big, big], str(big))
    before = _listing(root)
    line = assert_user_error(run_cli(root, "paillier", "sum", "--key", "k.pub", "--in", "big.bin", "--out", "s.bin",
                                     STUDY))
    assert line.startswith("error: sum of 4 values (count x bound of each file): the result could reach about 2^")
    assert "past this 1024-bit key's signed limit n/3 (about 2^" in line and "sum fewer values" in line
    assert "use a larger key" in line
    _encrypt(root, "many", [1] * 50)  # the default bound 2^64 each: 50 x 2^64, far below n/3
    proc = run_cli(root, "paillier", "sum", "--key", "k.pub", "--in", "many.bin", "--in", "many.bin", "--out",
                   "m.bin", STUDY)
    assert proc.returncode == 0, proc.stderr
    assert not (root / "s.bin").exists() and _listing(root) == sorted(before + ["many.txt", "many.bin", "m.bin"])
    proc = run_cli(root, "paillier", "decrypt", "--key", "k.json", "--in", "m.bin", STUDY)
    assert (proc.returncode, proc.stdout) == (0, "100\n")


def test_an_add_or_mul_past_the_limit_is_refused_and_writes_nothing(keyed) -> None:
    root, pk = keyed
    half = pk.max_int // 2 + 1
    _encrypt(root, "h", [half, -half], str(half))
    _encrypt(root, "d", [7, -7])
    before = _listing(root)
    assert_user_error(run_cli(root, "paillier", "add", "--key", "k.pub", "--in", "h.bin", "--in", "h.bin", "--out",
                              "a.bin", STUDY), "add of 2 files (the sum of their bounds)", "signed limit n/3",
                      "add fewer files")
    assert_user_error(run_cli(root, "paillier", "mul", "--key", "k.pub", "--in", "h.bin", "--scalar", "2", "--out",
                              "p.bin", STUDY), "mul --scalar of 2 bits", "signed limit n/3", "smaller scalar")
    assert_user_error(run_cli(root, "paillier", "mul", "--key", "k.pub", "--in", "d.bin", "--scalar", str(1 << 1000),
                              "--out", "p.bin", STUDY),
                      "mul --scalar of 1,001 bits (|k| x the file's bound 18,446,744,073,709,551,616): the result could "
                      "reach about 2^1064.000")
    assert _listing(root) == before
    proc = run_cli(root, "paillier", "mul", "--key", "k.pub", "--in", "h.bin", "--scalar", "-1", "--out", "p.bin",
                   STUDY)
    assert proc.returncode == 0, proc.stderr
    proc = run_cli(root, "paillier", "decrypt", "--key", "k.json", "--in", "p.bin", STUDY)
    assert proc.stdout.split() == [str(-half), str(half)]


def test_a_hand_edited_bound_is_refused_by_decrypt(keyed) -> None:
    """Edited by hand, the checksum catches it; edited with the (unkeyed) checksum redone, a
    lower bound makes decrypt refuse the values past it -- naming the file, the value and the
    bound -- and print or write nothing."""
    root, pk = keyed
    _encrypt(root, "c", [5, 1000, -3], "1000")
    _rebound(root, "c.bin", "hand.bin", pk, 10, redo_checksum=False)
    assert_user_error(run_cli(root, "paillier", "decrypt", "--key", "k.json", "--in", "hand.bin", STUDY),
                      "--in hand.bin: ciphertext data is corrupted (checksum mismatch)")
    _rebound(root, "c.bin", "low.bin", pk, 10)
    for out in ((), ("--out", "p.txt"), ("--json",)):
        proc = run_cli(root, "paillier", "decrypt", "--key", "k.json", "--in", "low.bin", *out, STUDY)
        assert_user_error(proc, "--in low.bin: value 2 of 3 decrypts outside the file's bound |m| <= 10: the file "
                          "does not hold what its header says")
        assert proc.stdout == "" and not (root / "p.txt").exists()
    _rebound(root, "c.bin", "over.bin", pk, pk.max_int + 1)
    assert_user_error(run_cli(root, "paillier", "decrypt", "--key", "k.json", "--in", "over.bin", STUDY),
                      "--in over.bin:", "above the key's signed limit n/3")
    assert_user_error(run_cli(root, "paillier", "sum", "--key", "k.pub", "--in", "over.bin", "--out", "s.bin", STUDY),
                      "--in over.bin:", "above the key's signed limit n/3")
    assert not (root / "s.bin").exists()


def test_a_file_without_a_bound_is_read_with_n_over_3_and_says_so(keyed) -> None:
    """A version 2 file (before bounds): decrypt reads it, checked against n/3 only, and says so
    on stderr; arithmetic that could pass n/3 with it is refused, naming the file and the fix."""
    root, pk = keyed
    cts = pl.ENCRYPTION.encrypt_many(pk, [pl.encode_signed(pk, v) for v in (4, -9)])
    body = framing._HEADER.pack(pl.CIPHERTEXT_MAGIC, 2, pk.fingerprint, 2) + b"".join(
        c.value.to_bytes(pk.ciphertext_bytes, "big") for c in cts)
    (root / "old.bin").write_bytes(body + framing._checksum(body))
    proc = run_cli(root, "paillier", "decrypt", "--key", "k.json", "--in", "old.bin", STUDY)
    assert proc.returncode == 0 and proc.stdout == "4\n-9\n"
    assert proc.stderr.startswith("note: old.bin has ciphertext format version 2, which records no bound: its values "
                                  "were checked against the key's signed limit n/3")
    proc = run_cli(root, "paillier", "decrypt", "--key", "k.json", "--in", "old.bin", "--json", STUDY)
    doc = json.loads(proc.stdout)
    assert (doc["values"], doc["bound"], doc["bound_recorded"]) == (["4", "-9"], str(pk.max_int), False)
    assert_user_error(run_cli(root, "paillier", "mul", "--key", "k.pub", "--in", "old.bin", "--scalar", "2", "--out",
                              "p.bin", STUDY), "old.bin records no bound (format version 2)", "encrypt it again")
    assert not (root / "p.bin").exists()


@pytest.mark.parametrize("option, value, needle", [
    ("--bound", "-1", "--bound must be at least 0"),
    ("--bound", "1_000", "--bound must be an integer (ASCII digits, optional sign), got '1_000'"),
    ("--bound", "\u0661\u0662", "--bound must be an integer"),
    ("--bound", "1e3", "--bound must be an integer"),
    ("--bound", str(1 << 1100), "--bound: bound about 2^1100.000 is above this 1024-bit key's signed limit n/3"),
    ("--bound", "4", "m.txt: value 2 is a 3-bit integer, above --bound 4"),
])
def test_bad_bounds_are_refused_before_encrypting(keyed, option: str, value: str, needle: str) -> None:
    root, _ = keyed
    (root / "m.txt").write_text("3\n-5\n")
    assert_user_error(run_cli(root, "paillier", "encrypt", "--key", "k.pub", "--in", "m.txt", "--out", "c.bin",
                              option, value, STUDY), needle)
    assert not (root / "c.bin").exists()


@pytest.mark.parametrize("value", ["1_000", "\uff12", "2.0", " "])
def test_a_scalar_outside_the_integer_grammar_is_refused(keyed, value: str) -> None:
    root, _ = keyed
    _encrypt(root, "c", [1])
    assert_user_error(run_cli(root, "paillier", "mul", "--key", "k.pub", "--in", "c.bin", "--scalar", value, "--out",
                              "p.bin", STUDY), "--scalar must be an integer (ASCII digits, optional sign)")
    assert not (root / "p.bin").exists()
