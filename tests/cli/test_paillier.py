"""``cryptoffload paillier``: keygen, encrypt, decrypt through files, and one-line errors on bad input."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import assert_user_error, run_cli


def test_paillier_keygen_encrypt_decrypt_round_trip(tmp_path: Path) -> None:
    proc = run_cli(tmp_path, "paillier", "keygen", "--out", "sk.json", "--bits", "1024")
    assert_user_error(proc, "insecure-study-size")
    assert not (tmp_path / "sk.json").exists()
    proc = run_cli(tmp_path, "paillier", "keygen", "--out", "sk.json", "--bits", "1024", "--insecure-study-size")
    assert proc.returncode == 0, proc.stderr
    assert oct((tmp_path / "sk.json").stat().st_mode & 0o777) == "0o600"
    assert "p" not in json.loads((tmp_path / "sk.json.pub").read_text())
    (tmp_path / "m.txt").write_text("5\n-17\n\n123456789012345678901234567890\n")
    proc = run_cli(tmp_path, "paillier", "encrypt", "--key", "sk.json.pub", "--in", "m.txt", "--out", "c.bin",
                   "--insecure-study-size")
    assert proc.returncode == 0, proc.stderr
    proc = run_cli(tmp_path, "paillier", "decrypt", "--key", "sk.json", "--in", "c.bin", "--insecure-study-size")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["5", "-17", "123456789012345678901234567890"]
    # refuse to overwrite a key
    assert_user_error(run_cli(tmp_path, "paillier", "keygen", "--out", "sk.json", "--bits", "1024", "--insecure-study-size"),
                      "exists")


STUDY = "--insecure-study-size"


def test_paillier_bad_input_is_one_line(tmp_path: Path) -> None:
    for name in ("a", "b"):
        proc = run_cli(tmp_path, "paillier", "keygen", "--out", f"{name}.json", "--bits", "1024", "--insecure-study-size")
        assert proc.returncode == 0, proc.stderr
    (tmp_path / "m.txt").write_text("1\n2\n")
    assert run_cli(tmp_path, "paillier", "encrypt", "--key", "a.json.pub", "--in", "m.txt", "--out", "c.bin", STUDY).returncode == 0
    data = (tmp_path / "c.bin").read_bytes()
    assert_user_error(run_cli(tmp_path, "paillier", "decrypt", "--key", "b.json", "--in", "c.bin", STUDY), "not this key")
    (tmp_path / "t.bin").write_bytes(data[:-3])
    assert_user_error(run_cli(tmp_path, "paillier", "decrypt", "--key", "a.json", "--in", "t.bin", STUDY), "truncated")
    (tmp_path / "g.bin").write_bytes(b"XXXX" + data[4:])
    assert_user_error(run_cli(tmp_path, "paillier", "decrypt", "--key", "a.json", "--in", "g.bin", STUDY), "bad header")
    assert_user_error(run_cli(tmp_path, "paillier", "decrypt", "--key", "a.json.pub", "--in", "c.bin", STUDY), "private key")
    (tmp_path / "bad.txt").write_text("1\nx2\n")
    assert_user_error(run_cli(tmp_path, "paillier", "encrypt", "--key", "a.json", "--in", "bad.txt", "--out", "o.bin", STUDY),
                      "bad.txt:2")
    assert not (tmp_path / "o.bin").exists()
    (tmp_path / "big.txt").write_text(str(2**1100) + "\n")
    assert_user_error(run_cli(tmp_path, "paillier", "encrypt", "--key", "a.json", "--in", "big.txt", "--out", "o.bin", STUDY),
                      "too large")
    assert not (tmp_path / "o.bin").exists()
    (tmp_path / "k.json").write_text('{"format": "cryptoffload-paillier", "version": 1')
    assert_user_error(run_cli(tmp_path, "paillier", "encrypt", "--key", "k.json", "--in", "m.txt", "--out", "o.bin", STUDY), "JSON")
    assert_user_error(run_cli(tmp_path, "paillier", "encrypt", "--key", "a.json", "--in", "m.txt", "--out", "o.bin",
                          "--backend", "qat", STUDY), "unknown Paillier backend")


def test_paillier_attacks_refused(tmp_path: Path) -> None:
    """issue 12's attacks on the Paillier CLI: one path for both keys, a private key others can
    read, a flipped bit in a ciphertext file, a key size that would hang keygen."""
    proc = run_cli(tmp_path, "paillier", "keygen", "--out", "k.json", "--public-out", "k.json", "--bits", "1024", STUDY)
    assert_user_error(proc, "same file")
    (tmp_path / "d").mkdir()
    proc = run_cli(tmp_path, "paillier", "keygen", "--out", "k.json", "--public-out", "d/../k.json", "--bits", "1024",
                   STUDY)
    assert_user_error(proc, "same file")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]
    assert_user_error(run_cli(tmp_path, "paillier", "keygen", "--out", "h.json", "--bits", "200000"), "8192-bit limit")
    assert run_cli(tmp_path, "paillier", "keygen", "--out", "k.json", "--bits", "1024", STUDY).returncode == 0
    (tmp_path / "m.txt").write_text("1\n-2\n3\n")
    assert run_cli(tmp_path, "paillier", "encrypt", "--key", "k.json.pub", "--in", "m.txt", "--out", "c.bin",
                   STUDY).returncode == 0
    proc = run_cli(tmp_path, "paillier", "decrypt", "--key", "k.json", "--in", "c.bin", "--out", "p.txt", STUDY)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "p.txt").read_text().split() == ["1", "-2", "3"]
    assert (tmp_path / "p.txt").stat().st_mode & 0o777 == 0o600  # plaintexts: owner only
    for bad_out in ("nowhere/p.txt", "d"):
        assert_user_error(run_cli(tmp_path, "paillier", "decrypt", "--key", "k.json", "--in", "c.bin", "--out", bad_out,
                                  STUDY), "cannot write")
    assert not (tmp_path / "nowhere").exists() and list((tmp_path / "d").iterdir()) == []
    data = bytearray((tmp_path / "c.bin").read_bytes())
    data[len(data) // 2] ^= 0x04  # inside the second ciphertext's body
    (tmp_path / "c.bin").write_bytes(bytes(data))
    assert_user_error(run_cli(tmp_path, "paillier", "decrypt", "--key", "k.json", "--in", "c.bin", STUDY), "checksum")
    (tmp_path / "k.json").chmod(0o644)
    assert_user_error(run_cli(tmp_path, "paillier", "decrypt", "--key", "k.json", "--in", "c.bin", STUDY),
                      "chmod 600 k.json")
    (tmp_path / "latin1.txt").write_bytes(b"1\n\xe9\n")
    assert_user_error(run_cli(tmp_path, "paillier", "encrypt", "--key", "k.json.pub", "--in", "latin1.txt", "--out",
                              "o.bin", STUDY), "not UTF-8")
    assert not (tmp_path / "o.bin").exists()


def _rewrite_hs(path: Path, hs: int) -> None:
    """The key file with another h_s and its checksum redone (a forged or buggy key, not a
    flipped bit: only the value checks can catch it)."""
    from cryptoffload.crypto import paillier as pl

    d = json.loads(path.read_text())
    d["hs"] = format(hs, "x")
    d["checksums"]["hs"] = pl.field_checksum("hs", hs)
    path.write_text(json.dumps(d))


def test_paillier_issue_22_attacks_refused(tmp_path: Path) -> None:
    """issue 22: a degenerate h_s (1, n^2 - 1) and a flipped bit in h_s were accepted; `encrypt
    --in` a FIFO hung and `decrypt --in /dev/zero` ran out of memory; `--out` naming the key
    (also through a symlink or a hard link) replaced it; `keygen --out .` was a traceback."""
    import os

    assert run_cli(tmp_path, "paillier", "keygen", "--out", "k.json", "--bits", "1024", STUDY).returncode == 0
    (tmp_path / "m.txt").write_text("1\n-2\n")
    key_text = (tmp_path / "k.json").read_text()
    n = int(json.loads(key_text)["n"], 16)
    for hs in (1, n * n - 1):
        (tmp_path / "bad.pub").write_text((tmp_path / "k.json.pub").read_text())
        _rewrite_hs(tmp_path / "bad.pub", hs)
        assert_user_error(run_cli(tmp_path, "paillier", "encrypt", "--key", "bad.pub", "--in", "m.txt", "--out", "c.bin",
                                  STUDY), "h_s", "paillier keygen")
    assert not (tmp_path / "c.bin").exists()
    assert run_cli(tmp_path, "paillier", "encrypt", "--key", "k.json.pub", "--in", "m.txt", "--out", "c.bin",
                   STUDY).returncode == 0
    d = json.loads(key_text)
    d["hs"] = d["hs"][:-1] + format(int(d["hs"][-1], 16) ^ 1, "x")  # one flipped bit in h_s
    (tmp_path / "flipped.json").write_text(json.dumps(d))
    (tmp_path / "flipped.json").chmod(0o600)
    assert_user_error(run_cli(tmp_path, "paillier", "decrypt", "--key", "flipped.json", "--in", "c.bin", STUDY),
                      "field 'hs'")
    os.mkfifo(tmp_path / "fifo")
    assert_user_error(run_cli(tmp_path, "paillier", "encrypt", "--key", "k.json.pub", "--in", "fifo", "--out", "o.bin",
                              STUDY, timeout=60), "fifo is not a regular file")
    assert_user_error(run_cli(tmp_path, "paillier", "decrypt", "--key", "k.json", "--in", "/dev/zero", STUDY,
                              timeout=60), "/dev/zero is not a regular file")
    os.symlink("k.json", tmp_path / "sym.json")
    os.link(tmp_path / "k.json", tmp_path / "hard.json")
    os.link(tmp_path / "m.txt", tmp_path / "hard.txt")
    for cmd, out in (("encrypt", "k.json"), ("encrypt", "sym.json"), ("encrypt", "hard.json"), ("encrypt", "hard.txt"),
                     ("decrypt", "k.json"), ("decrypt", "hard.json"), ("decrypt", "c.bin")):
        infile = "m.txt" if cmd == "encrypt" else "c.bin"
        assert_user_error(run_cli(tmp_path, "paillier", cmd, "--key", "k.json", "--in", infile, "--out", out, STUDY),
                          "same file", "--out")
    assert (tmp_path / "k.json").read_text() == key_text and (tmp_path / "m.txt").read_text() == "1\n-2\n"
    for folder in (".", str(tmp_path)):
        assert_user_error(run_cli(tmp_path, "paillier", "keygen", "--out", folder, "--bits", "1024", STUDY),
                          "is a folder")
