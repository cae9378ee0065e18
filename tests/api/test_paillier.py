"""The Python API's Paillier (cryptoffload.api.paillier): round trips of integers, floats and
arrays against the plaintext arithmetic, the bound carried and checked as the files carry it,
refusals that name the fix, and files the command line reads. Small study keys keep it fast."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoffload import paillier
from cryptoffload.api import paillier as api_paillier
from cryptoffload.crypto import paillier as pl
from cryptoffload.crypto.paillier import djn, encoding, service
from cryptoffload.crypto.paillier import encryptor as encryptor_module
from cryptoffload.crypto.paillier.encoding import DEFAULT_FRAC_BITS


@pytest.fixture(scope="module")
def keys() -> paillier.KeyPair:
    return paillier.keygen(1024, insecure_study_size=True)


def test_integers_add_sum_mul_match_plain_arithmetic(keys: paillier.KeyPair) -> None:
    xs, ys = [5, -17, 100, 0], [1, 2, -300, 2**63]
    a, b = paillier.encrypt(keys.public, xs), paillier.encrypt(keys.public, ys)
    assert paillier.decrypt(keys.private, a) == xs
    assert paillier.decrypt(keys.private, a + b) == [x + y for x, y in zip(xs, ys)]
    assert paillier.decrypt(keys.private, paillier.add(a, b, a)) == [2 * x + y for x, y in zip(xs, ys)]
    assert paillier.decrypt(keys.private, paillier.sum(a, b)) == [sum(xs) + sum(ys)]
    assert paillier.decrypt(keys.private, a * -3) == [-3 * x for x in xs] == paillier.decrypt(keys.private, -3 * a)
    with pytest.raises(paillier.PaillierError, match="give at least one Encrypted"):
        paillier.sum()


def test_the_bound_is_carried_and_checked_before_computing(keys: paillier.KeyPair) -> None:
    a = paillier.encrypt(keys.public, [7, -8], bound=10)
    assert (a.bound, (a + a).bound, paillier.sum(a, a).bound, (a * -6).bound) == (10, 20, 40, 60)
    assert paillier.encrypt(keys.public, [1]).bound == paillier.DEFAULT_BOUND
    huge = paillier.encrypt(keys.public, [1], bound=keys.public.max_int // 2 + 1)
    with pytest.raises(paillier.PlaintextRangeError, match="past this 1024-bit key's signed limit.*add fewer operands"):
        huge + huge
    with pytest.raises(paillier.PlaintextRangeError, match="sum of 3 values .*sum fewer values"):
        paillier.sum(huge, huge, huge)
    with pytest.raises(paillier.PlaintextRangeError, match="^encrypt: value 1 \\(11\\) is above bound=; pass bound= of at least 11"):
        paillier.encrypt(keys.public, [3, 11], bound=10)
    with pytest.raises(paillier.PlaintextRangeError, match="above the default bound \\(2\\^64\\)"):
        paillier.encrypt(keys.public, [2**64 + 1])


def test_decrypt_refuses_a_value_outside_its_bound(keys: paillier.KeyPair) -> None:
    a = paillier.encrypt(keys.public, [5, 500])
    forged = dataclasses.replace(a, bound=100)
    with pytest.raises(paillier.PlaintextRangeError, match="value 1 lies outside its bound"):
        paillier.decrypt(keys.private, forged)


@settings(max_examples=25, deadline=None)
@given(values=st.lists(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), min_size=1, max_size=4),
       k=st.integers(min_value=-50, max_value=50))
def test_floats_round_trip_in_fixed_point(keys: paillier.KeyPair, values: list[float], k: int) -> None:
    enc = paillier.encrypt(keys.public, values)
    assert enc.frac_bits == DEFAULT_FRAC_BITS
    step = 2.0 ** -DEFAULT_FRAC_BITS
    assert all(abs(d - v) <= step / 2 + 1e-9 * abs(v) for d, v in zip(paillier.decrypt(keys.private, enc), values))
    scaled = paillier.decrypt(keys.private, enc * k)
    assert all(abs(d - k * v) <= abs(k) * step + 1e-9 * abs(k * v) for d, v in zip(scaled, values))


def test_fixed_point_bits_and_bound_in_the_values_units(keys: paillier.KeyPair) -> None:
    enc = paillier.encrypt(keys.public, [1, 2.5], fixed_point=8, bound=3)
    assert (enc.frac_bits, enc.bound, enc.value_bound) == (8, 3 * 256, 3.0)
    assert paillier.decrypt(keys.private, enc) == [1.0, 2.5]
    with pytest.raises(paillier.PlaintextRangeError, match="value 0 \\(4\\) is above bound=, \\|x\\| <= 3 at 8 "
                       "fractional bits; pass bound= of at least 4"):
        paillier.encrypt(keys.public, [4.0], fixed_point=8, bound=3)
    with pytest.raises(paillier.PaillierError, match="operand 1 has 8 fractional bits, operand 0 32"):
        paillier.encrypt(keys.public, [1.0]) + paillier.encrypt(keys.public, [1.0], fixed_point=8)
    with pytest.raises(paillier.PaillierError, match="the scalar must be an integer"):
        enc * 1.5  # type: ignore[operator]


def test_numpy_arrays_keep_their_shape(keys: paillier.KeyPair) -> None:
    grid = np.arange(6, dtype=np.int64).reshape(2, 3)
    out = paillier.decrypt_array(keys.private, paillier.encrypt(keys.public, grid) * 2)
    assert out.dtype == np.int64 and out.shape == (2, 3) and (out == grid * 2).all()
    floats = paillier.decrypt_array(keys.private, paillier.encrypt(keys.public, grid / 4))
    assert floats.dtype == np.float64 and np.array_equal(floats, grid / 4)
    big = paillier.decrypt_array(keys.private, paillier.encrypt(keys.public, [2**70], bound=2**70))
    assert big.dtype == object and big.tolist() == [2**70]


def test_refusals_name_the_argument(keys: paillier.KeyPair) -> None:
    other = paillier.keygen(1024, insecure_study_size=True)
    a = paillier.encrypt(keys.public, [1])
    with pytest.raises(paillier.KeyMismatchError, match="operand 1 is encrypted under key .*one public key"):
        a + paillier.encrypt(other.public, [1])
    with pytest.raises(paillier.KeyMismatchError, match="not this private key's"):
        paillier.decrypt(other.private, a)
    with pytest.raises(paillier.PaillierError, match="value 1 is bool"):
        paillier.encrypt(keys.public, [1, True])
    with pytest.raises(paillier.PaillierError, match="values must be numbers"):
        paillier.encrypt(keys.public, "12")  # type: ignore[call-overload]
    with pytest.raises(paillier.PaillierError, match="add works element-wise"):
        a + paillier.encrypt(keys.public, [1, 2])
    with pytest.raises(paillier.PlaintextRangeError, match="cannot encode nan"):
        paillier.encrypt(keys.public, [float("nan")])
    assert paillier.decrypt(keys.private, paillier.encrypt(keys.private, [4])) == [4]  # a private key encrypts too


def test_results_are_rerandomized_unless_asked_not_to(keys: paillier.KeyPair) -> None:
    a = paillier.encrypt(keys.public, [9])
    assert (a + a).ciphertexts[0].value != (a + a).ciphertexts[0].value
    plain = paillier.add(a, a, rerandomize=False)
    assert plain.ciphertexts[0].value == paillier.add(a, a, rerandomize=False).ciphertexts[0].value


def test_files_are_the_command_lines(tmp_path: Path, keys: paillier.KeyPair, capsys: pytest.CaptureFixture[str]) -> None:
    from cryptoffload.cli import main

    sk_path, pk_path = paillier.save_keys(keys, tmp_path / "k.json")
    assert (sk_path.stat().st_mode & 0o777, pk_path.name) == (0o600, "k.json.pub")
    paillier.save(paillier.encrypt(keys.public, [1.5, -2.25], fixed_point=16), tmp_path / "c.bin")
    with pytest.raises(Exception, match="exists; refusing to overwrite"):
        paillier.save(paillier.encrypt(keys.public, [1]), tmp_path / "c.bin")
    main(["paillier", "decrypt", "--key", str(sk_path), "--in", str(tmp_path / "c.bin"), "--fixed-point", "16",
          "--insecure-study-size"])
    assert capsys.readouterr().out.splitlines() == ["1.5", "-2.25"]
    main(["paillier", "mul", "--key", str(pk_path), "--in", str(tmp_path / "c.bin"), "--scalar", "2", "--out",
          str(tmp_path / "m.bin"), "--insecure-study-size", "--quiet"])
    loaded = paillier.load(paillier.load_key(pk_path, insecure_study_size=True), tmp_path / "m.bin", fixed_point=16)
    assert loaded.bound == 2 * paillier.DEFAULT_BOUND and paillier.decrypt(keys.private, loaded) == [3.0, -4.5]
    (tmp_path / "bad.bin").write_bytes(b"nonsense")
    with pytest.raises(paillier.PaillierError, match="bad.bin: .*paillier.save"):
        paillier.load(keys.public, tmp_path / "bad.bin")


# -- each check once, the backend resolved once (issue 36) ---------------------------------------


def _count(monkeypatch: pytest.MonkeyPatch, counts: Counter[str], module: Any, name: str) -> None:
    real = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        counts[name] += 1
        return real(*args, **kwargs)
    monkeypatch.setattr(module, name, counted)


def test_encrypt_resolves_the_backend_once_and_checks_each_value_once(keys: paillier.KeyPair,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The review found the backend resolved three times on one encrypt and every value checked
    twice (against its bound, then again by the signed encoding): now the API's bound check is
    the one check, and the encryption service resolves once."""
    counts: Counter[str] = Counter()
    for module in (service, encryptor_module):
        _count(monkeypatch, counts, module, "resolve_backend")
    _count(monkeypatch, counts, djn, "check_plaintext")
    _count(monkeypatch, counts, encoding, "encode_signed")
    _count(monkeypatch, counts, api_paillier, "_check_within")
    values = [5, -17, 100]
    a = paillier.encrypt(keys.public, values, backend="gmpy2")
    assert counts == Counter({"resolve_backend": 1, "_check_within": 1})
    assert paillier.decrypt(keys.private, a) == values


def test_arithmetic_and_decryption_check_each_operand_once(keys: paillier.KeyPair,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys are compared once per operand (the API's check), not again per pair of ciphertexts
    or per ciphertext decrypted."""
    a = paillier.encrypt(keys.public, [1, 2, 3])
    b = paillier.encrypt(keys.public, [4, 5, 6])
    counts: Counter[str] = Counter()
    _count(monkeypatch, counts, pl.Ciphertext, "_same_key")
    _count(monkeypatch, counts, pl.PrivateKey, "_check")
    _count(monkeypatch, counts, api_paillier, "_same_kind")
    assert paillier.decrypt(keys.private, paillier.add(a, b, a)) == [6, 9, 12]
    assert paillier.decrypt(keys.private, paillier.sum(a, b)) == [21]
    assert counts == Counter({"_same_kind": 2})
