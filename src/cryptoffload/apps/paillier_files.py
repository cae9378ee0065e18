"""Paillier on files: the integers a user encrypts (one per line, or one column of a CSV) and
ciphertext files as operands of homomorphic arithmetic (``cryptoffload paillier encrypt``,
``add``, ``sum``, ``mul``).

Why here and not in the CLI: which files are acceptable operands is a rule of the data, not of
the command line -- every operand is read with a ceiling, parsed under the one key the command
was given (so a file made under another key is refused by its fingerprint, and every value is
checked to be a unit below n^2 by :mod:`cryptoffload.crypto.paillier.framing`), and an error
names the file it came from, because with several ``--in`` files "not this key" alone would not
say which one is wrong.

Why results are rerandomized by default: ``c1 * c2`` and ``c^k`` are deterministic, so whoever
saw the operands could recognise the result (and ``c^0 = 1`` would tell everyone the plaintext
is 0). Multiplying by a fresh encryption of 0 (h_s^a, one fixed-base encryption per value)
makes a result indistinguishable from a new encryption; ``rerandomize=False`` skips it when the
result never leaves the key holder.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Sequence

from cryptoffload.crypto import paillier as pl
from cryptoffload.io import read_input, read_input_text

MAX_INTEGERS_FILE_BYTES = 64 * 1024 * 1024  # `encrypt --in`: millions of integers
MAX_CIPHERTEXT_FILE_BYTES = 1024 * 1024 * 1024  # an operand: two million 2048-bit ciphertexts
MAX_OPERAND_FILES = 1000  # `sum --in` repeated: each file is read in turn, one at a time
_FRAME_OVERHEAD = 64  # header and checksum of a ciphertext frame, rounded up


def public_key_of(path: Path, insecure_study_size: bool = False) -> pl.PublicKey:
    """The public key of a key file, public or private: arithmetic needs no secret."""
    key = pl.load_key(path, insecure_study_size=insecure_study_size)
    return key.public_key if isinstance(key, pl.PrivateKey) else key


# -- plaintext integers ------------------------------------------------------------------------
def read_integers(path: Path, column: str | None = None) -> list[int]:
    """The signed integers of ``path``: one per line (blank lines skipped), or, with
    ``column``, the cells of that column of a CSV whose first line is its header."""
    text = read_input_text(path, "integers file (--in)", max_bytes=MAX_INTEGERS_FILE_BYTES, error=pl.PaillierError)
    if column is None:
        return _integers_per_line(path, text)
    return _integers_in_column(path, text, column)


def _integer(path: Path, line: int, cell: str, where: str = "") -> int:
    try:
        return int(cell.strip())
    except ValueError:
        raise pl.PaillierError(f"{path}:{line}:{where} not an integer: {cell.strip()[:40]!r}") from None


def _integers_per_line(path: Path, text: str) -> list[int]:
    return [_integer(path, no, line) for no, line in enumerate(text.splitlines(), 1) if line.strip()]


def _column_index(path: Path, header: list[str], column: str) -> int:
    """Where ``column`` is in the header; a name missing or there twice is refused with the
    names the header does hold."""
    names = [h.strip() for h in header]
    hits = [i for i, name in enumerate(names) if name == column.strip()]
    if len(hits) == 1:
        return hits[0]
    shown = ", ".join(repr(n) for n in names[:20]) + (", ..." if len(names) > 20 else "")
    if hits:
        raise pl.PaillierError(f"{path}: the header names column {column!r} {len(hits)} times; rename one of them")
    raise pl.PaillierError(f"{path}: no column {column!r} in the header line (columns: {shown}); "
                           f"give one of them to --column")


def _integers_in_column(path: Path, text: str, column: str) -> list[int]:
    """The cells of one named column; every data line must have that cell and it must be an
    integer (a blank line is skipped, a short row is refused: a silently missing value would
    change a sum)."""
    lines = [(no, line) for no, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not lines:
        raise pl.PaillierError(f"{path} is empty; with --column it must start with a header line")
    rows = csv.reader([line for _, line in lines])
    try:
        index = _column_index(path, next(rows), column)
        values = []
        for (no, _), row in zip(lines[1:], rows):
            if index >= len(row):
                raise pl.PaillierError(f"{path}:{no}: the row has {len(row)} cells, no cell for column {column!r}")
            values.append(_integer(path, no, row[index], f" column {column!r}:"))
    except csv.Error as exc:
        raise pl.PaillierError(f"{path}: not a CSV file ({exc})") from None
    return values


# -- ciphertext files --------------------------------------------------------------------------
def check_fits_one_file(pk: pl.PublicKey, count: int, source: Path) -> None:
    """A result of ``count`` ciphertexts must be readable back as one operand or by decrypt."""
    most = (MAX_CIPHERTEXT_FILE_BYTES - _FRAME_OVERHEAD) // pk.ciphertext_bytes
    if count > most:
        raise pl.PaillierError(f"{source} holds {count:,} integers; one ciphertext file holds at most {most:,} "
                               f"for this key (what decrypt reads); split the input")


def encrypt_values(enc: pl.Encryptor, values: Sequence[int]) -> list[pl.Ciphertext]:
    """Encrypt plaintexts already encoded (in [0, n)) with one encryptor, so the backend and
    table the caller chose are the ones used and described."""
    pk = enc.public_key
    return [pl.Ciphertext(pk, c) for c in enc.encrypt_raw(list(values), progress=True)]


def read_ciphertexts(pk: pl.PublicKey, path: Path, flag: str = "--in") -> list[pl.Ciphertext]:
    """The ciphertexts of one file, made under ``pk``; an error names the file and its option."""
    data = read_input(path, f"ciphertext file ({flag})", max_bytes=MAX_CIPHERTEXT_FILE_BYTES, error=pl.PaillierError)
    try:
        return pl.ciphertexts_from_bytes(pk, data)
    except pl.KeyMismatchError as exc:
        raise pl.KeyMismatchError(f"{flag} {path}: {exc} (the --key given); every operand must be encrypted under "
                                  f"that one key") from None
    except pl.PaillierError as exc:
        raise type(exc)(f"{flag} {path}: {exc}") from None


def check_operand_count(paths: Sequence[Path], least: int, what: str) -> None:
    if len(paths) < least:
        raise pl.PaillierError(f"{what} needs at least {least} --in file{'s' if least > 1 else ''}, got {len(paths)}")
    if len(paths) > MAX_OPERAND_FILES:
        raise pl.PaillierError(f"{what} takes at most {MAX_OPERAND_FILES:,} --in files, got {len(paths):,}")


def _rerandomized(pk: pl.PublicKey, cts: list[pl.Ciphertext], rerandomize: bool) -> list[pl.Ciphertext]:
    if not rerandomize or not cts:
        return cts
    zeros = pk.encryptor().randomness(len(cts))
    return [pl.Ciphertext(pk, c.value * r % pk.nsquare) for c, r in zip(cts, zeros)]


def add_elementwise(pk: pl.PublicKey, paths: Sequence[Path], *, rerandomize: bool = True) -> list[pl.Ciphertext]:
    """Ciphertext i of the result encrypts the sum of plaintext i of every file; the files
    must hold the same number of ciphertexts (element-wise has no meaning otherwise)."""
    check_operand_count(paths, 2, "add")
    total = read_ciphertexts(pk, paths[0])
    for path in paths[1:]:
        cts = read_ciphertexts(pk, path)
        if len(cts) != len(total):
            raise pl.PaillierError(f"--in {paths[0]} holds {len(total):,} ciphertexts and --in {path} "
                                   f"{len(cts):,}; add works element-wise, on files of one length")
        total = [a + b for a, b in zip(total, cts)]
    return _rerandomized(pk, total, rerandomize)


def sum_all(pk: pl.PublicKey, paths: Sequence[Path], *, rerandomize: bool = True) -> pl.Ciphertext:
    """One ciphertext encrypting the sum of every plaintext of every file (files read one at a
    time, so memory holds one operand). An empty file adds nothing; the sum of nothing is 0."""
    check_operand_count(paths, 1, "sum")
    total = pl.Ciphertext(pk, 1)  # 1 = (1 + 0 n) h_s^0: an encryption of 0, rerandomized below
    for path in paths:
        for c in read_ciphertexts(pk, path):
            total = total + c
    return _rerandomized(pk, [total], rerandomize)[0]


def check_scalar(pk: pl.PublicKey, scalar: int) -> int:
    """A signed plaintext scalar is one integer the key can encode (|k| <= n/3)."""
    if abs(scalar) > pk.max_int:
        raise pl.PlaintextRangeError(f"--scalar is a {scalar.bit_length()}-bit integer; for this {pk.bits}-bit key "
                                     f"|k| <= n/3 (a {pk.max_int.bit_length()}-bit bound)")
    return scalar


def multiply(pk: pl.PublicKey, path: Path, scalar: int, *, rerandomize: bool = True) -> list[pl.Ciphertext]:
    """Every ciphertext of ``path`` times the signed plaintext ``scalar``."""
    check_scalar(pk, scalar)
    return _rerandomized(pk, [c * scalar for c in read_ciphertexts(pk, path)], rerandomize)
