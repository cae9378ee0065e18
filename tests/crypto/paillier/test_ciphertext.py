"""Homomorphic arithmetic against plaintext arithmetic; mixing keys refused."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cryptoffload.crypto import paillier as pl
from cryptoffload.crypto.paillier import ENCRYPTION

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(a=st.integers(min_value=-(2**300), max_value=2**300), b=st.integers(min_value=-(2**300), max_value=2**300),
       k=st.integers(min_value=-(2**100), max_value=2**100))
def test_homomorphic_ops_match_plaintext(keys, a: int, b: int, k: int) -> None:
    pk, sk = keys
    ca = ENCRYPTION.encrypt(pk, pl.encode_signed(pk, a))
    cb = ENCRYPTION.encrypt(pk, pl.encode_signed(pk, b))
    assert sk.decrypt_signed(ca) == a
    assert sk.decrypt_signed(ca + cb) == a + b
    assert sk.decrypt_signed(ca - cb) == a - b
    assert sk.decrypt_signed(-ca) == -a
    assert sk.decrypt_signed(ca * k) == a * k
    assert sk.decrypt_signed(k * ca) == a * k
    assert sk.decrypt_signed(ca + k) == a + k
    assert sk.decrypt_signed(k - ca) == k - a
    assert sk.decrypt_signed(ENCRYPTION.rerandomize(pk, [ca])[0]) == a


def test_mixing_keys_and_ciphertext_products_refused(keys, other_keys) -> None:
    pk, sk = keys
    opk, _ = other_keys
    c = ENCRYPTION.encrypt(pk, 42)
    with pytest.raises(pl.KeyMismatchError):
        _ = c + ENCRYPTION.encrypt(opk, 1)
    with pytest.raises(pl.KeyMismatchError):
        sk.decrypt(ENCRYPTION.encrypt(opk, 1))
    with pytest.raises(pl.PaillierError, match="plaintext scalar"):
        _ = c * c
    with pytest.raises(pl.KeyMismatchError):
        pl.ciphertexts_to_bytes([c, ENCRYPTION.encrypt(opk, 1)])
