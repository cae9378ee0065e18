"""Paillier on files: the integers a user encrypts (one per line, or one column of a CSV) and
ciphertext files as operands of homomorphic arithmetic (``cryptoffload paillier encrypt``,
``add``, ``sum``, ``mul``).

Why here and not in the CLI: which files are acceptable operands is a rule of the data, not of
the command line -- every operand is read with a ceiling, parsed under the one key the command
was given (so a file made under another key is refused by its fingerprint, and every value is
checked to be a unit below n^2 by :mod:`cryptoffload.crypto.paillier.framing`), and an error
names the file it came from, because with several ``--in`` files "not this key" alone would not
say which one is wrong.

Why every operation knows its result's bound before it computes: each ciphertext file records
the bound B its plaintexts satisfy (|m| <= B, :mod:`cryptoffload.crypto.paillier.bounds`), so
``add`` gives B_1 + B_2 + ..., ``sum`` the sum of count x B over its files and ``mul --scalar
k`` |k| B. A result whose bound could pass the signed limit n/3 would decrypt to a small wrong
number; it is refused with the bound, the limit and the fix before any file is read past its
header (:func:`operand` reads headers only), and ``decrypt`` refuses a value outside its
file's bound instead of printing it.

Why results are rerandomized by default: ``c1 * c2`` and ``c^k`` are deterministic, so whoever
saw the operands could recognise the result (and ``c^0 = 1`` would tell everyone the plaintext
is 0). Multiplying by a fresh encryption of 0 (h_s^a, one fixed-base encryption per value)
makes a result indistinguishable from a new encryption; ``rerandomize=False`` skips it when the
result never leaves the key holder.

Standard input: every reader takes a :class:`Piped` (what ``--in -`` read) wherever it takes a
path, so a pipe gets the same ceilings, checks and messages as a file (named ``-``). Fixed
point: ``read_integers(..., fixed_point=FixedPoint(F))`` reads decimal numbers as their
encodings (:mod:`cryptoffload.crypto.paillier.encoding`), which every operation here treats as
the integers they are.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence, Union

from cryptoffload.checks import INT_RE, is_number, parse_int
from cryptoffload.crypto import paillier as pl
from cryptoffload.crypto.paillier import bounds, framing
from cryptoffload.crypto.paillier.encoding import parse_decimal
from cryptoffload.io import open_input, read_input

MAX_INTEGERS_FILE_BYTES = 64 * 1024 * 1024  # `encrypt --in`: millions of integers
MAX_CIPHERTEXT_FILE_BYTES = 1024 * 1024 * 1024  # an operand: two million 2048-bit ciphertexts
MAX_OPERAND_FILES = 1000  # `sum --in` repeated: each file is read in turn, one at a time


@dataclass(frozen=True)
class Piped:
    """Bytes a command read from standard input (``--in -``), standing where a file's path
    would: every reader below takes either, and a message names it ``-`` (standard input)."""

    data: bytes

    def __str__(self) -> str:
        return "- (standard input)"


#: a data file: its path, or what standard input held
Source = Union[Path, Piped]


def _source_bytes(source: Source, what: str, max_bytes: int) -> bytes:
    """The bytes of a file, or of standard input, at most ``max_bytes``."""
    if isinstance(source, Piped):
        if len(source.data) > max_bytes:
            raise pl.PaillierError(f"{what} {source} is {len(source.data):,} bytes; a {what} is at most {max_bytes:,}")
        return source.data
    return read_input(source, what, max_bytes=max_bytes, error=pl.PaillierError)


def _source_text(source: Source, what: str, max_bytes: int) -> str:
    data = _source_bytes(source, what, max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise pl.PaillierError(f"{what} {source} is not UTF-8 text (byte {exc.start})") from None


def public_key_of(path: Path, insecure_study_size: bool = False) -> pl.PublicKey:
    """The public key of a key file, public or private: arithmetic needs no secret."""
    key = pl.load_key(path, insecure_study_size=insecure_study_size)
    return key.public_key if isinstance(key, pl.PrivateKey) else key


# -- plaintext integers ------------------------------------------------------------------------
def read_integers(path: Source, column: str | None = None, fixed_point: pl.FixedPoint | None = None) -> list[int]:
    """The signed integers of ``path``: one per line (blank lines skipped), or, with
    ``column``, the cells of that column of a CSV whose first line is its header. With
    ``fixed_point`` each is a decimal number, read as its fixed-point encoding (an integer)."""
    what = "numbers file (--in)" if fixed_point is not None else "integers file (--in)"
    text = _source_text(path, what, MAX_INTEGERS_FILE_BYTES)
    if column is None:
        return _integers_per_line(path, text, fixed_point)
    return _integers_in_column(path, text, column, fixed_point)


def _integer(path: Source, line: int, cell: str, where: str = "", fixed_point: pl.FixedPoint | None = None) -> int:
    """One integer under the project's one grammar (ASCII digits, an optional sign): ``int()``
    would also take ``1_000`` or Arabic-Indic digits, which another reader of the file would not.
    With ``fixed_point``: one decimal number, as its encoding."""
    if fixed_point is not None:
        return fixed_point.parse(f"{path}:{line}:{where}", cell.strip())
    if is_number(cell) and not INT_RE.fullmatch(cell):
        raise pl.PaillierError(f"{path}:{line}:{where} {cell.strip()!r} is a decimal number, not an integer; to encrypt "
                               f"decimals give --fixed-point BITS (x is encrypted as round(x * 2^BITS))")
    return parse_int(f"{path}:{line}:{where}", cell.strip(), error=pl.PaillierError)


def _integers_per_line(path: Source, text: str, fixed_point: pl.FixedPoint | None = None) -> list[int]:
    lines = [(no, line) for no, line in enumerate(text.splitlines(), 1) if line.strip()]
    if lines and "," in lines[0][1]:
        _refuse_csv_without_column(path, lines[0][1])
    return [_integer(path, no, line, fixed_point=fixed_point) for no, line in lines]


def _refuse_csv_without_column(path: Source, first: str) -> None:
    """A first line with commas is a CSV (``id,amount``) or a row of several numbers: either way
    one value per line was expected, and the fix is ``--column`` (issue 37: the error said only
    that ``id,amount`` is not an integer)."""
    cells = [c.strip() for c in next(csv.reader([first]), [])]
    names = ", ".join(repr(c) for c in cells[:10]) + (", ..." if len(cells) > 10 else "")
    raise pl.PaillierError(f"{path}:1: {first.strip()[:80]!r} holds {len(cells)} comma-separated cells, but without "
                           f"--column the file must hold one number per line; if it is a CSV with a header line, name "
                           f"the column to encrypt: --column NAME (its first line: {names})")


def _column_index(path: Source, header: list[str], column: str) -> int:
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


def _integers_in_column(path: Source, text: str, column: str, fixed_point: pl.FixedPoint | None = None) -> list[int]:
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
            values.append(_integer(path, no, row[index], f" column {column!r}:", fixed_point))
    except csv.Error as exc:
        raise pl.PaillierError(f"{path}: not a CSV file ({exc})") from None
    return values


# -- the bound of what is encrypted ------------------------------------------------------------
def parse_bound(text: str | None, fixed_point: pl.FixedPoint | None = None) -> int | None:
    """``--bound`` as typed (the one integer grammar, not negative), before any key is loaded;
    with ``fixed_point`` a decimal number in the values' own units, recorded as the bound of
    their encodings (``ceil(B * 2^F)``)."""
    if text is None:
        return None
    if fixed_point is None:
        return parse_int("--bound", text, minimum=0, error=pl.PaillierError)
    return fixed_point.bound_for(parse_decimal("--bound", text))


def encryption_bound(pk: pl.PublicKey, values: Sequence[int], bound: int | None, source: Source,
                     fixed_point: pl.FixedPoint | None = None) -> int:
    """The bound ``encrypt`` records: ``bound`` (``--bound``) or :data:`~.bounds.DEFAULT_BOUND`,
    which every value must satisfy -- never one taken from the data, which the header would
    show to everyone. With ``fixed_point`` the values are encodings, and a refusal names the
    number and the bound in the values' own units."""
    origin = "--bound" if bound is not None else "the default bound"
    chosen = bounds.check_bound(pk, pl.DEFAULT_BOUND if bound is None else bound, "--bound")
    if fixed_point is not None:
        _check_fixed_values(pk, values, chosen, source, origin, fixed_point)
    bounds.check_values(pk, values, chosen, str(source), origin)
    return chosen


def _check_fixed_values(pk: pl.PublicKey, values: Sequence[int], bound: int, source: Source, origin: str,
                        fp: pl.FixedPoint) -> None:
    limit = min(bound, pk.max_int)
    for i, v in enumerate(values, 1):
        if abs(v) > limit:
            what = origin if limit == bound else f"this {pk.bits}-bit key's limit"
            raise pl.PlaintextRangeError(
                f"{source}: value {i} ({fp.to_decimal(v)}) is above {what} |x| <= {fp.to_decimal(limit)} at "
                f"--fixed-point {fp.frac_bits} (the encoding is x * 2^{fp.frac_bits}); give --bound at least "
                f"{fp.to_decimal(abs(v))}, fewer fractional bits, or a larger key")


# -- ciphertext files --------------------------------------------------------------------------
def check_fits_one_file(pk: pl.PublicKey, count: int, source: Source) -> None:
    """A result of ``count`` ciphertexts must be readable back as one operand or by decrypt."""
    most = (MAX_CIPHERTEXT_FILE_BYTES - framing.frame_size(pk, 0)) // pk.ciphertext_bytes
    if count > most:
        raise pl.PaillierError(f"{source} holds {count:,} integers; one ciphertext file holds at most {most:,} "
                               f"for this key (what decrypt reads); split the input")


@dataclass(frozen=True)
class Operand:
    """A ciphertext file as its header describes it, read before any arithmetic so the result's
    bound is checked first; :func:`read_operand` reads the rest."""

    path: Source
    flag: str
    header: framing.FrameHeader

    @property
    def count(self) -> int:
        return self.header.count

    @property
    def bound(self) -> int:
        return self.header.bound


#: what a refusal of a ciphertext file's contents tells the user to do (the file's name is
#: given before it: with several --in files, "truncated" alone would not say which)
CIPHERTEXT_FIX = ("give a ciphertext file written whole by `cryptoffload paillier encrypt` (or add, sum, mul) under "
                  "this key, or make it again")


def read_frame(pk: pl.PublicKey, path: Source, flag: str = "--in") -> pl.CiphertextFrame:
    """The ciphertexts of one file made under ``pk``, with their bound; an error names the file,
    its option and the fix."""
    data = _source_bytes(path, f"ciphertext file ({flag})", MAX_CIPHERTEXT_FILE_BYTES)
    try:
        return pl.frame_from_bytes(pk, data)
    except pl.KeyMismatchError as exc:
        raise pl.KeyMismatchError(f"{flag} {path}: {exc} (the --key given); every operand must be encrypted under "
                                  f"that one key") from None
    except pl.PaillierError as exc:
        raise type(exc)(f"{flag} {path}: {exc}; {CIPHERTEXT_FIX}") from None


def read_ciphertexts(pk: pl.PublicKey, path: Source, flag: str = "--in") -> list[pl.Ciphertext]:
    """:func:`read_frame` without the bound."""
    return read_frame(pk, path, flag).ciphertexts


def operand(pk: pl.PublicKey, path: Source, flag: str = "--in") -> Operand:
    """The header of one operand, read without the ciphertexts (a sum of 1,000 files of 1 GiB
    checks its bound before reading any of them). Anything wrong with it is reported as the
    whole file's read reports it (corruption and another key are told apart only with the
    checksum, which needs every byte)."""
    try:
        if isinstance(path, Piped):
            size, head = len(path.data), path.data[:framing.header_size(pk)]
        else:
            with open_input(path, f"ciphertext file ({flag})", error=pl.PaillierError) as f:
                size = os.fstat(f.fileno()).st_size
                if size > MAX_CIPHERTEXT_FILE_BYTES:
                    raise pl.PaillierError(f"ciphertext file ({flag}) {path} is {size:,} bytes")
                head = f.read(framing.header_size(pk))
        return Operand(path, flag, framing.read_header(pk, head, size))
    except pl.PaillierError as exc:
        read_frame(pk, path, flag)  # raises the precise error; it passing means the file just changed
        raise type(exc)(f"{flag} {path}: {exc}") from None


def read_operand(pk: pl.PublicKey, op: Operand) -> list[pl.Ciphertext]:
    """The ciphertexts of an operand whose header was checked; a file whose header changed
    since (rewritten during the command) is refused rather than computed with the old bound."""
    frame = read_frame(pk, op.path, op.flag)
    if (frame.version, len(frame.ciphertexts), frame.bound) != (op.header.version, op.count, op.bound):
        raise pl.PaillierError(f"{op.flag} {op.path} changed while the command ran (its header no longer says what it "
                               f"said when its bound was checked); run the command again")
    return frame.ciphertexts


def check_operand_count(paths: Sequence[Source], least: int, what: str) -> None:
    if len(paths) < least:
        raise pl.PaillierError(f"{what} needs at least {least} --in file{'s' if least > 1 else ''}, got {len(paths)}")
    if len(paths) > MAX_OPERAND_FILES:
        raise pl.PaillierError(f"{what} takes at most {MAX_OPERAND_FILES:,} --in files, got {len(paths):,}")


def _unrecorded(ops: Sequence[Operand]) -> str:
    """For a refusal: the operands that record no bound, whose bound is therefore n/3."""
    old = [str(op.path) for op in ops if not op.header.bound_recorded]
    if not old:
        return ""
    one = len(old) == 1
    return (f"; {', '.join(old[:3])}{', ...' if len(old) > 3 else ''} record{'s' if one else ''} no bound (format "
            f"version {framing.UNBOUNDED_VERSION}), so {'its' if one else 'their'} values count as n/3: encrypt "
            f"{'it' if one else 'them'} again to record one")


def _fresh(pk: pl.PublicKey, cts: list[pl.Ciphertext], rerandomize: bool) -> list[pl.Ciphertext]:
    """``cts`` rerandomized by the encryption service (see the module docstring for why),
    unless ``rerandomize`` is false."""
    return pl.ENCRYPTION.rerandomize(pk, cts) if rerandomize else cts


def add_elementwise(pk: pl.PublicKey, paths: Sequence[Source], *, rerandomize: bool = True) -> pl.CiphertextFrame:
    """Ciphertext i of the result encrypts the sum of plaintext i of every file; the files
    must hold the same number of ciphertexts (element-wise has no meaning otherwise). The
    result's bound is the sum of the files' bounds, checked before anything is added."""
    check_operand_count(paths, 2, "add")
    ops = [operand(pk, p) for p in paths]
    for op in ops[1:]:
        if op.count != ops[0].count:
            raise pl.PaillierError(f"--in {ops[0].path} holds {ops[0].count:,} ciphertexts and --in {op.path} "
                                   f"{op.count:,}; add works element-wise, on files of one length")
    bound = bounds.check_result(pk, sum(op.bound for op in ops),
                                f"add of {len(ops)} files (the sum of their bounds)",
                                "add fewer files, encrypt the operands with a smaller --bound, or use a larger key"
                                + _unrecorded(ops))
    total = read_operand(pk, ops[0])
    for op in ops[1:]:  # every file read under pk: no pair of ciphertexts is checked again
        total = [pl.summed(pk, pair) for pair in zip(total, read_operand(pk, op))]
    return pl.CiphertextFrame(_fresh(pk, total, rerandomize), bound)


def sum_all(pk: pl.PublicKey, paths: Sequence[Source], *, rerandomize: bool = True) -> pl.CiphertextFrame:
    """One ciphertext encrypting the sum of every plaintext of every file (files read one at a
    time, so memory holds one operand). An empty file adds nothing; the sum of nothing is 0.
    The result's bound is the sum over the files of count x bound, checked first."""
    check_operand_count(paths, 1, "sum")
    ops = [operand(pk, p) for p in paths]
    count = sum(op.count for op in ops)
    bound = bounds.check_result(pk, sum(op.count * op.bound for op in ops),
                                f"sum of {count:,} values (count x bound of each file)",
                                "sum fewer values (split the files and add the partial sums after decrypting), "
                                "encrypt with a smaller --bound, or use a larger key" + _unrecorded(ops))
    total = pl.summed(pk, (c for op in ops for c in read_operand(pk, op)))  # one file in memory at a time
    return pl.CiphertextFrame(_fresh(pk, [total], rerandomize), bound)


def parse_scalar(text: str) -> int:
    """``--scalar`` as typed, under the one integer grammar (a signed integer)."""
    return parse_int("--scalar", text, error=pl.PaillierError)


def check_scalar(pk: pl.PublicKey, scalar: int) -> int:
    """A signed plaintext scalar is one integer the key can encode (|k| <= n/3)."""
    if abs(scalar) > pk.max_int:
        raise pl.PlaintextRangeError(f"--scalar is a {scalar.bit_length()}-bit integer; for this {pk.bits}-bit key "
                                     f"|k| <= n/3 (a {pk.max_int.bit_length()}-bit bound)")
    return scalar


def multiply(pk: pl.PublicKey, path: Source, scalar: int, *, rerandomize: bool = True) -> pl.CiphertextFrame:
    """Every ciphertext of ``path`` times the signed plaintext ``scalar``; the result's bound,
    |scalar| x the file's, is checked first."""
    check_scalar(pk, scalar)
    op = operand(pk, path)
    bound = bounds.check_result(pk, abs(scalar) * op.bound,
                                f"mul --scalar of {scalar.bit_length():,} bits (|k| x the file's bound "
                                f"{bounds.describe(op.bound)})",
                                "multiply by a smaller scalar, encrypt with a smaller --bound, or use a larger key"
                                + _unrecorded([op]))
    cts = [c * scalar for c in read_operand(pk, op)]
    return pl.CiphertextFrame(_fresh(pk, cts, rerandomize), bound)


# -- decryption --------------------------------------------------------------------------------
def decrypt_file(sk: pl.PrivateKey, path: Source, flag: str = "--in") -> tuple[pl.CiphertextFrame, list[int]]:
    """The signed plaintexts of a ciphertext file, each checked against the file's bound: a
    value outside it (the file does not hold what its header says -- forged, edited, or an
    overflow that escaped the checks) is an error naming the file, the value's position and the
    bound, never a number."""
    pk = sk.public_key
    frame = read_frame(pk, path, flag)
    values = []
    for i, m in enumerate(sk.raw_decrypt_many([c.value for c in frame.ciphertexts]), 1):  # read under pk
        value = bounds.decode_within(pk, m, frame.bound)
        if value is None:
            raise pl.PlaintextRangeError(
                f"{flag} {path}: value {i} of {len(frame.ciphertexts):,} decrypts outside the file's bound "
                f"|m| <= {bounds.describe(frame.bound)}: the file does not hold what its header says (forged, edited, or "
                f"an overflow past n/3); nothing was output")
        values.append(value)
    return frame, values
