"""The reference implementations the benchmarks compare against: phe's raw encryption and
decryption, and the IPCL-style IFMA encryption, each checked against our own keys."""

from __future__ import annotations

import secrets

import pytest

from cryptoffload.crypto import baselines
from cryptoffload.crypto._native import core as native
from cryptoffload.crypto.paillier import PrivateKey, PublicKey, generate_keypair


@pytest.fixture(scope="module")
def keypair() -> tuple[PublicKey, PrivateKey]:
    return generate_keypair(1024, insecure_study_size=True)


def test_phe_encrypts_and_decrypts_under_the_same_key(keypair: tuple[PublicKey, PrivateKey]) -> None:
    pk, sk = keypair
    ppk, psk = baselines.phe_keys(pk, sk)
    assert ppk.n == pk.n
    ms = [0, 1, pk.n - 1] + [secrets.randbelow(pk.n) for _ in range(5)]
    theirs = baselines.phe_encrypt_many(ppk, ms)
    assert sk.raw_decrypt_many(theirs) == ms                     # phe's ciphertexts, our decryption
    ours = [pk.raw_encrypt(m) for m in ms]
    assert baselines.phe_decrypt_many(psk, ours) == ms           # ours, phe's decryption
    assert len(set(theirs)) == len(ms)                           # fresh randomness per ciphertext


@pytest.mark.skipif(not native.ifma_available(), reason="no AVX512-IFMA here")
def test_ipcl_style_encryption_decrypts(keypair: tuple[PublicKey, PrivateKey]) -> None:
    pk, sk = keypair
    ms = [secrets.randbelow(pk.n) for _ in range(11)]            # one full lane group and a partial one
    cts = baselines.ipcl_style_encrypt_many(pk, ms)
    assert sk.raw_decrypt_many(cts) == ms and all(0 < c < pk.nsquare for c in cts)
    assert baselines.ipcl_style_encrypt_many(pk, ms[:1]) != cts[:1]
