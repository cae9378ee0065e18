"""A deterministic campaign of bad inputs over every CLI entry point (issue 12).

Each case is one command line a user could type by mistake -- a value that does not parse, a
size that would hang or exhaust memory, a zero, negative, NaN or fractional count, a file that
is missing, a folder, not UTF-8, truncated, corrupted or hostile (deep nesting, a key others
can read, a factorable key), an output path that cannot be written, a bogus URL or host -- run
through ``cryptoffload.cli.main`` in a forked child (:mod:`cli_contract`). A case is *clean*
when the contract holds: exit 2, one ``error:`` line that names what was wrong (the option,
the value or the file), no traceback, nothing written, within the time limit.

Run it (from the repository root)::

    PYTHONPATH=src python tests/cli/campaign.py            # every case; prints the figures
    PYTHONPATH=src python tests/cli/campaign.py --only plan # commands starting with "plan"

It prints the count and the clean rate and writes ``benchmarks/results/cli_campaign.json``.
``tests/cli/test_campaign.py`` runs a sample of the cases in CI, and checks that every command
of the app has cases here (a new command without any fails it).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Optional

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # run as a script: tests/ holds cli_contract.py
    sys.path.insert(0, str(HERE.parent))

from cli_contract import CLEAN, Outcome, run_cli_forked  # noqa: E402
from cryptoffload.crypto.paillier import ENCRYPTION  # noqa: E402

# values that are wrong for every option of their kind
NOT_INT = ["abc", "1.5", "", "2e3"]
HUGE_INT = ["1000000000000", "99999999999999999999999"]
NEGATIVE = ["-1", "-7"]
BAD_SEEDS = ["-1", "-7", "abc", "1.5", "", "99999999999999999999999"]  # seeds go up to 2^63 - 1
NOT_FLOAT = ["nan", "inf", "-inf", "abc"]
ABSURD_FLOAT = ["1e308", "1e-300"]  # issue 22 item 7: finite, positive, and nonsense (every float has a floor and a ceiling)
BAD_URLS = ["not a url", "ftp://127.0.0.1/", "http://", "http://256.256.256.256:80", "http://127.0.0.1:99999"]
BAD_HOSTS = ["no such host!", "999.1.1.1"]
BAD_SCHEDULERS = ["nonsense", "tcp://", "tcp://127.0.0.1:99999", "tcp://127.0.0.1:8786"]   # plain tcp: refused


@dataclass(frozen=True)
class Case:
    command: tuple[str, ...]
    argv: tuple[str, ...]
    mentions: tuple[str, ...]  # the error line names one of these (case-insensitive)

    @property
    def label(self) -> str:
        return " ".join(self.argv)


class Fixtures:
    """Files and folders the cases point at, made once in ``root`` (watched for writes)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self._make()

    def __getitem__(self, name: str) -> str:
        return str(self.root / name)

    def _write(self, name: str, data: bytes | str, mode: int = 0o644) -> None:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        os.chmod(path, mode)

    def _make(self) -> None:
        from cryptoffload.crypto import paillier as pl

        w = self._write
        (self.root / "adir").mkdir(exist_ok=True)
        (self.root / "emptydir").mkdir(exist_ok=True)
        (self.root / "www").mkdir(exist_ok=True)
        (self.root / "opendir").mkdir(exist_ok=True)
        os.chmod(self.root / "opendir", 0o755)  # a key folder others can list: refused with chmod 700
        w("www/index.html", "hello\n")
        w("decimals.txt", "1.5\n-2.25\n")
        w("afile", "a plain file\n")
        w("empty", b"")
        w("latin1.txt", b"caf\xe9 1\n2\n\xff\xfe\n")
        w("garbage.bin", bytes(range(256)) * 8)
        # Paillier keys and ciphertexts
        pk, sk = pl.generate_keypair(1024, insecure_study_size=True)
        w("k.json", json.dumps(sk.to_dict()), 0o600)
        w("k.pub", json.dumps(pk.to_dict()))
        w("k_open.json", json.dumps(sk.to_dict()), 0o644)
        opk, osk = pl.generate_keypair(1024, insecure_study_size=True)
        w("other.json", json.dumps(osk.to_dict()), 0o600)
        d15 = {"format": pl.FORMAT, "version": pl.FORMAT_VERSION, "kind": "public", "n": "f", "hs": "4",
               "fingerprint": pl.key_fingerprint(15).hex(),
               "checksums": {"n": pl.field_checksum("n", 15), "hs": pl.field_checksum("hs", 4)}}
        w("n15.pub", json.dumps(d15))
        dp1 = sk.to_dict()
        dp1.update(p="1", q=format(pk.n, "x"))
        dp1["checksums"].update(p=pl.field_checksum("p", 1), q=pl.field_checksum("q", pk.n))
        w("p1.json", json.dumps(dp1), 0o600)
        dh1 = pk.to_dict()  # issue 22: a degenerate DJN base, its checksum redone
        dh1.update(hs="1")
        dh1["checksums"]["hs"] = pl.field_checksum("hs", 1)
        w("hs1.pub", json.dumps(dh1))
        dflip = sk.to_dict()  # issue 22: one flipped bit in h_s
        dflip["hs"] = format(sk.public_key.hs ^ 1, "x")
        w("hsflip.json", json.dumps(dflip), 0o600)
        w("deep.json", "[" * 100_000 + "]" * 100_000)
        w("m.txt", "1\n-2\n3\n")
        w("m_notint.txt", "1\nfour\n")
        w("m_huge.txt", str(1 << 2000) + "\n")
        blob = pl.ciphertexts_to_bytes(ENCRYPTION.encrypt_many(pk, [1, 2, 3]), bound=3)
        w("c.bin", blob)
        w("c2.bin", pl.ciphertexts_to_bytes(ENCRYPTION.encrypt_many(pk, [1, 2]), bound=2))  # another length
        w("c_other.bin", pl.ciphertexts_to_bytes(ENCRYPTION.encrypt_many(opk, [1, 2, 3]), bound=3))  # another key
        big = pk.max_int - 1  # issue 32: two of these sum past n/3
        w("c_big.bin", pl.ciphertexts_to_bytes(ENCRYPTION.encrypt_many(pk, [big, big]), bound=big))
        from cryptoffload.crypto.paillier import framing  # issue 32: the bound edited to 1, checksum redone
        start, size = framing._HEADER.size, framing.bound_bytes(pk)
        body = blob[:start] + (1).to_bytes(size, "big") + blob[start + size:-16]
        w("c_lowbound.bin", body + framing._checksum(body))
        w("d.csv", "id,amount\n1,10\n2,-3\n")
        w("d_bad.csv", "id,amount\n1,10\n2,ten\n3\n")
        flipped = bytearray(blob)
        flipped[len(blob) // 2] ^= 1
        w("c_flip.bin", bytes(flipped))
        w("c_trunc.bin", blob[:-5])
        w("c_v1.bin", pl.CIPHERTEXT_MAGIC + b"\x01" + pk.fingerprint + ENCRYPTION.encrypt(pk, 1).value.to_bytes(
            pk.ciphertext_bytes, "big"))
        # profiles: the built-in ones with one value made wrong
        for name in ("virtex2_ciphers", "bsgs_u280", "qat_dh8970", "tls_offload", "isc_platforms"):
            text = resources.files("cryptoffload.profiles").joinpath(f"{name}.toml").read_text(encoding="utf-8")
            w(f"{name}_neg.toml", _negate_first_value(text))
        bsgs = resources.files("cryptoffload.profiles").joinpath("bsgs_u280.toml").read_text(encoding="utf-8")
        w("bsgs_zero_diagonals.toml", _set_value(bsgs, "diagonals", "0"))
        w("bsgs_frac_diagonals.toml", _set_value(bsgs, "diagonals", "1000.5"))
        # issue 22 item 7: absurd numbers in a profile, each field a unit kind (time, bandwidth, count)
        for tag, field, value in ABSURD_PROFILE_VALUES:
            w(f"bsgs_{tag}.toml", _set_value(bsgs, field, value))
        virtex = resources.files("cryptoffload.profiles").joinpath("virtex2_ciphers.toml").read_text(encoding="utf-8")
        w("virtex2_tiny_clock.toml", _set_value(virtex, "config_clock_hz", "1e-300"))
        w("virtex2_nan_overhead.toml", _set_value(virtex, "packet_overhead_s", "nan"))
        qat = resources.files("cryptoffload.profiles").joinpath("qat_dh8970.toml").read_text(encoding="utf-8")
        w("qat_huge_threads.toml", _set_value(qat, "s2_threads", "99999999999999999999999"))
        tls = resources.files("cryptoffload.profiles").joinpath("tls_offload.toml").read_text(encoding="utf-8")
        w("tls_inf_ratio.toml", _set_value(tls, "small_tls_over_plain", "inf"))
        w("deep.toml", "a = " + "[" * 5000 + "]" * 5000 + "\n")
        w("latin1.toml", b'[meta]\nname = "caf\xe9"\n')
        w("garbage.toml", "this is [not toml\n")
        # traces
        lines = "".join(f"{i * 0.01:.2f},10.0.0.{i % 9},{100 + i}\n" for i in range(3000))
        gz = gzip.compress(lines.encode())
        w("trace.csv", lines)
        w("trace_cut.csv.gz", gz[: len(gz) // 2])
        w("trace_notgz.csv.gz", lines[:500])
        w("trace_bad.csv", "time,client,bytes\nyesterday,x,-5\nnope\n")
        w("trace_latin1.csv", b"\xff\xfe\x00garbage\n\xe9\xe9\n")
        # HE-CNN models and MNIST folders; digit images
        from PIL import Image

        Image.new("L", (30, 30), 200).save(self.root / "blank.png")
        Image.new("L", (30, 30), 0).save(self.root / "digit.gif")
        w("garbage.npz", bytes(range(256)) * 4)
        import numpy as np

        np.savez(self.root / "wrongkeys.npz", a=np.arange(3))
        (self.root / "mnist_garbage").mkdir(exist_ok=True)
        for f in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                  "t10k-labels-idx1-ubyte"):
            w(f"mnist_garbage/{f}", b"\x00\x00\x08\x03garbage")
        # ridge
        w("ridge_bad.csv", "x1,x2,y\n1,2,nan\n3,four,5\n")
        w("token", "t" * 64 + "\n", 0o600)
        w("token_open", "t" * 64 + "\n", 0o644)
        w("token_latin1", b"\xff\xfe\n", 0o600)
        w("garbage.pem", "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
        w("garbage.db", b"SQLite format 3\x00" + bytes(200))


# (file tag, field of bsgs_u280.toml, value as TOML spells it)
ABSURD_PROFILE_VALUES = [
    ("rotate_tiny", "rotate_s", "1e-300"), ("rotate_huge", "rotate_s", "1e308"), ("rotate_nan", "rotate_s", "nan"),
    ("rotate_inf", "rotate_s", "inf"), ("rotate_neg_inf", "rotate_s", "-inf"),
    ("bandwidth_tiny", "bandwidth_Bps", "1e-300"), ("bandwidth_huge", "bandwidth_Bps", "1e308"),
    ("diagonals_huge", "diagonals", "99999999999999999999999"), ("diagonals_beyond_float", "diagonals", "9" * 400),
    ("bytes_huge", "full_bytes", "1e308"), ("latency_neg_nan", "latency_s", "-nan"), ("bandwidth_neg_zero", "bandwidth_Bps", "-0.0"),
]


def _negate_first_value(text: str) -> str:
    import re

    return re.sub(r"value = ([0-9.eE+]+)", lambda m: f"value = -{m[1]}", text, count=1)


def _set_value(text: str, field: str, value: str) -> str:
    import re

    return re.sub(rf"({re.escape(field)}\s*=\s*\{{\s*value\s*=\s*)[^,}}]+", rf"\g<1>{value}", text, count=1)


def _flag_words(flag: str) -> tuple[str, ...]:
    bare = flag.lstrip("-")
    return (flag, bare, bare.replace("-", "_"), bare.replace("-", " "))


def cases(fx: Fixtures) -> list[Case]:
    """Every case, in a fixed order."""
    out: list[Case] = []

    def add(command: str, base: list[str], flag: str, values: list[str], *, mentions: tuple[str, ...] = ()) -> None:
        cmd = tuple(command.split())
        for v in values:
            argv = (*cmd, *base, *((flag, v) if flag else (v,)))
            names = mentions or (*_flag_words(flag), v, os.path.basename(v) if v else v, *v.split(","))
            out.append(Case(cmd, argv, tuple(n for n in names if n)))

    def ints(command: str, base: list[str], flag: str, *, zero: bool = False, negative: bool = True) -> None:
        add(command, base, flag, NOT_INT + HUGE_INT + (NEGATIVE if negative else []) + (["0"] if zero else []))

    def floats(command: str, base: list[str], flag: str, *, zero: bool = False, negative: bool = True) -> None:
        add(command, base, flag, NOT_FLOAT + ABSURD_FLOAT + (["-1"] if negative else []) + (["0", "-0.0"] if zero else []))

    bad_profiles = [fx["deep.toml"], fx["latin1.toml"], fx["garbage.toml"], fx["adir"], fx["empty"],
                    "no_such_profile", "/nonexistent/p.toml"]
    folder_outs = [fx["afile"], fx["afile"] + "/sub"]
    file_outs = [fx["adir"], fx["afile"] + "/x", fx["emptydir"] + "/missing/x"]
    created_outs = file_outs[:2]  # commands whose output folder is created (a default lives in one)
    bad_credentials = [fx["adir"], fx["afile"], "/nonexistent/creds"]   # --dask-credentials: no ca.pem, a file, none

    # -- report and studies ---------------------------------------------------------------------
    add("report", [], "--seed", BAD_SEEDS)
    add("report", [], "--out", folder_outs)
    add("report", [], "--screenshot", [fx["adir"], fx["afile"] + "/x.png", fx["emptydir"] + "/first.jpg"])
    q = ["--quick", "--no-progress"]
    for study in ("bsgs-multidevice", "fpga-reconfig", "paillier-offload", "ridge", "tls-offload"):
        add(f"study {study}", q, "--seed", BAD_SEEDS)
    for study in ("bsgs-multidevice", "fpga-reconfig", "isc-he-cnn", "paillier-offload", "ridge", "tls-offload"):
        add(f"study {study}", q, "--out", folder_outs)
    s = "study bsgs-multidevice"
    add(s, q, "--profile", bad_profiles + [fx["bsgs_u280_neg.toml"], fx["bsgs_zero_diagonals.toml"],
                                          fx["bsgs_frac_diagonals.toml"]] + [fx[f"bsgs_{tag}.toml"] for tag, *_ in ABSURD_PROFILE_VALUES])
    add(s, q, "--calibration", [fx["deep.toml"], fx["adir"], "/nonexistent/c.toml", fx["latin1.toml"]])
    add(s, q, "--workers", ["0", "x", "", "1,-2", "100000000", "1.5"])
    add(s, q, "--babies", ["0", "x", "-4", "100000000"])
    add(s, q, "--scheduler", BAD_SCHEDULERS)
    add(s, [*q, "--scheduler", "tls://127.0.0.1:8786"], "--dask-credentials", bad_credentials)
    s = "study fpga-reconfig"
    add(s, q, "--rates", ["x", "-5", "0", "nan", "inf", "1e308", ",,", "1e12", "1e-300", "-0.0", "10,1e-300"])
    add(s, q, "--policies", ["nosuch", ",", "oracle,nosuch"])
    ints(s, q, "--requests", zero=True)
    add(s, q, "--profile", bad_profiles + [fx["virtex2_ciphers_neg.toml"], fx["virtex2_tiny_clock.toml"],
                                          fx["virtex2_nan_overhead.toml"]])
    add(s, q, "--sw-profile", [fx["deep.toml"], fx["virtex2_ciphers_neg.toml"], "/nonexistent/sw.toml",
                               fx["virtex2_tiny_clock.toml"]])
    floats(s, q, "--reconfig-ms")
    traces = [fx["trace_cut.csv.gz"], fx["trace_notgz.csv.gz"], fx["trace_bad.csv"], fx["trace_latin1.csv"],
              fx["empty"], fx["adir"], "/nonexistent/trace.csv"]
    add(s, q, "--trace", traces)
    add(s, q, "--history", traces[:4])
    floats(s, q, "--window-mb", zero=True)
    add(s, q, "--engine", ["nosuch", ""])
    s = "study isc-he-cnn"
    add(s, q, "--model", ["nosuch", fx["deep.json"], fx["latin1.txt"], fx["garbage.bin"], fx["adir"], fx["empty"]])
    floats(s, q, "--dram-gb", zero=True)
    add(s, q, "--dram-gb", ["1e30"])
    ints(s, q, "--queries", zero=True)
    ints(s, q, "--clients", zero=True)
    s = "study paillier-offload"
    add(s, q, "--bits", ["0", "1023", "200000", "-1", "abc", "8194"])
    ints(s, q, "--sim-encryptions", zero=True)
    ints(s, q, "--encryptions", zero=True)
    add(s, q, "--engine", ["nosuch", ""])
    ints(s, q, "--threads", zero=True)
    ints(s, q, "--inflight", zero=True)
    add(s, q, "--profile", bad_profiles[:4] + [fx["qat_dh8970_neg.toml"], fx["qat_huge_threads.toml"]])
    s = "study ridge"
    ints(s, q, "--records", zero=True)
    ints(s, q, "--d", zero=True)
    floats(s, q, "--lam")
    ints(s, q, "--chunk", zero=True)
    ints(s, q, "--workers", zero=True)
    add(s, q, "--scheduler", BAD_SCHEDULERS)
    add(s, [*q, "--scheduler", "tls://127.0.0.1:8786"], "--dask-credentials", bad_credentials)
    add(s, q, "--stat-bits", ["0", "39", "300", "-1"])
    add(s, q, "--engine", ["nosuch"])
    s = "study tls-offload"
    add(s, q, "--modes", ["nosuch", "", "plain,nosuch"])
    add(s, q, "--clients", ["nosuch", ""])
    ints(s, q, "--count", zero=True)
    add(s, q, "--variant", ["nosuch"])
    add(s, q, "--profile", bad_profiles[:4] + [fx["tls_offload_neg.toml"], fx["tls_inf_ratio.toml"]])

    # -- paillier ---------------------------------------------------------------------------------
    s = "paillier keygen"
    study = ["--insecure-study-size"]
    add(s, ["--bits", "1024", *study], "--out", [fx["adir"], fx["afile"], fx["afile"] + "/x",
                                                fx["emptydir"] + "/missing/k.json"])
    add(s, ["--out", "k.json", "--bits", "1024", *study], "--public-out",
        ["k.json", "./k.json", "sub/../k.json", fx["adir"], fx["afile"]], mentions=("same file", "exists", "public", "folder", "k.json", "afile", "adir"))
    add(s, ["--out", "k.json"], "--bits", ["0", "-2", "1023", "1024", "200000", "8194", "abc", "99999999999999999999"])
    s = "paillier encrypt"
    keys = [fx["adir"], fx["latin1.txt"], fx["deep.json"], fx["n15.pub"], fx["p1.json"], fx["k_open.json"],
            fx["garbage.bin"], "/nonexistent/k.json", fx["empty"], fx["hs1.pub"], fx["hsflip.json"], "/dev/zero"]
    add(s, ["--in", fx["m.txt"], "--out", "c.bin", *study], "--key", keys)
    add(s, ["--in", fx["m.txt"], "--out", "c.bin"], "--key", [fx["k.pub"]], mentions=("insecure-study-size",))
    add(s, ["--key", fx["k.pub"], "--out", "c.bin", *study], "--in",
        [fx["latin1.txt"], fx["adir"], "/nonexistent/m.txt", fx["m_notint.txt"], fx["m_huge.txt"], "/dev/zero",
         fx["k.pub"]],
        mentions=("m.txt", "latin1", "adir", "m_notint", "m_huge", "large", "UTF-8", "/dev/zero", "k.pub"))
    add(s, ["--key", fx["k.pub"], "--in", fx["m.txt"], *study], "--out", file_outs)
    add(s, ["--key", fx["k.pub"], "--in", fx["m.txt"], "--out", "c.bin", *study], "--backend", ["nosuch", "", "qat"])
    add(s, ["--key", fx["k.pub"], "--in", fx["d.csv"], "--out", "c.bin", *study], "--column", ["nosuch", "", "id,amount"])
    add(s, ["--key", fx["k.pub"], "--in", fx["d_bad.csv"], "--out", "c.bin", *study], "--column", ["amount"],
        mentions=("d_bad.csv:3", "ten"))
    add(s, ["--key", fx["k.pub"], "--in", fx["m.txt"], "--out", "c.bin", *study], "--bound",
        ["-1", "1_000", "abc", "", "1.5", "1", str(1 << 2000)])
    add(s, ["--key", fx["k.pub"], "--in", fx["d.csv"], "--out", "c.bin", "--column", "amount", *study], "--in",
        [fx["m.txt"], fx["latin1.txt"], fx["empty"]], mentions=("m.txt", "latin1", "UTF-8", "empty", "header"))
    operand_ins = [fx["c_other.bin"], fx["c_flip.bin"], fx["c_trunc.bin"], fx["c_v1.bin"], fx["garbage.bin"], fx["adir"],
                   "/nonexistent/c.bin", fx["empty"], "/dev/zero"]
    operand_says = ("--in", "not this key", "checksum", "truncated", "version 1", "header", "adir", "c.bin", "empty",
                    "/dev/zero")
    operand_keys = [fx["other.json"], fx["n15.pub"], fx["hs1.pub"], fx["adir"], "/nonexistent/k.json", fx["garbage.bin"]]
    for s, base in (("paillier add", ["--in", fx["c.bin"]]), ("paillier sum", ["--in", fx["c.bin"]]),
                    ("paillier mul", ["--scalar", "2"])):
        add(s, ["--key", fx["k.pub"], *base, "--out", "o.bin", *study], "--in", operand_ins, mentions=operand_says)
        add(s, [*base, "--in", fx["c.bin"], "--out", "o.bin", *study], "--key", operand_keys,
            mentions=("key", "other", "n15", "hs1", "h_s", "adir", "k.json", "garbage"))
        add(s, ["--key", fx["k.pub"], *base, "--in", fx["c.bin"], *study], "--out",
            file_outs + [fx["c.bin"], fx["k.pub"]], mentions=("--out", "same file", "adir", "afile", "missing", "folder"))
    add("paillier add", ["--key", fx["k.pub"], "--in", fx["c.bin"], "--out", "o.bin", *study], "--in", [fx["c2.bin"]],
        mentions=("holds 3 ciphertexts", "c2.bin"))
    add("paillier mul", ["--key", fx["k.pub"], "--in", fx["c.bin"], "--out", "o.bin", *study], "--scalar",
        ["abc", "1.5", "", str(1 << 2000), "1_000", "\uff12", str(1 << 1021)])  # the last: 3 x 2^1021 passes n/3
    add("paillier sum", ["--key", fx["k.pub"], "--in", fx["c_big.bin"], "--out", "o.bin", *study], "--in",
        [fx["c_big.bin"]], mentions=("signed limit n/3",))
    s = "paillier decrypt"
    add(s, ["--in", fx["c.bin"], *study], "--key", [fx["k.pub"], fx["k_open.json"], fx["other.json"], fx["p1.json"]],
        mentions=("private", "public", "chmod", "not this key", "factor", "primes", "k.pub", "k_open", "p1"))
    add(s, ["--key", fx["k.json"], *study], "--in",
        [fx["c_flip.bin"], fx["c_trunc.bin"], fx["c_v1.bin"], fx["garbage.bin"], fx["adir"], "/nonexistent/c.bin",
         fx["empty"], "/dev/zero"],
        mentions=("checksum", "truncated", "version 1", "header", "adir", "c.bin", "directory", "ciphertext",
                  "/dev/zero"))
    add(s, ["--key", fx["k.json"], "--in", fx["c.bin"], *study], "--out", file_outs)
    add(s, ["--key", fx["k.json"], *study], "--in", [fx["c_lowbound.bin"]], mentions=("outside the file's bound",))
    # issue 37: fixed point and "-" for standard input and output
    add(s, ["--key", fx["k.json"], "--in", fx["c.bin"], *study], "--fixed-point", ["0", "65", "-1", "abc", "1.5", ""])
    add("paillier encrypt", ["--key", fx["k.pub"], "--in", fx["m.txt"], "--out", "c.bin", *study], "--fixed-point",
        ["0", "65", "-1", "abc", "1.5", "1_0"])
    add("paillier encrypt", ["--key", fx["k.pub"], "--in", fx["decimals.txt"], "--out", "c.bin", *study], "--bound",
        ["1", "abc", "nan", "-1"], mentions=("--bound", "1.5", "abc", "nan", "-1"))
    add("paillier encrypt", ["--key", fx["k.pub"], "--out", "c.bin", *study], "--in", [fx["decimals.txt"]],
        mentions=("--fixed-point",))
    add("paillier encrypt", ["--key", fx["k.pub"], "--in", fx["m.txt"], "--json", *study], "--out", ["-"],
        mentions=("--json", "--out -"))
    add("paillier sum", ["--key", fx["k.pub"], "--in", "-", "--out", "o.bin", *study], "--in", ["-"],
        mentions=("--in -", "more than once"))

    # -- calibrate --------------------------------------------------------------------------------
    add("calibrate", [], "--out-dir", folder_outs)
    floats("calibrate", [], "--seconds", zero=True)
    add("calibrate", [], "--seconds", ["1e9"])
    s = "calibrate ckks"
    add(s, [], "--out", [fx["adir"], fx["afile"] + "/x"])
    ints(s, [], "--repeats", zero=True)
    add(s, [], "--scheduler", BAD_SCHEDULERS)
    add(s, ["--scheduler", "tls://127.0.0.1:8786"], "--dask-credentials", bad_credentials)
    add(s, [], "--backend", ["nosuch", ""])
    s = "dask credentials"
    add(s, [], "--out", folder_outs)
    ints(s, ["--out", "creds"], "--days", zero=True)
    s = "calibrate ciphers"
    add(s, [], "--out", [fx["adir"], fx["afile"] + "/x"])
    floats(s, [], "--seconds", zero=True)
    add(s, [], "--seconds", ["1e9"])
    s = "calibrate paillier-window"
    add(s, [], "--bits", ["0", "200000", "-1", "1_024", "x", ""])
    add(s, [], "--backend", ["nosuch", ""])
    floats(s, [], "--seconds", zero=True)
    add(s, [], "--seconds", ["1e9"])
    ints(s, [], "--rounds", zero=True)
    ints(s, [], "--max-table-mib", zero=True)
    s = "calibrate gpu"
    add(s, [], "--bits", ["0", "200000", "-1"])
    add(s, [], "--batches", ["x", "1", "0,5", "8,99999999999", ""])
    ints(s, [], "--repeats", zero=True)
    add(s, [], "--gpu", ["-1", "abc", "99999999999999999999"])
    add(s, [], "--out", [fx["adir"], fx["afile"] + "/x"], mentions=("--out", "adir", "afile", "GPU"))

    # -- trace ----------------------------------------------------------------------------------
    s = "trace generate"
    add(s, [], "--out", file_outs)
    ints(s, ["--out", "t.csv"], "--requests", zero=True)
    floats(s, ["--out", "t.csv"], "--rate", zero=True)
    add(s, ["--out", "t.csv"], "--seed", ["-1", "abc", "99999999999999999999999"])
    add("trace inspect", [], "", traces + [fx["garbage.bin"]], mentions=("trace", "cannot read", "no valid"))

    # -- plan -----------------------------------------------------------------------------------
    s = "plan bsgs"
    add(s, [], "--devices", ["0", "-1", "x", "", "100000000", "1,100000000", "1.5"])
    add(s, [], "--profile", bad_profiles + [fx["bsgs_u280_neg.toml"], fx["bsgs_zero_diagonals.toml"],
                                           fx["bsgs_frac_diagonals.toml"]] + [fx[f"bsgs_{tag}.toml"] for tag, *_ in ABSURD_PROFILE_VALUES])
    add(s, [], "--diagonals", ["0", "-1", "1000000000", "1.5", "abc", "99999999999999999999"])
    add(s, [], "--strategy", ["nosuch", ""])
    add(s, [], "--space", ["nosuch", ""])
    ints(s, [], "--naive-bs", zero=True)
    s = "plan bootstrap"
    ints(s, [], "--ring", zero=True)
    add(s, [], "--ring", ["5000", "512", "262144"])
    ints(s, [], "--slots")
    add(s, [], "--slots", ["3", "65536"])
    ints(s, [], "--levels-after")
    add(s, [], "--levels-after", ["105", "98"])
    ints(s, [], "--depth", zero=True)
    add(s, [], "--depth", ["17", "121"])
    ints(s, [], "--devices", zero=True)
    add(s, [], "--devices", ["65"])
    add(s, [], "--profile", bad_profiles + ["bsgs_u280"])
    floats(s, [], "--link-gbps", zero=True)
    floats(s, [], "--link-latency-us")
    add(s, [], "--link-latency-us", ["1e7"])
    s = "plan isc"
    ints(s, [], "--clients", zero=True)
    add(s, ["--clients", "10"], "--model", ["nosuch", fx["deep.json"], fx["latin1.txt"], fx["garbage.bin"], fx["adir"]])
    floats(s, ["--clients", "10"], "--requests-per-client", zero=True)
    floats(s, ["--clients", "10"], "--nand-tb", zero=True)
    add(s, ["--clients", "10"], "--nand-tb", ["1e30"])

    # -- he-cnn ---------------------------------------------------------------------------------
    models = [fx["garbage.npz"], fx["wrongkeys.npz"], fx["latin1.txt"], fx["adir"], "/nonexistent/m.npz", fx["empty"]]
    s = "he-cnn train"
    add(s, [], "--out", created_outs)
    ints(s, [], "--epochs", zero=True)
    add(s, [], "--seed", ["-1", "abc", "99999999999999999999999"])
    add(s, [], "--mnist-dir", ["/nonexistent/mnist", fx["afile"], fx["mnist_garbage"], fx["emptydir"]])
    s = "he-cnn infer"
    add(s, [], "--image", ["-1", "1000000000", "abc"])
    add(s, [], "--image", [fx["blank.png"], fx["digit.gif"], fx["latin1.txt"], fx["adir"], fx["empty"], "/dev/zero",
                           "/nonexistent/d.png"])
    add(s, ["--mnist-dir", fx["adir"]], "--image", [fx["blank.png"]], mentions=("--mnist-dir",))
    add(s, [], "--model", models)
    add(s, [], "--backend", ["nosuch", ""])
    add(s, [], "--trace", created_outs)
    add(s, [], "--mnist-dir", ["/nonexistent/mnist", fx["afile"], fx["mnist_garbage"]])
    add(s, [], "--key-dir", [fx["afile"], fx["afile"] + "/keys", fx["opendir"]],
        mentions=("--key-dir", "key", "afile", "opendir", "chmod"))
    add(s, ["--no-keep-keys"], "--key-dir", [fx["emptydir"]], mentions=("--no-keep-keys",))
    for s in ("he-cnn bench", "he-cnn evaluate"):
        ints(s, [], "--images", zero=True)
        add(s, [], "--model", models[:4])
        add(s, [], "--backend", ["nosuch"])
    s = "he-cnn serve"
    hs = ["--port", "0", "--insecure-http"]
    add(s, ["--insecure-http"], "--port", ["-1", "70000", "abc"])
    add(s, hs, "--host", BAD_HOSTS)
    add(s, hs, "--model", models)
    add(s, hs, "--backend", ["nosuch"])
    add(s, hs, "--clients", ["", ",", "bad name!"])
    ints(s, hs, "--max-sessions", zero=True)
    ints(s, hs, "--max-sessions-per-client", zero=True)
    ints(s, hs, "--session-memory", zero=True)
    ints(s, hs, "--memory-budget", zero=True)
    add(s, hs, "--session-memory", ["10"], mentions=("--session-memory", "below"))
    add(s, hs, "--memory-budget", ["10"], mentions=("--memory-budget", "one session"))
    add(s, hs, "--token-dir", [fx["afile"], fx["afile"] + "/x"])
    add(s, ["--port", "0"], "--tls-cert", ["/nonexistent/c.pem", fx["garbage.pem"]],
        mentions=("--tls-cert", "--tls-key", "tls", "certificate", "c.pem", "garbage.pem"))
    add(s, ["--port", "0", "--tls-cert", fx["garbage.pem"]], "--tls-key", ["/nonexistent/k.pem", fx["garbage.pem"]],
        mentions=("--tls-key", "tls", "key", "certificate", "k.pem", "garbage.pem"))
    s = "he-cnn client"
    hc = ["--token-file", fx["token"], "--insecure-http"]
    add(s, hc, "--url", BAD_URLS + ["http://127.0.0.1:1"], mentions=("url", "connect", "refused", "reach", "port"))
    add(s, ["--token-file", fx["token"]], "--url", ["http://127.0.0.1:1"], mentions=("http", "insecure"))
    add(s, ["--url", "http://127.0.0.1:1", *hc], "--image", ["-1", "1000000000", "abc"])
    add(s, ["--url", "http://127.0.0.1:1", "--insecure-http"], "--token-file",
        ["/nonexistent/t", fx["empty"], fx["token_latin1"], fx["adir"], fx["token_open"]],
        mentions=("token", "t", "empty", "latin1", "adir", "chmod"))
    add(s, ["--url", "https://127.0.0.1:1", "--token-file", fx["token"]], "--cafile",
        ["/nonexistent/ca.pem", fx["garbage.pem"]], mentions=("cafile", "ca.pem", "garbage.pem", "certificate"))

    # -- ridge (sec-ridge owns the servers; here only the refusals) --------------------------------
    ih = ["--insecure-http"]
    s = "ridge csp"
    base = ["--port", "0", "--max-records", "100", *ih]
    add(s, ["--max-records", "100", *ih], "--port", ["-1", "70000", "abc"])
    add(s, base, "--host", BAD_HOSTS)
    ints(s, base, "--d", zero=True)
    ints(s, ["--port", "0", *ih], "--max-records", zero=True)
    add(s, base, "--frac-bits", ["-1", "1000", "abc"])
    floats(s, base, "--x-bound", zero=True)
    floats(s, base, "--y-bound", zero=True)
    floats(s, base, "--lam")
    add(s, base, "--stat-bits", ["0", "39", "300"])
    ints(s, base, "--min-providers", zero=True)
    add(s, base, "--upload-bits", ["1024", "0", "200000"])
    add(s, base, "--solve-bits", ["x", "0", "200000", "-5"])
    add(s, base, "--key-dir", [fx["afile"], fx["afile"] + "/x"])
    add(s, base[:4], "--tls-cert", ["/nonexistent/c.pem", fx["garbage.pem"]],
        mentions=("--tls-cert", "--tls-key", "tls", "certificate", "c.pem", "garbage.pem"))
    add(s, base[:4] + ["--tls-cert", fx["garbage.pem"]], "--tls-key", ["/nonexistent/k.pem", fx["garbage.pem"]],
        mentions=("--tls-key", "tls", "key", "certificate", "k.pem", "garbage.pem"))
    s = "ridge platform"
    need = ["--csp-token-file", fx["token"], "--providers", "alice", *ih]
    base = ["--port", "0", "--csp", "http://127.0.0.1:1", "--db", "p.db", "--wait-csp", "0.5", *need]
    add(s, ["--csp", "http://127.0.0.1:1", "--db", "p.db", *need], "--port", ["-1", "70000"])
    add(s, ["--port", "0", "--db", "p.db", *need], "--csp", BAD_URLS[:4])
    add(s, ["--port", "0", "--csp", "http://127.0.0.1:1", "--wait-csp", "0.5", *need], "--db",
        [fx["adir"], fx["afile"] + "/x", fx["emptydir"] + "/missing/p.db", fx["garbage.db"]])
    add(s, base[:8] + ["--providers", "alice", *ih], "--csp-token-file",
        ["/nonexistent/t", fx["empty"], fx["token_latin1"], fx["adir"], fx["token_open"]],
        mentions=("token", "/nonexistent/t", "empty", "latin1", "adir", "chmod"))
    add(s, base[:8] + ["--csp-token-file", fx["token"], *ih], "--providers", ["", ",", "bad name!"])
    add(s, base, "--token-dir", [fx["afile"], fx["afile"] + "/x"])
    add(s, base, "--host", BAD_HOSTS)
    ints(s, base, "--workers", zero=True)
    ints(s, base, "--max-upload-records", zero=True)
    ints(s, base, "--max-records-per-provider", zero=True)
    add(s, base[:6] + need, "--wait-csp", NOT_FLOAT + ABSURD_FLOAT + ["-1"])
    add(s, base, "--cafile", ["/nonexistent/ca.pem", fx["garbage.pem"]],
        mentions=("cafile", "ca.pem", "garbage.pem", "certificate"))
    s = "ridge provider"
    need = ["--token-file", fx["token"], "--retry-for", "0.5", "--no-progress", *ih, "--csp-fingerprint", "0" * 64]
    base = ["--platform", "http://127.0.0.1:1", "--data", "generate:n=10", *need]
    add(s, ["--data", "generate:n=10", *need], "--platform", BAD_URLS[:4] + [""])
    add(s, ["--platform", "http://127.0.0.1:1", *need], "--data",
        ["nosuch:", "csv:/nonexistent.csv", f"csv:{fx['latin1.txt']}", f"csv:{fx['adir']}", f"csv:{fx['ridge_bad.csv']}",
         "generate:n=0", "generate:n=-1", "generate:n=1000000000000", "generate:n=abc", ""],
        mentions=("--data", "data", "csv", "generate", "n=", "nosuch", "latin1", "adir", "ridge_bad", "records"))
    add(s, base[:4] + need[2:], "--token-file", ["/nonexistent/t", fx["empty"], fx["token_latin1"], fx["adir"],
                                                fx["token_open"]],
        mentions=("token", "/nonexistent/t", "empty", "latin1", "adir", "chmod"))
    add(s, base[:-2], "--csp-fingerprint", ["xyz", "00", "g" * 64])
    add(s, base, "--csp", BAD_URLS[:4])
    add(s, base, "--mode", ["nosuch"])
    ints(s, base, "--batch", zero=True)
    add(s, base, "--part", ["0/1", "2/1", "x", "1/0", "-1/2"])
    add(s, base[:6] + base[8:], "--retry-for", NOT_FLOAT + ABSURD_FLOAT + ["-1"])
    add(s, base, "--cafile", ["/nonexistent/ca.pem", fx["garbage.pem"]],
        mentions=("cafile", "ca.pem", "garbage.pem", "certificate"))
    s = "ridge buyer"
    base = ["--platform", "http://127.0.0.1:1", "--csp", "http://127.0.0.1:1", "--buyer-token-file", fx["token"],
            "--timeout", "1", *ih]
    add(s, base[2:], "--platform", BAD_URLS[:4])
    add(s, base[:2] + base[4:], "--csp", BAD_URLS[:4])
    add(s, base, "--out", file_outs)
    add(s, base[:4] + base[6:], "--buyer-token-file", ["/nonexistent/t", fx["empty"], fx["token_latin1"], fx["adir"],
                                                      fx["token_open"]],
        mentions=("token", "/nonexistent/t", "empty", "latin1", "adir", "chmod"))
    add(s, base, "--cafile", ["/nonexistent/ca.pem", fx["garbage.pem"]],
        mentions=("cafile", "ca.pem", "garbage.pem", "certificate"))
    add(s, base[:6] + ih, "--timeout", NOT_FLOAT + ABSURD_FLOAT + ["-1", "0", "-0.0"])
    s = "ridge demo"
    np_ = ["--no-progress"]
    ints(s, np_, "--records", zero=True)
    ints(s, np_, "--d", zero=True)
    ints(s, np_, "--providers", zero=True)
    add(s, np_, "--mode", ["nosuch"])
    add(s, np_, "--data", ["nosuch:", "csv:/nonexistent.csv", "generate:n=0", f"csv:{fx['latin1.txt']}"],
        mentions=("--data", "data", "csv", "generate", "n=", "nosuch", "latin1", "records"))
    add(s, np_, "--seed", ["-1", "abc", "99999999999999999999999"])
    floats(s, np_, "--lam")
    add(s, np_, "--frac-bits", ["-1", "1000"])
    add(s, np_, "--upload-bits", ["0", "200000", "100"])
    ints(s, np_, "--batch", zero=True)
    add(s, np_, "--out", file_outs)
    add(s, np_, "--workdir", [fx["afile"], fx["afile"] + "/x"])

    # -- tls --------------------------------------------------------------------------------------
    add("tls detect", [], "--json", created_outs)
    s = "tls serve"
    base = ["--root", fx["www"]]
    add(s, base, "--mode", ["nosuch", ""])
    add(s, [], "--root", ["/nonexistent/www", fx["afile"]])
    add(s, base, "--port", ["-1", "70000", "abc"])
    add(s, base, "--host", BAD_HOSTS)
    ints(s, base, "--workers", zero=True)
    s = "tls bench"
    add(s, ["--quick"], "--modes", ["nosuch", "", "plain,nosuch"])
    ints(s, ["--quick"], "--count", zero=True)
    add(s, ["--quick"], "--interval", NOT_FLOAT + ABSURD_FLOAT + ["-1"])
    ints(s, ["--quick"], "--block", zero=True)
    add(s, ["--quick"], "--sizes", ["x", "0", "-1", "1T", "", "2K,x", "2G"])
    add(s, ["--quick"], "--clients", ["nosuch", ""])
    add(s, ["--quick"], "--seed", ["-1", "abc"])
    add(s, ["--quick"], "--wrk-connections", ["0", "x", "100000000", "-1"])
    floats(s, ["--quick"], "--wrk-duration", zero=True)
    floats(s, ["--quick"], "--latency-target-ms", zero=True)
    add(s, ["--quick"], "--out", folder_outs)

    seen: set[tuple[str, ...]] = set()
    unique = []
    for c in out:
        if c.argv not in seen:
            seen.add(c.argv)
            unique.append(c)
    return unique


def judge(case: Case, outcome: Outcome) -> str:
    """The outcome's verdict, plus whether the one error line names what was wrong."""
    verdict = outcome.verdict
    if verdict != CLEAN:
        return verdict
    line = outcome.stderr.strip().lower()
    if not any(m.lower() in line for m in case.mentions):
        return "error names something else"
    return CLEAN


def run(selected: list[Case], fx: Fixtures, timeout: float = 60.0,
        log=print) -> list[tuple[Case, Outcome, str]]:
    results = []
    env = {"CRYPTOFFLOAD_RIDGE_BUYER_TOKEN": ""}
    for i, case in enumerate(selected, 1):
        with tempfile.TemporaryDirectory(prefix="cli-campaign-") as work:
            outcome = run_cli_forked(list(case.argv), Path(work), watch=[fx.root], timeout=timeout, env=env)
        verdict = judge(case, outcome)
        results.append((case, outcome, verdict))
        if verdict != CLEAN:
            log(f"[{i}/{len(selected)}] NOT CLEAN {outcome.describe()}")
    return results


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="", help="Run only commands starting with this (e.g. 'plan bsgs').")
    ap.add_argument("--timeout", type=float, default=60.0, help="Seconds per case before it counts as a hang.")
    ap.add_argument("--out", type=Path, default=HERE.parent.parent / "benchmarks" / "results" / "cli_campaign.json")
    args = ap.parse_args(argv)
    from cryptoffload.machine import machine_info

    with tempfile.TemporaryDirectory(prefix="cli-campaign-fixtures-") as tmp:
        fx = Fixtures(Path(tmp))
        selected = [c for c in cases(fx) if " ".join(c.command).startswith(args.only)]
        t0 = time.monotonic()
        results = run(selected, fx, args.timeout)
        elapsed = time.monotonic() - t0
        root = str(fx.root)
    clean = sum(1 for *_, v in results if v == CLEAN)
    by_verdict: dict[str, int] = {}
    for *_, v in results:
        by_verdict[v] = by_verdict.get(v, 0) + 1
    commands = sorted({" ".join(c.command) for c, *_ in results})
    print(f"{len(results)} bad inputs over {len(commands)} commands: {clean} clean "
          f"({100.0 * clean / max(1, len(results)):.1f} %), {elapsed:.0f} s")
    for v, n in sorted(by_verdict.items(), key=lambda kv: -kv[1]):
        print(f"  {v}: {n}")
    if not args.only:
        doc = {
            "command": "PYTHONPATH=src python tests/cli/campaign.py",
            "machine": machine_info(),
            "cases": len(results), "clean": clean, "clean_rate": clean / max(1, len(results)),
            "seconds": round(elapsed, 1), "verdicts": by_verdict, "commands": commands,
            "not_clean": [{"argv": [a.replace(root, "FIXTURES") for a in c.argv], "verdict": v,
                           "stderr": o.stderr.replace(root, "FIXTURES")[-400:]}
                          for c, o, v in results if v != CLEAN],
            "results": [{"argv": [a.replace(root, "FIXTURES") for a in c.argv], "verdict": v,
                         "error": o.stderr.strip().replace(root, "FIXTURES")[:300], "seconds": round(o.seconds, 2)}
                        for c, o, v in results],
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.out}")
    return 0 if clean == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
