"""``cryptoffload paillier``: Paillier keys, encryption and decryption of files, and homomorphic
arithmetic on ciphertext files (the rules for operands and their bounds live in
:mod:`cryptoffload.apps.paillier_files`).

What a script can rely on: stdout holds data only -- decrypted integers one per line, written
whole whatever the terminal or ``COLUMNS`` (:func:`~cryptoffload.cli.root.print_data`), or with
``--json`` one JSON object -- and status lines go to stderr (none with ``--quiet``). In JSON
every integer that can be large (values, bounds, scalars) is a decimal string, so no reader
rounds it (JavaScript and jq before 1.7 turn numbers past 2^53 into doubles); counts are numbers.

``-`` stands for standard input as a data file (``--in -``: the integers to encrypt, or one
ciphertext operand) and for standard output (``--out -``: the ciphertext file, binary, refused
on a terminal; for ``decrypt`` the values), so commands chain with pipes; never for a key.
``--fixed-point F`` reads decimal numbers and encrypts them in fixed point (x as round(x * 2^F),
:mod:`cryptoffload.crypto.paillier.encoding`); ``decrypt --fixed-point F`` prints them back as
decimals. The file does not record F: decrypt with the F it was encrypted with.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, List, Optional

import typer

from cryptoffload.checks import FRACTION_BITS, KEY_BITS
from cryptoffload.cli.root import (check_binary_stdout, is_quiet, is_stdio, number_option, print_data, print_json,
                                   quiet_option, read_stdin, say, write_stdout)
from cryptoffload.errors import ConfigError
from cryptoffload.io import PRIVATE, atomic_write, check_not_input, check_output_file

if TYPE_CHECKING:   # imported in the commands that use them
    from cryptoffload.apps.paillier_files import Piped
    from cryptoffload.checks import JsonDict
    from cryptoffload.crypto.paillier import CiphertextFrame, PublicKey

INSECURE_OPTION = typer.Option(False, "--insecure-study-size",
                               help="Accept a key below 112-bit security (made for a study).")
JSON_OPTION = typer.Option(False, "--json", help="Print one JSON object on stdout describing what was written "
                           "(large integers as decimal strings) instead of a status line on stderr.")
OPERANDS_HELP = "Ciphertext file from `paillier encrypt` (or add, sum, mul) under --key (- reads standard input)"
OUT_HELP = "; - writes standard output (binary: not a terminal)"
RERANDOMIZE_OPTION = typer.Option(True, "--rerandomize/--no-rerandomize",
                                  help="Multiply each result by a fresh encryption of 0, so it cannot be linked "
                                  "to its operands (skip only when the result stays with the key holder).")

FIXED_POINT_HELP = ("fixed point with this many fractional bits: x as round(x * 2^BITS), resolution 2^-BITS; "
                    "the file does not record it")

app = typer.Typer(no_args_is_help=True, help="Paillier keys, encryption, decryption and arithmetic on ciphertext files.")


def _outside(paths: list[tuple[str, Path | None]]) -> list[tuple[str, Path]]:
    """The (option, path) pairs that name files (``-`` is a stream, not a file to protect)."""
    return [(flag, p) for flag, p in paths if p is not None and not is_stdio(p)]


def _source(path: Path, flag: str, what: str) -> Path | Piped:
    """``path``, or what standard input holds for ``-`` (a :class:`~.paillier_files.Piped`)."""
    from cryptoffload.apps import paillier_files as pf
    from cryptoffload.crypto import paillier as pl

    if not is_stdio(path):
        return path
    most = pf.MAX_INTEGERS_FILE_BYTES if what == "integers" else pf.MAX_CIPHERTEXT_FILE_BYTES
    return pf.Piped(read_stdin(flag, what, max_bytes=most, error=pl.PaillierError))


def _sources(paths: list[Path]) -> list[Path | Piped]:
    """The ``--in`` operands, standard input at most once (it can be read only once)."""
    from cryptoffload.crypto import paillier as pl

    if sum(1 for p in paths if is_stdio(p)) > 1:
        raise pl.PaillierError("--in - is given more than once; standard input holds one operand: give the others "
                               "as files")
    return [_source(p, "--in", "ciphertexts") for p in paths]


def _check_out(out: Path, as_json: bool) -> None:
    """``--out FILE`` must be writable; ``--out -`` (binary on stdout) must not be a terminal nor
    share stdout with ``--json``. Checked before any work."""
    if is_stdio(out):
        if as_json:
            raise ConfigError("--json with --out -: both would be written to standard output; give --out FILE or leave "
                              "out --json")
        check_binary_stdout("--out")
    else:
        check_output_file(out)


def _where(out: Path) -> str:
    return "standard output" if is_stdio(out) else str(out)


def _write(out: Path, data: bytes) -> None:
    if is_stdio(out):
        write_stdout(data)
    else:
        atomic_write(out, data)


def _report(as_json: bool, status: str, fields: JsonDict) -> None:
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
    quiet: bool = quiet_option(),
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
    infile: Path = typer.Option(..., "--in", help="Integers, one per line (signed); with --column, a CSV file; with "
                                "--fixed-point, decimal numbers; - reads standard input."),
    out: Path = typer.Option(..., "--out", help="Ciphertext file (binary, versioned, key fingerprint, bound); - "
                             "writes standard output (not a terminal)."),
    column: Optional[str] = typer.Option(None, "--column", help="--in is a CSV whose first line is a header: "
                                         "encrypt the numbers of this named column."),
    bound: Optional[str] = typer.Option(None, "--bound", help="B with |value| <= B for every value, written in the "
                                        "file's header in the clear and carried through add/sum/mul, which refuse a "
                                        "result that could pass n/3 (default: 2^64, every 64-bit integer; with "
                                        "--fixed-point F a decimal, default 2^(64-F))."),
    fixed_point: Optional[int] = number_option(None, "--fixed-point", bound=FRACTION_BITS,
                                               help=f"Encrypt decimal numbers in {FIXED_POINT_HELP} (decrypt "
                                               "--fixed-point with the same BITS)."),
    backend: str = typer.Option("auto", "--backend", help="auto, ifma, adx, gmp or gmpy2 (auto: the fastest that runs on this CPU)."),
    variable_time: bool = typer.Option(False, "--variable-time",
                                       help="Faster table lookup that leaks cache access patterns (see docs)."),
    insecure_study_size: bool = INSECURE_OPTION,
    as_json: bool = JSON_OPTION,
    quiet: bool = quiet_option(),
) -> None:
    """Encrypt signed integers (or decimals, --fixed-point) into a ciphertext file that records
    their bound."""
    from cryptoffload.apps import paillier_files as pf
    from cryptoffload.crypto import paillier as pl
    from cryptoffload.crypto.paillier.bounds import describe

    check_not_input("--out", None if is_stdio(out) else out, _outside([("--key", key), ("--in", infile)]))
    _check_out(out, as_json)
    fp = None if fixed_point is None else pl.FixedPoint(fixed_point)
    asked = pf.parse_bound(bound, fp)
    pk = pf.public_key_of(key, insecure_study_size)
    enc = pl.ENCRYPTION.encryptor(pk, backend, constant_time=not variable_time)  # resolved once, before any input
    source = _source(infile, "--in", "integers")
    integers = pf.read_integers(source, column, fp)
    chosen = pf.encryption_bound(pk, integers, asked, source, fp)  # the one check of every value
    values = [v % pk.n for v in integers]  # |v| <= chosen <= n/3: the signed encoding
    pf.check_fits_one_file(pk, len(values), source)
    _write(out, pl.ciphertexts_to_bytes(enc.ciphertexts(values, progress=not is_quiet()), pk, bound=chosen))
    shown = describe(chosen) if fp is None else f"|x| <= {fp.to_decimal(chosen)} (fixed point 2^-{fp.frac_bits})"
    _report(as_json, f"wrote {_where(out)}: {len(values):,} ciphertexts, bound {shown} ({enc.describe()})",
            {"out": str(out), "count": len(values), "bound": str(chosen), "format_version": pl.CIPHERTEXT_VERSION,
             "key": pk.fingerprint.hex(), "backend": enc.describe(), "fixed_point": fixed_point})


@app.command("decrypt")
def paillier_decrypt(
    key: Path = typer.Option(..., "--key", help="Private key file."),
    infile: Path = typer.Option(..., "--in", help="Ciphertext file from `paillier encrypt` (or add, sum, mul); - "
                                "reads standard input."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write the values here, one per line (default, and -: "
                                       "standard output)."),
    fixed_point: Optional[int] = number_option(None, "--fixed-point", bound=FRACTION_BITS,
                                               help=f"The values were encrypted in {FIXED_POINT_HELP}: print them "
                                               "as decimals (the shortest that encrypt back to the same)."),
    insecure_study_size: bool = INSECURE_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object: the values as decimal strings (or, "
                                 "with --out, what was written), their count, the file's bound and the key."),
    quiet: bool = quiet_option(),
) -> None:
    """Decrypt a ciphertext file to signed integers (or decimals, --fixed-point), one per line;
    a value outside the file's bound is an error, not a number."""
    from cryptoffload.apps import paillier_files as pf
    from cryptoffload.crypto import paillier as pl
    from cryptoffload.crypto.paillier.bounds import describe

    if out is not None and is_stdio(out):
        out = None  # standard output: where the values go anyway
    check_not_input("--out", out, _outside([("--key", key), ("--in", infile)]))
    if out is not None:
        check_output_file(out)
    sk = pl.load_key(key, insecure_study_size=insecure_study_size)
    if not isinstance(sk, pl.PrivateKey):
        raise pl.PaillierError(f"{key} holds a public key; decryption needs the private key (the file without .pub)")
    fp = None if fixed_point is None else pl.FixedPoint(fixed_point)
    source = _source(infile, "--in", "ciphertexts")
    frame, values = pf.decrypt_file(sk, source)
    texts = [str(v) if fp is None else fp.to_decimal(v) for v in values]
    fields: JsonDict = {"count": len(values), "bound": str(frame.bound), "bound_recorded": frame.bound_recorded,
                              "key": sk.public_key.fingerprint.hex(), "fixed_point": fixed_point}
    if out is not None:
        atomic_write(out, "".join(f"{t}\n" for t in texts), mode=PRIVATE)  # decrypted plaintexts: owner only
        _report(as_json, f"wrote {out}: {len(values):,} {'numbers' if fp else 'integers'}", {"out": str(out), **fields})
    elif as_json:
        print_json({"values": texts, **fields})
    else:
        print_data(texts)
    if not frame.bound_recorded:
        say(f"note: {source} has ciphertext format version {frame.version}, which records no bound: its values were "
            f"checked against the key's signed limit n/3 ({describe(frame.bound)}) only; encrypt again to record one")


def _write_result(out: Path, infiles: list[Path], pk: PublicKey, frame: CiphertextFrame, as_json: bool,
                  what: JsonDict) -> None:
    """The result of an operation: checked before the work, written all at once after it."""
    from cryptoffload.crypto import paillier as pl
    from cryptoffload.crypto.paillier.bounds import describe

    cts = frame.ciphertexts
    _write(out, pl.ciphertexts_to_bytes(cts, pk, bound=frame.bound))
    _report(as_json, f"wrote {_where(out)}: {len(cts):,} ciphertext{'' if len(cts) == 1 else 's'} "
                     f"(from {len(infiles)} file{'' if len(infiles) == 1 else 's'}, key {pk.fingerprint.hex()[:16]}, "
                     f"bound {describe(frame.bound)})",
            {**what, "out": str(out), "count": len(cts), "bound": str(frame.bound), "inputs": [str(p) for p in infiles],
             "key": pk.fingerprint.hex()})


def _operands(out: Path, key: Path, infiles: list[Path], insecure_study_size: bool, as_json: bool) -> PublicKey:
    """The public key, once --out is known to be writable and none of the inputs."""
    from cryptoffload.apps import paillier_files as pf

    check_not_input("--out", None if is_stdio(out) else out, _outside([("--key", key), *(("--in", p) for p in infiles)]))
    _check_out(out, as_json)
    return pf.public_key_of(key, insecure_study_size)


@app.command("add")
def paillier_add(
    key: Path = typer.Option(..., "--key", help="Public (or private) key file the operands were made under."),
    infiles: List[Path] = typer.Option(..., "--in", help=f"{OPERANDS_HELP}; give two or more, of one length."),
    out: Path = typer.Option(..., "--out", help="Ciphertext file: value i encrypts the sum of every file's value i "
                             "(its bound: the sum of the files' bounds)" + OUT_HELP + "."),
    rerandomize: bool = RERANDOMIZE_OPTION,
    insecure_study_size: bool = INSECURE_OPTION,
    as_json: bool = JSON_OPTION,
    quiet: bool = quiet_option(),
) -> None:
    """Add ciphertext files element-wise (homomorphic addition, no private key needed)."""
    from cryptoffload.apps import paillier_files as pf

    pf.check_operand_count(infiles, 2, "add")
    pk = _operands(out, key, infiles, insecure_study_size, as_json)
    _write_result(out, infiles, pk, pf.add_elementwise(pk, _sources(infiles), rerandomize=rerandomize), as_json,
                  {"operation": "add", "rerandomized": rerandomize})


@app.command("sum")
def paillier_sum(
    key: Path = typer.Option(..., "--key", help="Public (or private) key file the operands were made under."),
    infiles: List[Path] = typer.Option(..., "--in", help=f"{OPERANDS_HELP}; repeat for several files."),
    out: Path = typer.Option(..., "--out", help="Ciphertext file holding one ciphertext: the sum of every value "
                             "(its bound: count x bound over the files)" + OUT_HELP + "."),
    rerandomize: bool = RERANDOMIZE_OPTION,
    insecure_study_size: bool = INSECURE_OPTION,
    as_json: bool = JSON_OPTION,
    quiet: bool = quiet_option(),
) -> None:
    """Sum every value of one or more ciphertext files into one ciphertext."""
    from cryptoffload.apps import paillier_files as pf

    pf.check_operand_count(infiles, 1, "sum")
    pk = _operands(out, key, infiles, insecure_study_size, as_json)
    _write_result(out, infiles, pk, pf.sum_all(pk, _sources(infiles), rerandomize=rerandomize), as_json,
                  {"operation": "sum", "rerandomized": rerandomize})


@app.command("mul")
def paillier_mul(
    key: Path = typer.Option(..., "--key", help="Public (or private) key file the operand was made under."),
    infile: Path = typer.Option(..., "--in", help=f"{OPERANDS_HELP}."),
    scalar: str = typer.Option(..., "--scalar", help="Signed plaintext integer to multiply every value by "
                               "(ASCII digits, optional sign)."),
    out: Path = typer.Option(..., "--out", help="Ciphertext file: value i encrypts scalar x value i "
                             "(its bound: |scalar| x the file's)" + OUT_HELP + "."),
    rerandomize: bool = RERANDOMIZE_OPTION,
    insecure_study_size: bool = INSECURE_OPTION,
    as_json: bool = JSON_OPTION,
    quiet: bool = quiet_option(),
) -> None:
    """Multiply every value of a ciphertext file by a plaintext integer."""
    from cryptoffload.apps import paillier_files as pf

    k = pf.parse_scalar(scalar)
    pk = _operands(out, key, [infile], insecure_study_size, as_json)
    pf.check_scalar(pk, k)
    _write_result(out, [infile], pk, pf.multiply(pk, _source(infile, "--in", "ciphertexts"), k,
                                                 rerandomize=rerandomize), as_json,
                  {"operation": "mul", "scalar": str(k), "rerandomized": rerandomize})
