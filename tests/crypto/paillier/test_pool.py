"""Offline/online encryption: pooled randomness gives ciphertexts that decrypt."""

from __future__ import annotations

import pytest

from cryptoffload.crypto import paillier as pl
from cryptoffload.crypto._native import core as native
from cryptoffload.crypto.paillier import ENCRYPTION


@pytest.mark.skipif(not native.native_available(), reason="native core not built")
def test_randomness_pool_online_encryption(keys) -> None:
    pk, sk = keys
    with pl.RandomnessPool(ENCRYPTION.encryptor(pk), capacity=64, batch=16) as pool:
        assert pool.wait_full(timeout=30)
        cts = pool.encrypt_many(list(range(100)))  # 36 more than the pool holds: computed online
        assert pool.misses == 36
    assert sk.decrypt_many(cts) == list(range(100))
    # without a thread, fill() then take
    pool = pl.RandomnessPool(ENCRYPTION.encryptor(pk), capacity=8, background=False)
    pool.fill()
    assert len(pool) == 8
    assert sk.decrypt(pool.encrypt(7)) == 7
    assert len(pool) == 7 and pool.misses == 0
