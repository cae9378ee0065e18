"""``cryptoffload paillier``: Paillier keys, encryption and decryption of files, and homomorphic
arithmetic on ciphertext files (the rules for operands and their bounds live in
:mod:`cryptoffload.apps.paillier_files`).

What a script can rely on: stdout holds data only -- decrypted integers one per line, written
whole whatever the terminal or ``COLUMNS`` (:func:`~cryptoffload.cli.root.print_data`), or with
``--json`` one JSON object -- and status lines go to stderr. In JSON every integer that can be
large (values, bounds, scalars) is a decimal string, so no reader rounds it (JavaScript and jq
before 1.7 turn numbers past 2^53 into doubles); counts are numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Optional

import typer

from cryptoffload.checks import KEY_BITS
from cryptoffload.cli.root import number_option, print_data, print_json, say
from cryptoffload.io import PRIVATE, atomic_write, check_not_input, check_output_file

INSECURE_OPTION = typer.Option(False, "--insecure-study-size",
                               help="Accept a key below 112-bit security (made for a study).")
JSON_OPTION = typer.Option(False, "--json", help="Print one JSON object on stdout describing what was written "
                           "(large integers as decimal strings) instead of a status line on stderr.")
OPERANDS_HELP = "Ciphertext file from `paillier encrypt` (or add, sum, mul) under --key"
RERANDOMIZE_OPTION = typer.Option(True, "--rerandomize/--no-rerandomize",
                                  help="Multiply each result by a fresh encryption of 0, so it cannot be linked "
                                  "to its operands (skip only when the result stays with the key holder).")

app = typer.Typer(no_args_is_help=True, help="Paillier keys, encryption, decryption and arithmetic on ciphertext files.")


def _report(as_json: bool, status: str, fields: dict[str, Any]) -> None:
    """What a command wrote: one JSON object on stdout with ``--json``, else a line on stderr."""
    if as_json:
        print_json(fields)
    else:
        say(status)


@app.command("keygen")
def paillier_keygen(
    out: Path = typer.Option(..., "--out", help="Private key file (JSON, written with mode 0600)."),
    public_out: Optional[Path] = typer.Option(None, "--public-out", help="Public key file (default: OUT with .pub)."),
    bits: int = number_option(2048, "--bits", bound=KEY_BITS, help="Modulus size (>= 2048 unless --insecure-study-size)."),
    insecure_study_size: bool = typer.Option(False, "--insecure-study-size",
                                             help="Allow keys below 112-bit security (to reproduce a paper, e.g. 1024)."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Generate a Paillier key pair."""
    from cryptoffload.crypto import paillier as pl

    pl.check_key_bits(bits, insecure_study_size)
    check_output_file(out, overwrite=False)  # a folder has no name to add .pub to
    pub_path = public_out or out.with_name(out.name + ".pub")
    pl.check_new_key_paths(out, pub_path)  # before the (long) prime search
    pk, sk = pl.generate_keypair(bits, insecure_study_size=insecure_study_size)
    pl.save_keypair(pk, sk, out, pub_path)
    _report(as_json, f"wrote {out} (private, 0600) and {pub_path} (public); fingerprint {pk.fingerprint.hex()}",
            {"private_key": str(out), "public_key": str(pub_path), "bits": pk.bits, "key": pk.fingerprint.hex()})


@app.command("encrypt")
def paillier_encrypt(
    key: Path = typer.Option(..., "--key", help="Public (or private) key file."),
    infile: Path = typer.Option(..., "--in", help="Integers, one per line (signed); with --column, a CSV file."),
    out: Path = typer.Option(..., "--out", help="Ciphertext file (binary, versioned, key fingerprint, bound)."),
    column: Optional[str] = typer.Option(None, "--column", help="--in is a CSV whose first line is a header: "
                                         "encrypt the integers of this named column."),
    bound: Optional[str] = typer.Option(None, "--bound", help="B with |value| <= B for every value, written in the "
                                        "file's header in the clear and carried through add/sum/mul, which refuse a "
                                        "result that could pass n/3 (default: 2^64, every 64-bit integer)."),
    backend: str = typer.Option("auto", "--backend", help="auto, ifma, adx, gmp or gmpy2 (auto: the fastest that runs on this CPU)."),
    variable_time: bool = typer.Option(False, "--variable-time",
                                       help="Faster table lookup that leaks cache access patterns (see docs)."),
    insecure_study_size: bool = INSECURE_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Encrypt signed integers into a ciphertext file that records their bound."""
    from cryptoffload.apps import paillier_files as pf
    from cryptoffload.crypto import paillier as pl
    from cryptoffload.crypto.paillier.bounds import describe

    check_not_input("--out", out, [("--key", key), ("--in", infile)])
    check_output_file(out)
    asked = pf.parse_bound(bound)
    pk = pf.public_key_of(key, insecure_study_size)
    resolved = pl.resolve_backend(backend, pk.nsquare.bit_length())  # once, for this key, before any input is read
    integers = pf.read_integers(infile, column)
    chosen = pf.encryption_bound(pk, integers, asked, infile)
    values = [pl.encode_signed(pk, v) for v in integers]
    pf.check_fits_one_file(pk, len(values), infile)
    enc = pk.encryptor(resolved, not variable_time)
    atomic_write(out, pl.ciphertexts_to_bytes(pf.encrypt_values(enc, values), pk, bound=chosen))
    _report(as_json, f"wrote {out}: {len(values):,} ciphertexts, bound {describe(chosen)} ({enc.describe()})",
            {"out": str(out), "count": len(values), "bound": str(chosen), "format_version": pl.CIPHERTEXT_VERSION,
             "key": pk.fingerprint.hex(), "backend": enc.describe()})


@app.command("decrypt")
def paillier_decrypt(
    key: Path = typer.Option(..., "--key", help="Private key file."),
    infile: Path = typer.Option(..., "--in", help="Ciphertext file from `paillier encrypt` (or add, sum, mul)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write the integers here, one per line (default: stdout)."),
    insecure_study_size: bool = INSECURE_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object: the values as decimal strings (or, "
                                 "with --out, what was written), their count, the file's bound and the key."),
) -> None:
    """Decrypt a ciphertext file to signed integers, one per line; a value outside the file's
    bound is an error, not a number."""
    from cryptoffload.apps import paillier_files as pf
    from cryptoffload.crypto import paillier as pl
    from cryptoffload.crypto.paillier.bounds import describe

    check_not_input("--out", out, [("--key", key), ("--in", infile)])
    if out is not None:
        check_output_file(out)
    sk = pl.load_key(key, insecure_study_size=insecure_study_size)
    if not isinstance(sk, pl.PrivateKey):
        raise pl.PaillierError(f"{key} holds a public key; decryption needs the private key")
    frame, values = pf.decrypt_file(sk, infile)
    fields: dict[str, Any] = {"count": len(values), "bound": str(frame.bound), "bound_recorded": frame.bound_recorded,
                              "key": sk.public_key.fingerprint.hex()}
    if out is not None:
        atomic_write(out, "".join(f"{v}\n" for v in values), mode=PRIVATE)  # decrypted plaintexts: owner only
        _report(as_json, f"wrote {out}: {len(values):,} integers", {"out": str(out), **fields})
    elif as_json:
        print_json({"values": [str(v) for v in values], **fields})
    else:
        print_data(str(v) for v in values)
    if not frame.bound_recorded:
        say(f"note: {infile} has ciphertext format version {frame.version}, which records no bound: its values were "
            f"checked against the key's signed limit n/3 ({describe(frame.bound)}) only; encrypt again to record one")


def _write_result(out: Path, infiles: list[Path], pk: Any, frame: Any, as_json: bool, what: dict[str, Any]) -> None:
    """The result of an operation: checked before the work, written all at once after it."""
    from cryptoffload.crypto import paillier as pl
    from cryptoffload.crypto.paillier.bounds import describe

    cts = frame.ciphertexts
    atomic_write(out, pl.ciphertexts_to_bytes(cts, pk, bound=frame.bound))
    _report(as_json, f"wrote {out}: {len(cts):,} ciphertext{'' if len(cts) == 1 else 's'} "
                     f"(from {len(infiles)} file{'' if len(infiles) == 1 else 's'}, key {pk.fingerprint.hex()[:16]}, "
                     f"bound {describe(frame.bound)})",
            {**what, "out": str(out), "count": len(cts), "bound": str(frame.bound), "inputs": [str(p) for p in infiles],
             "key": pk.fingerprint.hex()})


def _operands(out: Path, key: Path, infiles: list[Path], insecure_study_size: bool) -> Any:
    """The public key, once --out is known to be writable and none of the inputs."""
    from cryptoffload.apps import paillier_files as pf

    check_not_input("--out", out, [("--key", key), *(("--in", p) for p in infiles)])
    check_output_file(out)
    return pf.public_key_of(key, insecure_study_size)


@app.command("add")
def paillier_add(
    key: Path = typer.Option(..., "--key", help="Public (or private) key file the operands were made under."),
    infiles: List[Path] = typer.Option(..., "--in", help=f"{OPERANDS_HELP}; give two or more, of one length."),
    out: Path = typer.Option(..., "--out", help="Ciphertext file: value i encrypts the sum of every file's value i "
                             "(its bound: the sum of the files' bounds)."),
    rerandomize: bool = RERANDOMIZE_OPTION,
    insecure_study_size: bool = INSECURE_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Add ciphertext files element-wise (homomorphic addition, no private key needed)."""
    from cryptoffload.apps import paillier_files as pf

    pf.check_operand_count(infiles, 2, "add")
    pk = _operands(out, key, infiles, insecure_study_size)
    _write_result(out, infiles, pk, pf.add_elementwise(pk, infiles, rerandomize=rerandomize), as_json,
                  {"operation": "add", "rerandomized": rerandomize})


@app.command("sum")
def paillier_sum(
    key: Path = typer.Option(..., "--key", help="Public (or private) key file the operands were made under."),
    infiles: List[Path] = typer.Option(..., "--in", help=f"{OPERANDS_HELP}; repeat for several files."),
    out: Path = typer.Option(..., "--out", help="Ciphertext file holding one ciphertext: the sum of every value "
                             "(its bound: count x bound over the files)."),
    rerandomize: bool = RERANDOMIZE_OPTION,
    insecure_study_size: bool = INSECURE_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Sum every value of one or more ciphertext files into one ciphertext."""
    from cryptoffload.apps import paillier_files as pf

    pf.check_operand_count(infiles, 1, "sum")
    pk = _operands(out, key, infiles, insecure_study_size)
    _write_result(out, infiles, pk, pf.sum_all(pk, infiles, rerandomize=rerandomize), as_json,
                  {"operation": "sum", "rerandomized": rerandomize})


@app.command("mul")
def paillier_mul(
    key: Path = typer.Option(..., "--key", help="Public (or private) key file the operand was made under."),
    infile: Path = typer.Option(..., "--in", help=f"{OPERANDS_HELP}."),
    scalar: str = typer.Option(..., "--scalar", help="Signed plaintext integer to multiply every value by "
                               "(ASCII digits, optional sign)."),
    out: Path = typer.Option(..., "--out", help="Ciphertext file: value i encrypts scalar x value i "
                             "(its bound: |scalar| x the file's)."),
    rerandomize: bool = RERANDOMIZE_OPTION,
    insecure_study_size: bool = INSECURE_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Multiply every value of a ciphertext file by a plaintext integer."""
    from cryptoffload.apps import paillier_files as pf

    k = pf.parse_scalar(scalar)
    pk = _operands(out, key, [infile], insecure_study_size)
    pf.check_scalar(pk, k)
    _write_result(out, [infile], pk, pf.multiply(pk, infile, k, rerandomize=rerandomize), as_json,
                  {"operation": "mul", "scalar": str(k), "rerandomized": rerandomize})
