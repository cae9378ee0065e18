"""Paillier on files: integers (lines or a CSV column) and ciphertext files as operands of
add, sum and scalar multiply, decrypted back to exact values; operands under another key, of
another length, or out of range refused naming the file; the bound each file records carried
through the arithmetic, which refuses (before computing) a result that could pass n/3, and
checked by decryption, which refuses a value outside it (issue 32)."""

from __future__ import annotations

import re

from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from cryptoffload.apps import paillier_files as pf
from cryptoffload.crypto import paillier as pl


@pytest.fixture(scope="module")
def keys() -> tuple[pl.PublicKey, pl.PrivateKey]:
    return pl.generate_keypair(1024, insecure_study_size=True)


@pytest.fixture(scope="module")
def other_key() -> pl.PublicKey:
    return pl.generate_keypair(1024, insecure_study_size=True)[0]


def _write(pk: pl.PublicKey, path: Path, values: list[int], bound: int | None = None) -> Path:
    """The values encrypted into a file recording ``bound`` (default: their largest |value|)."""
    bound = max((abs(v) for v in values), default=0) if bound is None else bound
    path.write_bytes(pl.ciphertexts_to_bytes(pl.ENCRYPTION.encrypt_many(pk, [pl.encode_signed(pk, v) for v in values]), pk,
                                             bound=bound))
    return path


def _plain(sk: pl.PrivateKey, cts: pl.CiphertextFrame | list[pl.Ciphertext]) -> list[int]:
    cts = cts.ciphertexts if isinstance(cts, pl.CiphertextFrame) else cts
    return [pl.decode_signed(sk.public_key, m) for m in sk.decrypt_many(cts)]


# -- integers ----------------------------------------------------------------------------------
def test_integers_one_per_line(tmp_path: Path) -> None:
    (tmp_path / "m.txt").write_text("5\n -17 \n\n123456789012345678901234567890\n")
    assert pf.read_integers(tmp_path / "m.txt") == [5, -17, 123456789012345678901234567890]
    (tmp_path / "bad.txt").write_text("1\nx2\n")
    with pytest.raises(pl.PaillierError, match=r"bad.txt:2: must be an integer \(ASCII digits, optional sign\), "
                       r"got 'x2'$"):
        pf.read_integers(tmp_path / "bad.txt")


@pytest.mark.parametrize("cell", ["1_000", "\u0661\u0662", "\uff11\uff12", "0x10", "+-1", "\u00b2"])
def test_integers_follow_the_one_grammar(tmp_path: Path, cell: str) -> None:
    """issue 32: `int()` took '1_000' and Arabic-Indic or full-width digits, which another reader
    of the same file would read differently (or not at all); only ASCII digits with a sign pass."""
    (tmp_path / "m.txt").write_text(f"7\n{cell}\n", encoding="utf-8")
    with pytest.raises(pl.PaillierError, match=r"m.txt:2: must be an integer \(ASCII digits"):
        pf.read_integers(tmp_path / "m.txt")
    (tmp_path / "d.csv").write_text(f"amount\n{cell}\n", encoding="utf-8")
    with pytest.raises(pl.PaillierError, match=r"d.csv:2: column 'amount': must be an integer"):
        pf.read_integers(tmp_path / "d.csv", "amount")


def test_integers_of_a_named_csv_column(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text('id,amount,name\n1,10,a\n2, -3 ,"b, c"\n\n3,7,d\n')
    assert pf.read_integers(tmp_path / "d.csv", "amount") == [10, -3, 7]
    assert pf.read_integers(tmp_path / "d.csv", "id") == [1, 2, 3]
    (tmp_path / "h.csv").write_text("amount\n")
    assert pf.read_integers(tmp_path / "h.csv", "amount") == []


@pytest.mark.parametrize("text, column, message", [
    ("id,amount\n1,2\n", "amt", r"d.csv: no column 'amt' in the header line \(columns: 'id', 'amount'\); give one "
     r"of them to --column$"),
    ("id,amount\n1,2\n3,x4\n", "amount", r"d.csv:3: column 'amount': must be an integer \(ASCII digits, optional "
     r"sign\), got 'x4'$"),
    ("id,amount\n1,2\n3,\n", "amount", r"d.csv:3: column 'amount': must be an integer .*, got ''$"),
    ("id,amount\n1,2.5\n", "amount", r"d.csv:2: column 'amount': '2.5' is a decimal number, not an integer; to "
                                       r"encrypt decimals give --fixed-point BITS"),
    ("id,amount\n1,2\n3\n", "amount", r"d.csv:3: the row has 1 cells, no cell for column 'amount'$"),
    ("a,a\n1,2\n", "a", r"d.csv: the header names column 'a' 2 times; rename one of them$"),
    ("\n\n", "a", r"d.csv is empty; with --column it must start with a header line$"),
])
def test_csv_column_refusals(tmp_path: Path, text: str, column: str, message: str) -> None:
    (tmp_path / "d.csv").write_text(text)
    with pytest.raises(pl.PaillierError, match=message):
        pf.read_integers(tmp_path / "d.csv", column)


def test_a_file_holds_what_decrypt_reads(keys) -> None:
    pk, _ = keys
    pf.check_fits_one_file(pk, (pf.MAX_CIPHERTEXT_FILE_BYTES - 300) // pk.ciphertext_bytes, Path("m.txt"))
    with pytest.raises(pl.PaillierError, match="m.txt holds 4,194,304 integers; one ciphertext file holds at most "
                       "4,194,303 for this key"):
        pf.check_fits_one_file(pk, 4_194_304, Path("m.txt"))


# -- arithmetic --------------------------------------------------------------------------------
def test_add_sum_and_multiply_decrypt_to_the_plain_results(tmp_path: Path, keys) -> None:
    pk, sk = keys
    a = _write(pk, tmp_path / "a.bin", [5, -17, 100])
    b = _write(pk, tmp_path / "b.bin", [1, 2, -300])
    c = _write(pk, tmp_path / "c.bin", [10, 20, 30])
    assert _plain(sk, pf.add_elementwise(pk, [a, b])) == [6, -15, -200]
    assert _plain(sk, pf.add_elementwise(pk, [a, b, c])) == [16, 5, -170]
    assert _plain(sk, pf.sum_all(pk, [a])) == [88]
    assert _plain(sk, pf.sum_all(pk, [a, b, c])) == [-149]
    assert _plain(sk, pf.multiply(pk, a, -3)) == [-15, 51, -300]
    assert _plain(sk, pf.multiply(pk, a, 0)) == [0, 0, 0]
    empty = _write(pk, tmp_path / "e.bin", [])
    assert _plain(sk, pf.sum_all(pk, [empty])) == [0]


def test_results_are_rerandomized_unless_asked_not_to(tmp_path: Path, keys) -> None:
    """c^0 = 1 would tell everyone the plaintext is 0; c1 * c2 can be recomputed by whoever saw
    the operands. Rerandomized, neither is recognisable; not rerandomized, both are."""
    pk, sk = keys
    a = _write(pk, tmp_path / "a.bin", [5, 7])
    b = _write(pk, tmp_path / "b.bin", [1, 2])
    ca, cb = pf.read_ciphertexts(pk, a), pf.read_ciphertexts(pk, b)
    plain_sum = [x.value * y.value % pk.nsquare for x, y in zip(ca, cb)]
    assert [c.value for c in pf.add_elementwise(pk, [a, b], rerandomize=False).ciphertexts] == plain_sum
    fresh = pf.add_elementwise(pk, [a, b]).ciphertexts
    assert all(c.value != v for c, v in zip(fresh, plain_sum)) and _plain(sk, fresh) == [6, 9]
    assert [c.value for c in pf.multiply(pk, a, 0, rerandomize=False).ciphertexts] == [1, 1]
    zeros = pf.multiply(pk, a, 0).ciphertexts
    assert all(c.value != 1 for c in zeros) and _plain(sk, zeros) == [0, 0]
    assert pf.sum_all(pk, [a, b], rerandomize=False).ciphertexts[0].value == (plain_sum[0] * plain_sum[1]) % pk.nsquare


def test_operands_under_another_key_or_of_another_length_are_refused(tmp_path: Path, keys, other_key) -> None:
    pk, _ = keys
    a = _write(pk, tmp_path / "a.bin", [1, 2, 3])
    short = _write(pk, tmp_path / "short.bin", [1, 2])
    theirs = _write(other_key, tmp_path / "theirs.bin", [1, 2, 3])
    with pytest.raises(pl.KeyMismatchError) as info:
        pf.add_elementwise(pk, [a, theirs])
    assert str(info.value) == (f"--in {theirs}: ciphertexts were made under key {other_key.fingerprint.hex()}, not "
                               f"this key {pk.fingerprint.hex()} (the --key given); every operand must be encrypted "
                               f"under that one key")
    with pytest.raises(pl.KeyMismatchError, match="theirs.bin"):
        pf.sum_all(pk, [a, theirs])
    with pytest.raises(pl.KeyMismatchError, match="theirs.bin"):
        pf.multiply(pk, theirs, 2)
    with pytest.raises(pl.PaillierError, match=f"^--in {a} holds 3 ciphertexts and --in {short} 2; add works "
                       "element-wise, on files of one length$"):
        pf.add_elementwise(pk, [a, short])
    with pytest.raises(pl.PaillierError, match="^add needs at least 2 --in files, got 1$"):
        pf.add_elementwise(pk, [a])
    with pytest.raises(pl.PaillierError, match="^sum needs at least 1 --in file, got 0$"):
        pf.sum_all(pk, [])
    with pytest.raises(pl.PaillierError, match="^sum takes at most 1,000 --in files, got 1,001$"):
        pf.sum_all(pk, [a] * 1001)


def test_a_ciphertext_at_or_above_n_squared_is_refused_naming_the_file(tmp_path: Path, keys) -> None:
    """A frame whose checksum is redone over a value >= n^2 (forged, not flipped) is caught by
    the range check, and the error says which operand."""
    from cryptoffload.crypto.paillier import framing

    pk, _ = keys
    a = _write(pk, tmp_path / "a.bin", [1])
    (tmp_path / "big.bin").write_bytes(framing.pack(pk, [pk.nsquare + 1], bound=1))
    with pytest.raises(pl.CiphertextFormatError, match=f"^--in {tmp_path / 'big.bin'}: ciphertext 0: not a valid "
                       r"ciphertext for this key \(must be a unit modulo n\^2\); give a ciphertext file written whole by "
                       r"`cryptoffload paillier encrypt` \(or add, sum, mul\) under this key, or make it again$"):
        pf.add_elementwise(pk, [a, tmp_path / "big.bin"])


def test_a_scalar_beyond_the_signed_range_is_refused(tmp_path: Path, keys) -> None:
    pk, sk = keys
    a = _write(pk, tmp_path / "a.bin", [1, -1])
    assert _plain(sk, pf.multiply(pk, a, pk.max_int)) == [pk.max_int, -pk.max_int]
    assert pf.multiply(pk, a, -pk.max_int).bound == pk.max_int
    with pytest.raises(pl.PlaintextRangeError, match=f"^--scalar is a {(pk.max_int + 1).bit_length()}-bit integer; "
                       f"for this 1024-bit key"):
        pf.multiply(pk, a, -(pk.max_int + 1))


SMALL = st.integers(min_value=-(1 << 200), max_value=1 << 200)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(SMALL, SMALL), min_size=1, max_size=5), SMALL)
def test_properties_add_sum_mul(tmp_path: Path, keys, pairs: list[tuple[int, int]], k: int) -> None:
    pk, sk = keys
    xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
    a, b = _write(pk, tmp_path / "a.bin", xs), _write(pk, tmp_path / "b.bin", ys)
    assert _plain(sk, pf.add_elementwise(pk, [a, b])) == [x + y for x, y in pairs]
    assert _plain(sk, pf.sum_all(pk, [a, b])) == [sum(xs) + sum(ys)]
    assert _plain(sk, pf.multiply(pk, a, k)) == [k * x for x in xs]


# -- bounds (issue 32) -------------------------------------------------------------------------
def _with_bound(pk: pl.PublicKey, data: bytes, bound: int, *, redo_checksum: bool = True) -> bytes:
    """A frame with its header's bound replaced: by hand (the checksum left as it was) or by
    someone who redoes the unkeyed checksum."""
    from cryptoffload.crypto.paillier import framing

    start, size = framing._HEADER.size, framing.bound_bytes(pk)
    body = data[:start] + bound.to_bytes(size, "big") + data[start + size:-16]
    return body + (framing._checksum(body) if redo_checksum else data[-16:])


def _version_2(pk: pl.PublicKey, values: list[int]) -> bytes:
    """A frame as cryptoffload wrote it before bounds: no bound field."""
    from cryptoffload.crypto.paillier import framing

    cts = pl.ENCRYPTION.encrypt_many(pk, [pl.encode_signed(pk, v) for v in values])
    body = framing._HEADER.pack(pl.CIPHERTEXT_MAGIC, 2, pk.fingerprint, len(cts)) + b"".join(
        c.value.to_bytes(pk.ciphertext_bytes, "big") for c in cts)
    return body + framing._checksum(body)


def test_results_carry_their_bound(tmp_path: Path, keys) -> None:
    """add: the sum of the bounds; sum: count x bound over the files; mul: |k| x bound; and the
    result's file records it."""
    pk, sk = keys
    a = _write(pk, tmp_path / "a.bin", [5, -17, 100], bound=100)
    b = _write(pk, tmp_path / "b.bin", [1, 2, -300], bound=1000)
    assert pf.add_elementwise(pk, [a, b]).bound == 1100
    assert pf.add_elementwise(pk, [a, b, a]).bound == 1200
    assert pf.sum_all(pk, [a, b]).bound == 3 * 100 + 3 * 1000
    assert pf.multiply(pk, a, -7).bound == 700 and pf.multiply(pk, b, 0).bound == 0
    frame = pf.add_elementwise(pk, [a, b])
    (tmp_path / "r.bin").write_bytes(pl.ciphertexts_to_bytes(frame.ciphertexts, pk, bound=frame.bound))
    got, values = pf.decrypt_file(sk, tmp_path / "r.bin")
    assert (got.bound, got.bound_recorded, values) == (1100, True, [6, -15, -200])


def test_a_result_that_could_pass_the_limit_is_refused_before_any_ciphertext_is_read(tmp_path: Path, keys,
                                                                                     monkeypatch) -> None:
    """The attack: four values near n/3 summed to about 4n/3, which decrypted to a small wrong
    number with exit 0. Now the bound 4 x B > n/3 refuses it -- from the headers alone."""
    pk, _ = keys
    big = pk.max_int - 1
    a = _write(pk, tmp_path / "a.bin", [big, big], bound=big)
    b = _write(pk, tmp_path / "b.bin", [big, big], bound=big)
    small = _write(pk, tmp_path / "s.bin", [1, 2], bound=2)

    def no_read(*args, **kw):
        raise AssertionError("a ciphertext file was read past its header before the bound was checked")

    monkeypatch.setattr(pf, "read_frame", no_read)
    with pytest.raises(pl.PlaintextRangeError, match=r"^sum of 4 values \(count x bound of each file\): the result "
                       r"could reach about 2\^10\d\d\.\d{3}, past this 1024-bit key's signed limit n/3 \(about "
                       r"2\^10\d\d\.\d{3}\), where it would decrypt to a wrong number; sum fewer values"):
        pf.sum_all(pk, [a, b])
    with pytest.raises(pl.PlaintextRangeError, match=r"^add of 2 files \(the sum of their bounds\): .*add fewer files"):
        pf.add_elementwise(pk, [a, small])
    with pytest.raises(pl.PlaintextRangeError, match=r"^mul --scalar of 2 bits .*multiply by a smaller scalar"):
        pf.multiply(pk, a, -2)
    default = _write(pk, tmp_path / "d.bin", [7], bound=pl.DEFAULT_BOUND)
    with pytest.raises(pl.PlaintextRangeError, match=r"^mul --scalar of 1,000 bits \(\|k\| x the file's bound "
                       r"18,446,744,073,709,551,616\): the result could reach about 2\^1063\.000"):
        pf.multiply(pk, default, 1 << 999)


def test_files_without_a_bound_count_as_n_over_3(tmp_path: Path, keys) -> None:
    """Version 2 files (before bounds) are read with the key's whole signed range as their
    bound, and the refusals say why and how to record one."""
    pk, sk = keys
    old = tmp_path / "old.bin"
    old.write_bytes(_version_2(pk, [4, -9]))
    frame, values = pf.decrypt_file(sk, old)
    assert (frame.version, frame.bound, frame.bound_recorded, values) == (2, pk.max_int, False, [4, -9])
    assert _plain(sk, pf.multiply(pk, old, -1)) == [-4, 9]
    (tmp_path / "one.bin").write_bytes(_version_2(pk, [-6]))
    assert pf.sum_all(pk, [_write(pk, tmp_path / "none.bin", []), tmp_path / "one.bin"]).bound == pk.max_int
    with pytest.raises(pl.PlaintextRangeError, match=rf"use a larger key; {old} records no bound \(format version 2\), "
                       "so its values count as n/3: encrypt it again to record one$"):
        pf.multiply(pk, old, 2)
    with pytest.raises(pl.PlaintextRangeError, match="records no bound"):
        pf.sum_all(pk, [old])


def test_decryption_refuses_a_value_outside_its_files_bound(tmp_path: Path, keys) -> None:
    """A hand-edited bound: without the checksum redone it is corruption; with it redone
    (anyone can: it is unkeyed) a lower bound makes decryption refuse the value past it, naming
    the file, the value's position and the bound; a bound above n/3 is no file we wrote; a
    higher one accepts what the file holds -- which its writer chose anyway."""
    pk, sk = keys
    good = _write(pk, tmp_path / "c.bin", [5, 1000, -3], bound=1000)
    data = good.read_bytes()
    (tmp_path / "hand.bin").write_bytes(_with_bound(pk, data, 999, redo_checksum=False))
    with pytest.raises(pl.CiphertextFormatError, match="checksum mismatch"):
        pf.decrypt_file(sk, tmp_path / "hand.bin")
    (tmp_path / "low.bin").write_bytes(_with_bound(pk, data, 999))
    with pytest.raises(pl.PlaintextRangeError, match=rf"^--in {tmp_path / 'low.bin'}: value 2 of 3 decrypts outside "
                       r"the file's bound \|m\| <= 999: the file does not hold what its header says"):
        pf.decrypt_file(sk, tmp_path / "low.bin")
    (tmp_path / "over.bin").write_bytes(_with_bound(pk, data, pk.max_int + 1))
    with pytest.raises(pl.CiphertextFormatError, match="above the key's signed limit n/3"):
        pf.decrypt_file(sk, tmp_path / "over.bin")
    with pytest.raises(pl.CiphertextFormatError, match="above the key's signed limit n/3"):
        pf.sum_all(pk, [tmp_path / "over.bin"])
    (tmp_path / "high.bin").write_bytes(_with_bound(pk, data, pk.max_int))
    assert pf.decrypt_file(sk, tmp_path / "high.bin")[1] == [5, 1000, -3]
    with pytest.raises(pl.PlaintextRangeError, match="past this 1024-bit key's signed limit"):
        pf.add_elementwise(pk, [tmp_path / "high.bin", good])


def test_an_arithmetic_result_past_n_over_3_is_caught_by_decryption(tmp_path: Path, keys) -> None:
    """Operands whose header understates their bound (edited, checksum redone) pass the
    arithmetic's check; the result then holds a value past its own bound, and decryption
    refuses it rather than printing the wrapped number."""
    pk, sk = keys
    big = pk.max_int - 1
    src = _write(pk, tmp_path / "a.bin", [big], bound=big)
    (tmp_path / "liar.bin").write_bytes(_with_bound(pk, src.read_bytes(), 1))
    frame = pf.sum_all(pk, [tmp_path / "liar.bin"] * 4)
    assert frame.bound == 4
    (tmp_path / "r.bin").write_bytes(pl.ciphertexts_to_bytes(frame.ciphertexts, pk, bound=frame.bound))
    with pytest.raises(pl.PlaintextRangeError, match=r"value 1 of 1 decrypts outside the file's bound \|m\| <= 4"):
        pf.decrypt_file(sk, tmp_path / "r.bin")


def test_an_operand_rewritten_during_the_command_is_refused(tmp_path: Path, keys) -> None:
    pk, _ = keys
    a = _write(pk, tmp_path / "a.bin", [1, 2], bound=2)
    op = pf.operand(pk, a)
    a.write_bytes(_with_bound(pk, a.read_bytes(), 5))
    with pytest.raises(pl.PaillierError, match=rf"^--in {a} changed while the command ran"):
        pf.read_operand(pk, op)


def test_an_operands_header_is_refused_as_the_whole_file_would_be(tmp_path: Path, keys, other_key) -> None:
    """Reading headers first must not change what a bad file is called: every refusal of
    :func:`operand` is the one the full read gives (another key vs a corrupted file is told by
    the checksum, which needs every byte)."""
    pk, _ = keys
    data = _write(pk, tmp_path / "a.bin", [1, 2, 3], bound=3).read_bytes()
    flipped = bytearray(data)
    flipped[20] ^= 1  # inside the fingerprint: corruption, not another key
    cases = {"flip.bin": bytes(flipped), "trunc.bin": data[:-5], "long.bin": data + b"\0", "garbage.bin": b"x" * 400,
             "v1.bin": pl.CIPHERTEXT_MAGIC + b"\x01" + data[5:], "empty.bin": b"",
             "theirs.bin": _write(other_key, tmp_path / "t.bin", [1], bound=1).read_bytes()}
    for name, blob in cases.items():
        (tmp_path / name).write_bytes(blob)
        with pytest.raises(pl.PaillierError) as whole:
            pf.read_frame(pk, tmp_path / name)
        with pytest.raises(pl.PaillierError) as header:
            pf.operand(pk, tmp_path / name)
        assert (type(header.value), str(header.value)) == (type(whole.value), str(whole.value)), name
    with pytest.raises(pl.PaillierError, match="checksum"):
        pf.operand(pk, tmp_path / "flip.bin")


def test_encryption_bound_defaults_to_2_64_and_every_value_must_satisfy_it(keys) -> None:
    pk, _ = keys
    src = Path("m.txt")
    assert pf.encryption_bound(pk, [1, -(1 << 64)], None, src) == 1 << 64
    assert pf.encryption_bound(pk, [], None, src) == 1 << 64
    assert pf.encryption_bound(pk, [3, -5], 5, src) == 5
    with pytest.raises(pl.PlaintextRangeError, match=r"^m.txt: value 2 is a 65-bit integer, above the default bound "
                       r"18,446,744,073,709,551,616; give --bound"):
        pf.encryption_bound(pk, [1, (1 << 64) + 1], None, src)
    with pytest.raises(pl.PlaintextRangeError, match=r"^m.txt: value 3 is a 3-bit integer, above --bound 4"):
        pf.encryption_bound(pk, [4, -4, -5], 4, src)
    with pytest.raises(pl.PlaintextRangeError, match=r"^--bound: bound about 2\^1100\.000 is above this 1024-bit "
                       "key's signed limit n/3"):
        pf.encryption_bound(pk, [1], 1 << 1100, src)
    with pytest.raises(pl.PlaintextRangeError, match=r"m.txt: value 1 is a 1,100-bit integer, too large for this key"):
        pf.encryption_bound(pk, [1 << 1099], None, src)
    assert pf.parse_bound(None) is None and pf.parse_bound("12") == 12
    for bad in ("-1", "1_000", "1e3", "0x10", "", "\u0661"):
        with pytest.raises(pl.PaillierError, match="^--bound must be"):
            pf.parse_bound(bad)
    assert pf.parse_scalar("-3") == -3
    for bad in ("1_000", "1.5", "", "\uff12"):
        with pytest.raises(pl.PaillierError, match="^--scalar must be an integer"):
            pf.parse_scalar(bad)


def _magnitude(top: int) -> st.SearchStrategy[int]:
    """Signed integers of every size up to ``top`` bits, small and large alike."""
    return st.integers(0, top).flatmap(lambda b: st.integers(-(1 << b), 1 << b))


@st.composite
def _honest_files(draw, files: int) -> list[tuple[list[int], int]]:
    """``files`` lists of one length, each with a bound at least its largest |value|: that
    value itself, a power of two of any size, or one near 2^1022, which the test clamps to n/3
    of its 1024-bit key (hypothesis draws small integers far more often than large ones, so
    without it no result would come near the limit and nothing would be refused)."""
    count = draw(st.integers(0, 4))
    out = []
    for _ in range(files):
        values = draw(st.lists(_magnitude(1021), min_size=count, max_size=count))
        least = max((abs(v) for v in values), default=0)
        near_limit = st.integers(0, 1 << 64).map(lambda d, least=least: max(least, (1 << 1022) - d))
        anywhere = st.integers(0, 1022).map(lambda e, least=least: max(least, 1 << e))
        out.append((values, draw(st.one_of(st.just(least), anywhere, near_limit))))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operation=st.sampled_from(["add", "sum", "mul"]), files=st.integers(1, 3).flatmap(_honest_files),
       k=_magnitude(1022))
def test_arithmetic_decrypts_to_the_exact_result_or_is_refused(tmp_path: Path, keys, operation: str,
                                                               files: list[tuple[list[int], int]], k: int) -> None:
    """issue 32's property: add, sum and mul on honest files never decrypt to a wrong number --
    either the exact integer result, or a refusal, and a refusal exactly when the result's
    bound (computed here independently) passes n/3."""
    pk, sk = keys
    files = [(values, min(bound, pk.max_int)) for values, bound in files]
    paths = [_write(pk, tmp_path / f"f{i}.bin", values, bound) for i, (values, bound) in enumerate(files)]
    if operation == "add":
        files, paths = files + files[:1], paths + paths[:1]  # at least two operands
        expected, bound = [sum(col) for col in zip(*(v for v, _ in files))], sum(b for _, b in files)
        run = lambda: pf.add_elementwise(pk, paths)  # noqa: E731
    elif operation == "sum":
        expected, bound = [sum(sum(v) for v, _ in files)], sum(len(v) * b for v, b in files)
        run = lambda: pf.sum_all(pk, paths)  # noqa: E731
    else:
        k = max(-pk.max_int, min(k, pk.max_int))
        expected, bound = [k * x for x in files[0][0]], abs(k) * files[0][1]
        run = lambda: pf.multiply(pk, paths[0], k)  # noqa: E731
    try:
        frame = run()
    except pl.PlaintextRangeError as exc:
        assert bound > pk.max_int, str(exc)
        event(f"{operation}: refused")
        return
    event(f"{operation}: exact")
    assert frame.bound == bound <= pk.max_int
    (tmp_path / "r.bin").write_bytes(pl.ciphertexts_to_bytes(frame.ciphertexts, pk, bound=frame.bound))
    assert pf.decrypt_file(sk, tmp_path / "r.bin")[1] == expected


@pytest.mark.parametrize("cell", ["2.5", "1e3", "-.5"])
def test_a_decimal_without_a_fixed_point_names_the_option(tmp_path: Path, cell: str) -> None:
    """issue 37: a decimal is not an integer, and the refusal says how to encrypt it."""
    (tmp_path / "m.txt").write_text(f"7\n{cell}\n", encoding="utf-8")
    with pytest.raises(pl.PaillierError, match=rf"m.txt:2: '{re.escape(cell)}' is a decimal number, not an integer; to "
                       r"encrypt decimals give --fixed-point BITS"):
        pf.read_integers(tmp_path / "m.txt")
    assert pf.read_integers(tmp_path / "m.txt", fixed_point=pl.FixedPoint(4)) == [7 * 16, round(float(cell) * 16)]


def test_a_csv_without_column_names_the_option_and_its_columns(tmp_path: Path) -> None:
    (tmp_path / "sales.csv").write_text("id,amount\n1,10\n", encoding="utf-8")
    with pytest.raises(pl.PaillierError, match=r"sales.csv:1: 'id,amount' holds 2 comma-separated cells.*--column NAME "
                       r"\(its first line: 'id', 'amount'\)$"):
        pf.read_integers(tmp_path / "sales.csv")


def test_standard_input_is_read_like_a_file() -> None:
    assert pf.read_integers(pf.Piped(b"1\n-2\n")) == [1, -2]
    with pytest.raises(pl.PaillierError, match=r"^- \(standard input\):2: must be an integer"):
        pf.read_integers(pf.Piped(b"1\nx\n"))
