"""Paillier on files: integers (lines or a CSV column) and ciphertext files as operands of
add, sum and scalar multiply, decrypted back to exact values; operands under another key, of
another length, or out of range refused naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cryptoffload.apps import paillier_files as pf
from cryptoffload.crypto import paillier as pl


@pytest.fixture(scope="module")
def keys() -> tuple[pl.PublicKey, pl.PrivateKey]:
    return pl.generate_keypair(1024, insecure_study_size=True)


@pytest.fixture(scope="module")
def other_key() -> pl.PublicKey:
    return pl.generate_keypair(1024, insecure_study_size=True)[0]


def _write(pk: pl.PublicKey, path: Path, values: list[int]) -> Path:
    path.write_bytes(pl.ciphertexts_to_bytes(pk.encrypt_many([pl.encode_signed(pk, v) for v in values]), pk))
    return path


def _plain(sk: pl.PrivateKey, cts: list[pl.Ciphertext]) -> list[int]:
    return [pl.decode_signed(sk.public_key, m) for m in sk.decrypt_many(cts)]


# -- integers ----------------------------------------------------------------------------------
def test_integers_one_per_line(tmp_path: Path) -> None:
    (tmp_path / "m.txt").write_text("5\n -17 \n\n123456789012345678901234567890\n")
    assert pf.read_integers(tmp_path / "m.txt") == [5, -17, 123456789012345678901234567890]
    (tmp_path / "bad.txt").write_text("1\nx2\n")
    with pytest.raises(pl.PaillierError, match=r"bad.txt:2: not an integer: 'x2'$"):
        pf.read_integers(tmp_path / "bad.txt")


def test_integers_of_a_named_csv_column(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text('id,amount,name\n1,10,a\n2, -3 ,"b, c"\n\n3,7,d\n')
    assert pf.read_integers(tmp_path / "d.csv", "amount") == [10, -3, 7]
    assert pf.read_integers(tmp_path / "d.csv", "id") == [1, 2, 3]
    (tmp_path / "h.csv").write_text("amount\n")
    assert pf.read_integers(tmp_path / "h.csv", "amount") == []


@pytest.mark.parametrize("text, column, message", [
    ("id,amount\n1,2\n", "amt", r"d.csv: no column 'amt' in the header line \(columns: 'id', 'amount'\); give one "
     r"of them to --column$"),
    ("id,amount\n1,2\n3,x4\n", "amount", r"d.csv:3: column 'amount': not an integer: 'x4'$"),
    ("id,amount\n1,2\n3,\n", "amount", r"d.csv:3: column 'amount': not an integer: ''$"),
    ("id,amount\n1,2.5\n", "amount", r"d.csv:2: column 'amount': not an integer: '2.5'$"),
    ("id,amount\n1,2\n3\n", "amount", r"d.csv:3: the row has 1 cells, no cell for column 'amount'$"),
    ("a,a\n1,2\n", "a", r"d.csv: the header names column 'a' 2 times; rename one of them$"),
    ("\n\n", "a", r"d.csv is empty; with --column it must start with a header line$"),
])
def test_csv_column_refusals(tmp_path: Path, text: str, column: str, message: str) -> None:
    (tmp_path / "d.csv").write_text(text)
    with pytest.raises(pl.PaillierError, match=message):
        pf.read_integers(tmp_path / "d.csv", column)


def test_encrypt_values_uses_the_encryptor_given(keys) -> None:
    pk, sk = keys
    enc = pk.encryptor("gmpy2")
    cts = pf.encrypt_values(enc, [pl.encode_signed(pk, v) for v in (4, -9, 0)])
    assert _plain(sk, cts) == [4, -9, 0] and all(c.public_key == pk for c in cts)
    pf.check_fits_one_file(pk, (pf.MAX_CIPHERTEXT_FILE_BYTES - 64) // pk.ciphertext_bytes, Path("m.txt"))
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
    assert _plain(sk, [pf.sum_all(pk, [a])]) == [88]
    assert _plain(sk, [pf.sum_all(pk, [a, b, c])]) == [-149]
    assert _plain(sk, pf.multiply(pk, a, -3)) == [-15, 51, -300]
    assert _plain(sk, pf.multiply(pk, a, 0)) == [0, 0, 0]
    empty = _write(pk, tmp_path / "e.bin", [])
    assert _plain(sk, [pf.sum_all(pk, [empty])]) == [0]


def test_results_are_rerandomized_unless_asked_not_to(tmp_path: Path, keys) -> None:
    """c^0 = 1 would tell everyone the plaintext is 0; c1 * c2 can be recomputed by whoever saw
    the operands. Rerandomized, neither is recognisable; not rerandomized, both are."""
    pk, sk = keys
    a = _write(pk, tmp_path / "a.bin", [5, 7])
    b = _write(pk, tmp_path / "b.bin", [1, 2])
    ca, cb = pf.read_ciphertexts(pk, a), pf.read_ciphertexts(pk, b)
    plain_sum = [x.value * y.value % pk.nsquare for x, y in zip(ca, cb)]
    assert [c.value for c in pf.add_elementwise(pk, [a, b], rerandomize=False)] == plain_sum
    fresh = pf.add_elementwise(pk, [a, b])
    assert all(c.value != v for c, v in zip(fresh, plain_sum)) and _plain(sk, fresh) == [6, 9]
    assert [c.value for c in pf.multiply(pk, a, 0, rerandomize=False)] == [1, 1]
    zeros = pf.multiply(pk, a, 0)
    assert all(c.value != 1 for c in zeros) and _plain(sk, zeros) == [0, 0]
    assert pf.sum_all(pk, [a, b], rerandomize=False).value == (plain_sum[0] * plain_sum[1]) % pk.nsquare


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
    body = framing._HEADER.pack(pl.CIPHERTEXT_MAGIC, pl.CIPHERTEXT_VERSION, pk.fingerprint, 1) + (
        (pk.nsquare + 1).to_bytes(pk.ciphertext_bytes, "big"))
    (tmp_path / "big.bin").write_bytes(body + framing._checksum(body))
    with pytest.raises(pl.CiphertextFormatError, match=f"^--in {tmp_path / 'big.bin'}: ciphertext 0: not a valid "
                       r"ciphertext for this key \(must be a unit modulo n\^2\)$"):
        pf.add_elementwise(pk, [a, tmp_path / "big.bin"])


def test_a_scalar_beyond_the_signed_range_is_refused(tmp_path: Path, keys) -> None:
    pk, sk = keys
    a = _write(pk, tmp_path / "a.bin", [1, -1])
    assert _plain(sk, pf.multiply(pk, a, pk.max_int)) == [pk.max_int, -pk.max_int]
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
    assert _plain(sk, [pf.sum_all(pk, [a, b])]) == [sum(xs) + sum(ys)]
    assert _plain(sk, pf.multiply(pk, a, k)) == [k * x for x in xs]
