"""``cryptoffload paillier``: Paillier keys, encryption and decryption of files, and homomorphic
arithmetic on ciphertext files (the rules for operands live in :mod:`cryptoffload.apps.paillier_files`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List, Optional

import typer

from cryptoffload.cli.root import console
from cryptoffload.io import PRIVATE, atomic_write, check_not_input, check_output_file, read_input

INSECURE_OPTION = typer.Option(False, "--insecure-study-size",
                               help="Accept a key below 112-bit security (made for a study).")
OPERANDS_HELP = "Ciphertext file from `paillier encrypt` (or add, sum, mul) under --key"
RERANDOMIZE_OPTION = typer.Option(True, "--rerandomize/--no-rerandomize",
                                  help="Multiply each result by a fresh encryption of 0, so it cannot be linked "
                                  "to its operands (skip only when the result stays with the key holder).")

app = typer.Typer(no_args_is_help=True, help="Paillier keys, encryption, decryption and arithmetic on ciphertext files.")


@app.command("keygen")
def paillier_keygen(
    out: Path = typer.Option(..., "--out", help="Private key file (JSON, written with mode 0600)."),
    public_out: Optional[Path] = typer.Option(None, "--public-out", help="Public key file (default: OUT with .pub)."),
    bits: int = typer.Option(2048, "--bits", help="Modulus size (>= 2048 unless --insecure-study-size)."),
    insecure_study_size: bool = typer.Option(False, "--insecure-study-size",
                                             help="Allow keys below 112-bit security (to reproduce a paper, e.g. 1024)."),
) -> None:
    """Generate a Paillier key pair."""
    from cryptoffload.crypto import paillier as pl

    pl.check_key_bits(bits, insecure_study_size)
    check_output_file(out, overwrite=False)  # a folder has no name to add .pub to
    pub_path = public_out or out.with_name(out.name + ".pub")
    pl.check_new_key_paths(out, pub_path)  # before the (long) prime search
    pk, sk = pl.generate_keypair(bits, insecure_study_size=insecure_study_size)
    pl.save_keypair(pk, sk, out, pub_path)
    console.print(f"wrote {out} (private, 0600) and {pub_path} (public); fingerprint {pk.fingerprint.hex()}")


@app.command("encrypt")
def paillier_encrypt(
    key: Path = typer.Option(..., "--key", help="Public (or private) key file."),
    infile: Path = typer.Option(..., "--in", help="Integers, one per line (signed); with --column, a CSV file."),
    out: Path = typer.Option(..., "--out", help="Ciphertext file (binary, versioned, key fingerprint)."),
    column: Optional[str] = typer.Option(None, "--column", help="--in is a CSV whose first line is a header: "
                                         "encrypt the integers of this named column."),
    backend: str = typer.Option("auto", "--backend", help="auto, ifma, gmp or gmpy2."),
    variable_time: bool = typer.Option(False, "--variable-time",
                                       help="Faster table lookup that leaks cache access patterns (see docs)."),
    insecure_study_size: bool = INSECURE_OPTION,
) -> None:
    """Encrypt signed integers into a ciphertext file."""
    from cryptoffload.apps import paillier_files as pf
    from cryptoffload.crypto import paillier as pl

    check_not_input("--out", out, [("--key", key), ("--in", infile)])
    check_output_file(out)
    pk = pf.public_key_of(key, insecure_study_size)
    resolved = pl.resolve_backend(backend, pk.nsquare.bit_length())  # once, for this key, before any input is read
    values = [pl.encode_signed(pk, v) for v in pf.read_integers(infile, column)]
    pf.check_fits_one_file(pk, len(values), infile)
    enc = pk.encryptor(resolved, not variable_time)
    atomic_write(out, pl.ciphertexts_to_bytes(pf.encrypt_values(enc, values), pk))
    console.print(f"wrote {out}: {len(values):,} ciphertexts ({enc.describe()})")


@app.command("decrypt")
def paillier_decrypt(
    key: Path = typer.Option(..., "--key", help="Private key file."),
    infile: Path = typer.Option(..., "--in", help="Ciphertext file from `paillier encrypt`."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write integers here (default: print)."),
    insecure_study_size: bool = INSECURE_OPTION,
) -> None:
    """Decrypt a ciphertext file to signed integers."""
    from cryptoffload.apps import paillier_files as pf
    from cryptoffload.crypto import paillier as pl

    check_not_input("--out", out, [("--key", key), ("--in", infile)])
    if out is not None:
        check_output_file(out)
    sk = pl.load_key(key, insecure_study_size=insecure_study_size)
    if not isinstance(sk, pl.PrivateKey):
        raise pl.PaillierError(f"{key} holds a public key; decryption needs the private key")
    data = read_input(infile, "ciphertext file (--in)", max_bytes=pf.MAX_CIPHERTEXT_FILE_BYTES, error=pl.PaillierError)
    cts = pl.ciphertexts_from_bytes(sk.public_key, data)
    values = [pl.decode_signed(sk.public_key, m) for m in sk.decrypt_many(cts)]
    text = "".join(f"{v}\n" for v in values)
    if out is None:
        console.print(text, end="", markup=False, highlight=False)
    else:
        atomic_write(out, text, mode=PRIVATE)  # decrypted plaintexts: owner only
        console.print(f"wrote {out}: {len(values):,} integers")


def _write_result(out: Path, infiles: list[Path], pk: Any, cts: list[Any]) -> None:
    """The result of an operation: checked before the work, written all at once after it."""
    from cryptoffload.crypto import paillier as pl

    atomic_write(out, pl.ciphertexts_to_bytes(cts, pk))
    console.print(f"wrote {out}: {len(cts):,} ciphertext{'' if len(cts) == 1 else 's'} "
                  f"(from {len(infiles)} file{'' if len(infiles) == 1 else 's'}, key {pk.fingerprint.hex()[:16]})")


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
    out: Path = typer.Option(..., "--out", help="Ciphertext file: value i encrypts the sum of every file's value i."),
    rerandomize: bool = RERANDOMIZE_OPTION,
    insecure_study_size: bool = INSECURE_OPTION,
) -> None:
    """Add ciphertext files element-wise (homomorphic addition, no private key needed)."""
    from cryptoffload.apps import paillier_files as pf

    pf.check_operand_count(infiles, 2, "add")
    pk = _operands(out, key, infiles, insecure_study_size)
    _write_result(out, infiles, pk, pf.add_elementwise(pk, infiles, rerandomize=rerandomize))


@app.command("sum")
def paillier_sum(
    key: Path = typer.Option(..., "--key", help="Public (or private) key file the operands were made under."),
    infiles: List[Path] = typer.Option(..., "--in", help=f"{OPERANDS_HELP}; repeat for several files."),
    out: Path = typer.Option(..., "--out", help="Ciphertext file holding one ciphertext: the sum of every value."),
    rerandomize: bool = RERANDOMIZE_OPTION,
    insecure_study_size: bool = INSECURE_OPTION,
) -> None:
    """Sum every value of one or more ciphertext files into one ciphertext."""
    from cryptoffload.apps import paillier_files as pf

    pf.check_operand_count(infiles, 1, "sum")
    pk = _operands(out, key, infiles, insecure_study_size)
    _write_result(out, infiles, pk, [pf.sum_all(pk, infiles, rerandomize=rerandomize)])


@app.command("mul")
def paillier_mul(
    key: Path = typer.Option(..., "--key", help="Public (or private) key file the operand was made under."),
    infile: Path = typer.Option(..., "--in", help=f"{OPERANDS_HELP}."),
    scalar: int = typer.Option(..., "--scalar", help="Signed plaintext integer to multiply every value by."),
    out: Path = typer.Option(..., "--out", help="Ciphertext file: value i encrypts scalar x value i."),
    rerandomize: bool = RERANDOMIZE_OPTION,
    insecure_study_size: bool = INSECURE_OPTION,
) -> None:
    """Multiply every value of a ciphertext file by a plaintext integer."""
    from cryptoffload.apps import paillier_files as pf

    pk = _operands(out, key, [infile], insecure_study_size)
    pf.check_scalar(pk, scalar)
    _write_result(out, [infile], pk, pf.multiply(pk, infile, scalar, rerandomize=rerandomize))
