"""``cryptoffload paillier``: Paillier keys, encryption and decryption of files."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from cryptoffload.cli.root import console
from cryptoffload.io import PRIVATE, atomic_write, check_not_input, check_output_file, read_input, read_input_text

app = typer.Typer(no_args_is_help=True, help="Paillier keys, encryption and decryption (files).")

MAX_INTEGERS_FILE_BYTES = 64 * 1024 * 1024  # `encrypt --in`: millions of integers
MAX_CIPHERTEXT_FILE_BYTES = 1024 * 1024 * 1024  # `decrypt --in`: two million 2048-bit ciphertexts


def _read_ints(path: Path) -> list[int]:
    from cryptoffload.crypto.paillier import PaillierError

    text = read_input_text(path, "integers file (--in)", max_bytes=MAX_INTEGERS_FILE_BYTES, error=PaillierError)
    values = []
    for no, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                values.append(int(line.strip()))
            except ValueError:
                raise PaillierError(f"{path}:{no}: not an integer: {line.strip()[:40]!r}") from None
    return values


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
    infile: Path = typer.Option(..., "--in", help="Integers, one per line (signed)."),
    out: Path = typer.Option(..., "--out", help="Ciphertext file (binary, versioned, key fingerprint)."),
    backend: str = typer.Option("auto", "--backend", help="auto, ifma, gmp or gmpy2."),
    variable_time: bool = typer.Option(False, "--variable-time",
                                       help="Faster table lookup that leaks cache access patterns (see docs)."),
    insecure_study_size: bool = typer.Option(False, "--insecure-study-size",
                                             help="Accept a key below 112-bit security (made for a study)."),
) -> None:
    """Encrypt signed integers into a ciphertext file."""
    from cryptoffload.crypto import paillier as pl

    pl.resolve_backend(backend)
    check_not_input("--out", out, [("--key", key), ("--in", infile)])
    check_output_file(out)
    k = pl.load_key(key, insecure_study_size=insecure_study_size)
    pk = k.public_key if isinstance(k, pl.PrivateKey) else k
    pl.resolve_backend(backend, pk.nsquare.bit_length())
    values = [pl.encode_signed(pk, v) for v in _read_ints(infile)]
    most = (MAX_CIPHERTEXT_FILE_BYTES - 64) // pk.ciphertext_bytes
    if len(values) > most:
        raise pl.PaillierError(f"{infile} holds {len(values):,} integers; one ciphertext file holds at most {most:,} "
                               f"for this key (what decrypt reads); split the input")
    cts = pk.encrypt_many(values, backend=backend, constant_time=not variable_time, progress=True)
    atomic_write(out, pl.ciphertexts_to_bytes(cts, pk))
    console.print(f"wrote {out}: {len(cts):,} ciphertexts ({pk.encryptor(backend, not variable_time).describe()})")


@app.command("decrypt")
def paillier_decrypt(
    key: Path = typer.Option(..., "--key", help="Private key file."),
    infile: Path = typer.Option(..., "--in", help="Ciphertext file from `paillier encrypt`."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write integers here (default: print)."),
    insecure_study_size: bool = typer.Option(False, "--insecure-study-size",
                                             help="Accept a key below 112-bit security (made for a study)."),
) -> None:
    """Decrypt a ciphertext file to signed integers."""
    from cryptoffload.crypto import paillier as pl

    check_not_input("--out", out, [("--key", key), ("--in", infile)])
    if out is not None:
        check_output_file(out)
    sk = pl.load_key(key, insecure_study_size=insecure_study_size)
    if not isinstance(sk, pl.PrivateKey):
        raise pl.PaillierError(f"{key} holds a public key; decryption needs the private key")
    data = read_input(infile, "ciphertext file (--in)", max_bytes=MAX_CIPHERTEXT_FILE_BYTES, error=pl.PaillierError)
    cts = pl.ciphertexts_from_bytes(sk.public_key, data)
    values = [pl.decode_signed(sk.public_key, m) for m in sk.decrypt_many(cts)]
    text = "".join(f"{v}\n" for v in values)
    if out is None:
        console.print(text, end="", markup=False, highlight=False)
    else:
        atomic_write(out, text, mode=PRIVATE)  # decrypted plaintexts: owner only
        console.print(f"wrote {out}: {len(values):,} integers")
