"""``cryptoffload paillier``: Paillier keys, encryption and decryption of files."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from cryptoffload.cli.root import console
from cryptoffload.io import PRIVATE, atomic_write

app = typer.Typer(no_args_is_help=True, help="Paillier keys, encryption and decryption (files).")


def _read_ints(path: Path) -> list[int]:
    from cryptoffload.crypto.paillier import PaillierError

    try:
        text = path.read_text()
    except OSError as exc:
        raise PaillierError(f"cannot read {path}: {exc.strerror}") from None
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
    pub_path = public_out or out.with_name(out.name + ".pub")
    for p in (out, pub_path):
        if p.exists():
            raise pl.PaillierError(f"{p} exists; refusing to overwrite a key")
    pk, sk = pl.generate_keypair(bits, insecure_study_size=insecure_study_size)
    pl.save_key(sk, out)
    pl.save_key(pk, pub_path)
    console.print(f"wrote {out} (private, 0600) and {pub_path} (public); fingerprint {pk.fingerprint.hex()}")


@app.command("encrypt")
def paillier_encrypt(
    key: Path = typer.Option(..., "--key", help="Public (or private) key file."),
    infile: Path = typer.Option(..., "--in", help="Integers, one per line (signed)."),
    out: Path = typer.Option(..., "--out", help="Ciphertext file (binary, versioned, key fingerprint)."),
    backend: str = typer.Option("auto", "--backend", help="auto, ifma, gmp or gmpy2."),
    variable_time: bool = typer.Option(False, "--variable-time",
                                       help="Faster table lookup that leaks cache access patterns (see docs)."),
) -> None:
    """Encrypt signed integers into a ciphertext file."""
    from cryptoffload.crypto import paillier as pl

    k = pl.load_key(key)
    pk = k.public_key if isinstance(k, pl.PrivateKey) else k
    values = [pl.encode_signed(pk, v) for v in _read_ints(infile)]
    cts = pk.encrypt_many(values, backend=backend, constant_time=not variable_time, progress=True)
    atomic_write(out, pl.ciphertexts_to_bytes(cts))
    console.print(f"wrote {out}: {len(cts):,} ciphertexts ({pk.encryptor(backend, not variable_time).describe()})")


@app.command("decrypt")
def paillier_decrypt(
    key: Path = typer.Option(..., "--key", help="Private key file."),
    infile: Path = typer.Option(..., "--in", help="Ciphertext file from `paillier encrypt`."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write integers here (default: print)."),
) -> None:
    """Decrypt a ciphertext file to signed integers."""
    from cryptoffload.crypto import paillier as pl

    sk = pl.load_key(key)
    if not isinstance(sk, pl.PrivateKey):
        raise pl.PaillierError(f"{key} holds a public key; decryption needs the private key")
    try:
        data = infile.read_bytes()
    except OSError as exc:
        raise pl.PaillierError(f"cannot read {infile}: {exc.strerror}") from None
    cts = pl.ciphertexts_from_bytes(sk.public_key, data)
    values = [pl.decode_signed(sk.public_key, m) for m in sk.decrypt_many(cts)]
    text = "".join(f"{v}\n" for v in values)
    if out is None:
        console.print(text, end="", markup=False, highlight=False)
    else:
        atomic_write(out, text, mode=PRIVATE)  # decrypted plaintexts: owner only
        console.print(f"wrote {out}: {len(values):,} integers")
