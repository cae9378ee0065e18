"""``cryptoffload paillier``: keygen, encrypt, decrypt through files, and one-line errors on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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
    assert_user_error(proc, "m.txt: value 3 is a 97-bit integer, above the default bound 18,446,744,073,709,551,616; "
                      "give --bound")
    assert not (tmp_path / "c.bin").exists()
    proc = run_cli(tmp_path, "paillier", "encrypt", "--key", "sk.json.pub", "--in", "m.txt", "--out", "c.bin",
                   "--bound", "123456789012345678901234567890", "--insecure-study-size")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "" and proc.stderr.startswith("wrote c.bin: 3 ciphertexts, bound about 2^96.640 (")
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
    assert_user_error(run_cli(tmp_path, "paillier", "keygen", "--out", "h.json", "--bits", "200000"), "between 512 and 8,192 bits")
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


def _keys_and_files(tmp_path: Path, *named: tuple[str, str, str]) -> None:
    """Keys a and b (1024-bit), then for each (file, key, text) the integers encrypted."""
    for name in ("a", "b"):
        assert run_cli(tmp_path, "paillier", "keygen", "--out", f"{name}.json", "--bits", "1024",
                       STUDY).returncode == 0
    for out, key, text in named:
        (tmp_path / f"{out}.txt").write_text(text)
        proc = run_cli(tmp_path, "paillier", "encrypt", "--key", f"{key}.json.pub", "--in", f"{out}.txt", "--out", out,
                       STUDY)
        assert proc.returncode == 0, proc.stderr


def _decrypted(tmp_path: Path, key: str, infile: str) -> list[str]:
    proc = run_cli(tmp_path, "paillier", "decrypt", "--key", f"{key}.json", "--in", infile, STUDY)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


@pytest.mark.slow
def test_paillier_add_sum_mul_on_files(tmp_path: Path) -> None:
    """issue 25: homomorphic arithmetic on ciphertext files with the public key only."""
    _keys_and_files(tmp_path, ("x.bin", "a", "5\n-17\n100\n"), ("y.bin", "a", "1\n2\n-300\n"))
    proc = run_cli(tmp_path, "paillier", "add", "--key", "a.json.pub", "--in", "x.bin", "--in", "y.bin", "--out", "s.bin",
                   STUDY)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""  # status on stderr: stdout carries data only
    assert proc.stderr.strip() == (f"wrote s.bin: 3 ciphertexts (from 2 files, key {_fingerprint(tmp_path, 'a')[:16]}, "
                                   f"bound 36,893,488,147,419,103,232)")  # 2^64 + 2^64: the default bound, twice
    assert _decrypted(tmp_path, "a", "s.bin") == ["6", "-15", "-200"]
    proc = run_cli(tmp_path, "paillier", "sum", "--key", "a.json", "--in", "x.bin", "--in", "y.bin", "--out", "t.bin",
                   STUDY)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.startswith("wrote t.bin: 1 ciphertext (from 2 files")
    assert proc.stderr.strip().endswith("bound 110,680,464,442,257,309,696)")  # 6 values x 2^64
    assert _decrypted(tmp_path, "a", "t.bin") == ["-209"]
    proc = run_cli(tmp_path, "paillier", "mul", "--key", "a.json.pub", "--in", "x.bin", "--scalar", "-3", "--out", "m.bin",
                   STUDY)
    assert proc.returncode == 0, proc.stderr
    assert _decrypted(tmp_path, "a", "m.bin") == ["-15", "51", "-300"]
    proc = run_cli(tmp_path, "paillier", "mul", "--key", "a.json.pub", "--in", "m.bin", "--scalar", "0", "--out", "z.bin",
                   "--no-rerandomize", STUDY)
    assert proc.returncode == 0, proc.stderr
    assert _decrypted(tmp_path, "a", "z.bin") == ["0", "0", "0"]


def _fingerprint(tmp_path: Path, key: str) -> str:
    return json.loads((tmp_path / f"{key}.json.pub").read_text())["fingerprint"]


def test_paillier_arithmetic_refuses_mismatched_operands(tmp_path: Path) -> None:
    _keys_and_files(tmp_path, ("x.bin", "a", "1\n2\n3\n"), ("short.bin", "a", "1\n2\n"), ("theirs.bin", "b", "1\n2\n3\n"))
    before = sorted(p.name for p in tmp_path.iterdir())
    line = assert_user_error(run_cli(tmp_path, "paillier", "add", "--key", "a.json.pub", "--in", "x.bin", "--in",
                                     "theirs.bin", "--out", "o.bin", STUDY))
    assert line == (f"error: --in theirs.bin: ciphertexts were made under key {_fingerprint(tmp_path, 'b')}, not this "
                    f"key {_fingerprint(tmp_path, 'a')} (the --key given); every operand must be encrypted under that "
                    f"one key")
    assert_user_error(run_cli(tmp_path, "paillier", "sum", "--key", "b.json.pub", "--in", "theirs.bin", "--in", "x.bin",
                              "--out", "o.bin", STUDY), "--in x.bin: ciphertexts were made under key")
    assert_user_error(run_cli(tmp_path, "paillier", "mul", "--key", "b.json.pub", "--in", "x.bin", "--scalar", "2",
                              "--out", "o.bin", STUDY), "--in x.bin", "not this key")
    assert_user_error(run_cli(tmp_path, "paillier", "add", "--key", "a.json.pub", "--in", "x.bin", "--in", "short.bin",
                              "--out", "o.bin", STUDY), "--in x.bin holds 3 ciphertexts and --in short.bin 2")
    assert_user_error(run_cli(tmp_path, "paillier", "add", "--key", "a.json.pub", "--in", "x.bin", "--out", "o.bin",
                              STUDY), "add needs at least 2 --in files, got 1")
    assert_user_error(run_cli(tmp_path, "paillier", "mul", "--key", "a.json.pub", "--in", "x.bin", "--scalar",
                              str(1 << 1100), "--out", "o.bin", STUDY), "--scalar is a 1101-bit integer")
    for out in ("x.bin", "a.json.pub"):  # --out naming an operand or the key
        assert_user_error(run_cli(tmp_path, "paillier", "add", "--key", "a.json.pub", "--in", "x.bin", "--in", "x.bin",
                                  "--out", out, STUDY), "same file", "--out")
    data = bytearray((tmp_path / "x.bin").read_bytes())
    data[len(data) // 2] ^= 0x04
    (tmp_path / "flip.bin").write_bytes(bytes(data))
    assert_user_error(run_cli(tmp_path, "paillier", "sum", "--key", "a.json.pub", "--in", "flip.bin", "--out", "o.bin",
                              STUDY), "--in flip.bin", "checksum")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(before + ["flip.bin"])  # nothing written


def test_paillier_encrypt_a_csv_column(tmp_path: Path) -> None:
    """issue 25: `encrypt --column NAME` reads one named column of a CSV with a header line."""
    _keys_and_files(tmp_path)
    (tmp_path / "d.csv").write_text('id,amount,name\n1,10,a\n2,-3,"b, c"\n\n3,7,d\n')
    proc = run_cli(tmp_path, "paillier", "encrypt", "--key", "a.json.pub", "--in", "d.csv", "--column", "amount",
                   "--out", "d.bin", STUDY)
    assert proc.returncode == 0, proc.stderr
    assert _decrypted(tmp_path, "a", "d.bin") == ["10", "-3", "7"]
    assert_user_error(run_cli(tmp_path, "paillier", "encrypt", "--key", "a.json.pub", "--in", "d.csv", "--column", "amt",
                              "--out", "o.bin", STUDY),
                      "d.csv: no column 'amt' in the header line (columns: 'id', 'amount', 'name')")
    assert_user_error(run_cli(tmp_path, "paillier", "encrypt", "--key", "a.json.pub", "--in", "d.csv", "--column", "name",
                              "--out", "o.bin", STUDY), "d.csv:2: column 'name': must be an integer (ASCII digits, optional sign), got 'a'")
    assert not (tmp_path / "o.bin").exists()


def test_paillier_encrypt_resolves_the_backend_once(tmp_path: Path, monkeypatch) -> None:
    """issue 25: one `paillier encrypt` resolved its backend four times (twice itself, then
    once per encryptor it asked the key for: one to encrypt, one to describe); issue 36: the key
    resolved it again, and so did the encryptor. Now the command asks the encryption service
    for one encryptor, which resolves `auto` once (counted wherever a resolution could happen),
    and that encryptor both encrypts and is described."""
    from typer.testing import CliRunner

    from cryptoffload.cli import app
    from cryptoffload.crypto import paillier as pl
    from cryptoffload.crypto.paillier import encryptor as encryptor_module
    from cryptoffload.crypto.paillier import service

    pk, sk = pl.generate_keypair(1024, insecure_study_size=True)
    pl.save_keypair(pk, sk, tmp_path / "k.json", tmp_path / "k.pub")
    (tmp_path / "m.txt").write_text("4\n-5\n")
    resolved, asked = [], []
    real_resolve, real_encryptor = encryptor_module.resolve_backend, pl.ENCRYPTION.encryptor

    def resolve(*args):
        resolved.append((args, real_resolve(*args)))
        return resolved[-1][1]

    def encryptor(*args, **kw):
        asked.append((args[1:], kw))
        return real_encryptor(*args, **kw)

    for module in (service, encryptor_module):
        monkeypatch.setattr(module, "resolve_backend", resolve)
    monkeypatch.setattr(pl.ENCRYPTION, "encryptor", encryptor)
    res = CliRunner().invoke(app, ["paillier", "encrypt", "--key", str(tmp_path / "k.pub"), "--in",
                                   str(tmp_path / "m.txt"), "--out", str(tmp_path / "c.bin"), STUDY],
                             env={"COLUMNS": "300"})  # the status line whole
    assert res.exit_code == 0, res.output
    name = real_resolve("auto", pk.nsquare.bit_length())
    assert resolved == [(("auto", pk.nsquare.bit_length()), name)]
    assert asked == [(("auto",), {"constant_time": True})]
    assert f"({real_encryptor(pk, name).describe()})" in res.output
    cts = pl.ciphertexts_from_bytes(pk, (tmp_path / "c.bin").read_bytes())
    assert [pl.decode_signed(pk, m) for m in sk.decrypt_many(cts)] == [4, -5]
