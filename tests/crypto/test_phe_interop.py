"""Interoperation with python-paillier (phe): keys and ciphertexts both ways, mixed arithmetic,
exponent handling and refusal of other keys' numbers."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from phe import EncryptedNumber, PaillierPrivateKey, PaillierPublicKey, paillier

from cryptoffload.crypto.paillier import (
    ENCRYPTION,
    Ciphertext,
    FixedPoint,
    KeyMismatchError,
    PaillierError,
    PlaintextRangeError,
    PrivateKey,
    PublicKey,
    encode_signed,
    generate_keypair,
)
from cryptoffload.crypto.phe_interop import (
    from_phe_encrypted_number,
    from_phe_encrypted_numbers,
    from_phe_private_key,
    from_phe_public_key,
    phe_exponent_for,
    to_phe_encrypted_number,
    to_phe_private_key,
    to_phe_public_key,
)

FEW = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def keys() -> tuple[PublicKey, PrivateKey]:
    return generate_keypair(1024, insecure_study_size=True)


@pytest.fixture(scope="module")
def phe_keys(keys) -> tuple[PaillierPublicKey, PaillierPrivateKey]:
    pk, sk = keys
    phe_pk = to_phe_public_key(pk)
    return phe_pk, to_phe_private_key(sk, phe_pk)


@pytest.fixture(scope="module")
def foreign_phe_keys() -> tuple[PaillierPublicKey, PaillierPrivateKey]:
    return paillier.generate_paillier_keypair(n_length=1024)


# --------------------------------------------------------------------------------------------
# keys


def test_public_key_round_trip(keys):
    pk, _ = keys
    phe_pk = to_phe_public_key(pk)
    assert phe_pk.n == pk.n and phe_pk.g == pk.g
    back = from_phe_public_key(phe_pk)
    assert back == pk and back.fingerprint == pk.fingerprint
    assert from_phe_public_key(phe_pk, hs=pk.hs).hs == pk.hs


def test_private_key_round_trip(keys):
    pk, sk = keys
    phe_sk = to_phe_private_key(sk)
    assert {phe_sk.p, phe_sk.q} == {sk.p, sk.q}
    back = from_phe_private_key(phe_sk)
    assert (back.p, back.q) == (sk.p, sk.q) and back.public_key == pk
    attached = from_phe_private_key(phe_sk, pk)
    assert attached.public_key is pk


def test_phe_generated_keys_work_here(foreign_phe_keys):
    phe_pk, phe_sk = foreign_phe_keys
    sk = from_phe_private_key(phe_sk)
    pk = sk.public_key
    assert sk.decrypt(ENCRYPTION.encrypt(pk, 123456789)) == 123456789
    assert phe_sk.decrypt(to_phe_encrypted_number(ENCRYPTION.encrypt(pk, encode_signed(pk, -42)), phe_pk=phe_pk)) == -42


def test_key_mismatches_refused(keys, foreign_phe_keys):
    pk, sk = keys
    phe_pk, phe_sk = foreign_phe_keys
    with pytest.raises(KeyMismatchError):
        from_phe_private_key(phe_sk, pk)
    with pytest.raises(KeyMismatchError):
        to_phe_private_key(sk, phe_pk)
    with pytest.raises(KeyMismatchError):
        to_phe_encrypted_number(ENCRYPTION.encrypt(pk, 1), phe_pk=phe_pk)


@pytest.mark.parametrize("fn", [to_phe_public_key, from_phe_public_key, to_phe_private_key, from_phe_private_key])
def test_wrong_types_refused(fn):
    with pytest.raises(PaillierError):
        fn(12345)


# --------------------------------------------------------------------------------------------
# ciphertexts


@FEW
@given(x=st.integers(-(1 << 300), 1 << 300))
def test_phe_encrypts_we_decrypt(keys, phe_keys, x):
    pk, sk = keys
    phe_pk, _ = phe_keys
    enc = phe_pk.encrypt(x)
    assert enc.exponent == 0
    assert sk.decrypt_signed(from_phe_encrypted_number(enc, pk)) == x


@FEW
@given(x=st.integers(-(1 << 300), 1 << 300))
def test_we_encrypt_phe_decrypts(keys, phe_keys, x):
    pk, sk = keys
    _, phe_sk = phe_keys
    ct = ENCRYPTION.encrypt(pk, encode_signed(pk, x))
    enc = to_phe_encrypted_number(ct)
    assert phe_sk.decrypt(enc) == x
    assert phe_sk.raw_decrypt(enc.ciphertext(be_secure=False)) == x % pk.n
    # phe obfuscates before sharing: a different ciphertext, the same value
    shared = enc.ciphertext()
    assert shared != ct.value and sk.decrypt_signed(Ciphertext(pk, shared)) == x


def test_textbook_and_extreme_values(keys, phe_keys):
    pk, sk = keys
    phe_pk, phe_sk = phe_keys
    for x in (0, 1, -1, phe_pk.max_int, -phe_pk.max_int):
        assert sk.decrypt_signed(from_phe_encrypted_number(phe_pk.encrypt(x), pk)) == x
        assert phe_sk.decrypt(to_phe_encrypted_number(ENCRYPTION.encrypt(pk, encode_signed(pk, x)))) == x
    # the classic two-exponentiation encryption decrypts in phe too
    assert phe_sk.raw_decrypt(pk.raw_encrypt_classic(77)) == 77
    # documented boundary: ours allows |x| = n//3, phe stops one short
    edge = to_phe_encrypted_number(ENCRYPTION.encrypt(pk, encode_signed(pk, pk.max_int)))
    with pytest.raises(OverflowError):
        phe_sk.decrypt(edge)


def test_mixed_homomorphic_arithmetic(keys, phe_keys):
    pk, sk = keys
    phe_pk, phe_sk = phe_keys
    ours = ENCRYPTION.encrypt(pk, encode_signed(pk, -1000))
    theirs = from_phe_encrypted_number(phe_pk.encrypt(250), pk)
    total = ours + theirs * 3 + 5
    assert sk.decrypt_signed(total) == -245
    # and in phe: our ciphertext added to phe's
    mixed = to_phe_encrypted_number(ours) + phe_pk.encrypt(999) * 2
    assert phe_sk.decrypt(mixed) == 998
    assert sk.decrypt_signed(from_phe_encrypted_number(mixed, pk)) == 998


def test_batch_conversion(keys, phe_keys):
    pk, sk = keys
    phe_pk, _ = phe_keys
    xs = [5, -6, 7]
    cts = from_phe_encrypted_numbers([phe_pk.encrypt(x) for x in xs], pk)
    assert [sk.decrypt_signed(c) for c in cts] == xs


def test_foreign_phe_number_refused(keys, foreign_phe_keys):
    pk, _ = keys
    phe_pk, _ = foreign_phe_keys
    with pytest.raises(KeyMismatchError, match=pk.fingerprint.hex()):
        from_phe_encrypted_number(phe_pk.encrypt(1), pk)


def test_garbled_phe_ciphertext_refused(keys, phe_keys):
    pk, _ = keys
    phe_pk, _ = phe_keys
    with pytest.raises(PaillierError):
        from_phe_encrypted_number(EncryptedNumber(phe_pk, 0), pk)
    with pytest.raises(PaillierError):
        from_phe_encrypted_number(EncryptedNumber(phe_pk, pk.nsquare + 1), pk)
    with pytest.raises(PaillierError):
        from_phe_encrypted_number(12345, pk)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# exponents


def test_negative_exponent_needs_enough_fractional_bits(keys, phe_keys):
    pk, sk = keys
    phe_pk, _ = phe_keys
    enc = phe_pk.encrypt(1.5, precision=2 ** -8)  # phe picks exponent -2 (16^-2 = 2^-8)
    assert enc.exponent == -2
    with pytest.raises(PlaintextRangeError, match="frac_bits >= 8"):
        from_phe_encrypted_number(enc, pk)
    with pytest.raises(PlaintextRangeError):
        from_phe_encrypted_number(enc, pk, frac_bits=7)
    for f in (8, 12, 32):
        ct = from_phe_encrypted_number(enc, pk, frac_bits=f)
        assert FixedPoint(f).decode(pk, sk.decrypt(ct)) == 1.5
    # a float at full double precision
    enc = phe_pk.encrypt(-0.1)
    f = -4 * enc.exponent
    assert FixedPoint(f).decode(pk, sk.decrypt(from_phe_encrypted_number(enc, pk, frac_bits=f))) == -0.1


def test_positive_exponent_rescaled_exactly(keys, phe_keys):
    pk, sk = keys
    phe_pk, phe_sk = phe_keys
    enc = phe_pk.encrypt(3 * 16 ** 5, precision=16 ** 5)
    assert enc.exponent == 5
    assert sk.decrypt_signed(from_phe_encrypted_number(enc, pk)) == 3 * 16 ** 5
    assert sk.decrypt_signed(from_phe_encrypted_number(enc, pk, frac_bits=3)) == 3 * 16 ** 5 * 8


def test_fixed_point_to_phe(keys, phe_keys):
    pk, _ = keys
    _, phe_sk = phe_keys
    fp = FixedPoint(16)
    ct = ENCRYPTION.encrypt(pk, fp.encode(pk, -2.375))
    enc = to_phe_encrypted_number(ct, exponent=phe_exponent_for(fp))
    assert enc.exponent == -4
    assert phe_sk.decrypt(enc) == -2.375
    with pytest.raises(PaillierError, match="multiple of 4"):
        phe_exponent_for(FixedPoint(10))
    with pytest.raises(PaillierError):
        from_phe_encrypted_number(enc, pk, frac_bits=-1)
