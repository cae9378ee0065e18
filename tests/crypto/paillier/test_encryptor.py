"""Backends agree with the gmpy2 reference; the backend chooser respects what each can do, so
every key size from 2048 to 4096 bits works with the default options, with and without
AVX512-IFMA (the attack: a 3072-bit key failed to encrypt with ``auto`` on an IFMA CPU)."""

from __future__ import annotations

import secrets

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cryptoffload.crypto import paillier as pl
from cryptoffload.crypto._native import core as native
from cryptoffload.crypto.paillier import ENCRYPTION
from cryptoffload.errors import BackendUnavailable, ConfigError

from .conftest import available_backends

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(m=st.integers(min_value=0))
def test_decrypt_inverts_encrypt_for_every_backend(keys, m: int) -> None:
    pk, sk = keys
    m %= pk.n
    for backend in available_backends():
        for ct_mode in (True, False):
            c = ENCRYPTION.encrypt(pk, m, backend=backend, constant_time=ct_mode)
            assert sk.decrypt(c) == m
            assert sk.raw_decrypt_reference(c.value) == m


def test_backends_give_identical_ciphertexts_from_the_same_randomness(keys) -> None:
    pk, _ = keys
    ms = [0, 1, pk.n - 1] + [secrets.randbelow(pk.n) for _ in range(21)]
    es = [0, 1, (1 << pk.exp_bits) - 1] + [pk.random_exponent() for _ in range(21)]
    ref = [pk.raw_encrypt(m, a) for m, a in zip(ms, es)]
    for backend in available_backends():
        for ct_mode in (True, False):
            for window in (None, 3, 7):
                enc = pl.Encryptor(pk, backend, constant_time=ct_mode, window=window)
                assert enc.encrypt_raw(ms, es) == ref, (backend, ct_mode, window)


def test_ciphertexts_as_words_are_the_same_ciphertexts_and_decrypt(keys) -> None:
    """encrypt_to_words (the ridge bulk path) writes what encrypt_raw returns, for every backend;
    with fresh randomness each word-packed ciphertext decrypts to its message."""
    pk, sk = keys
    ms = [0, 1, pk.n - 1] + [secrets.randbelow(pk.n) for _ in range(9)]
    es = [pk.random_exponent() for _ in ms]
    ref = native.ints_to_words([pk.raw_encrypt(m, a) for m, a in zip(ms, es)], pk.nsquare)
    width = len(ref) // len(ms)
    for backend in available_backends():
        enc = pl.Encryptor(pk, backend)
        assert enc.encrypt_to_words(ms, es) == ref, backend
        words = enc.encrypt_to_words(ms)
        cts = [int.from_bytes(words[i * width:(i + 1) * width], "little") for i in range(len(ms))]
        assert [sk.raw_decrypt_reference(c) for c in cts] == ms, backend
    with pytest.raises(ConfigError, match="one exponent per message"):
        pl.Encryptor(pk, "gmpy2").encrypt_to_words(ms, es[:1])


def test_ifma_backend_refused_cleanly_when_hidden(monkeypatch) -> None:
    monkeypatch.setenv("COPL_DISABLE_IFMA", "1")
    with pytest.raises(BackendUnavailable, match="IFMA"):
        pl.resolve_backend("ifma")
    assert pl.resolve_backend("auto") in ("adx", "gmp", "gmpy2")
    with pytest.raises(ConfigError, match="unknown Paillier backend"):
        pl.resolve_backend("qat")


def test_adx_backend_chosen_forced_and_hidden(monkeypatch) -> None:
    """With IFMA hidden, auto runs the MULX/ADX kernels where the CPU has them (how the
    benchmarks force the AVX2 + ADX path on an IFMA machine); hidden too, the portable GMP path;
    an explicit 'adx' that cannot run is refused, naming what to use."""
    monkeypatch.setenv("COPL_DISABLE_IFMA", "1")
    if native.adx_available():
        assert pl.resolve_backend("auto", 2048) == "adx" and pl.resolve_backend("adx", 4096) == "adx"
        with pytest.raises(ConfigError, match="multiple of 512 bits.*'auto' or 'gmp'"):
            pl.resolve_backend("adx", 1280)   # a 640-bit key: n^2 of 20 words
        assert pl.resolve_backend("auto", 1280) == "gmp"
    monkeypatch.setenv("COPL_DISABLE_ADX", "1")
    assert pl.resolve_backend("auto", 2048) in ("gmp", "gmpy2")
    with pytest.raises(BackendUnavailable, match="BMI2, ADX and AVX2.*'gmp' or 'auto'"):
        pl.resolve_backend("adx")


def test_classic_two_modexp_encryption_decrypts(keys) -> None:
    pk, sk = keys
    c = pl.Ciphertext(pk, pk.raw_encrypt_classic(123456789))
    assert sk.decrypt(c) == 123456789


def test_window_respects_memory_cap(keys) -> None:
    pk, _ = keys
    if not native.native_available():
        pytest.skip("native core not built")
    enc = pl.Encryptor(pk, "gmp", constant_time=False, max_table_bytes=1 << 20)
    assert enc.table_bytes <= 1 << 20 and enc.window >= 2
    assert enc.table_bytes == pl.table_bytes_estimate(pk, "gmp", enc.window)
    with pytest.raises(ConfigError, match="MiB"):
        pl.Encryptor(pk, "gmp", window=14, max_table_bytes=1 << 20)


# -- key sizes beyond the IFMA kernel ---------------------------------------------------------

@pytest.fixture(scope="module", params=[3072, 4096])
def big_keys(request) -> tuple[pl.PublicKey, pl.PrivateKey]:
    return pl.generate_keypair(request.param)


@pytest.mark.parametrize("ifma", [True, False], ids=["ifma-visible", "ifma-hidden"])
def test_large_keys_work_with_default_options(big_keys, ifma: bool, monkeypatch) -> None:
    pk, sk = big_keys
    if not ifma:
        monkeypatch.setenv("COPL_DISABLE_IFMA", "1")
    elif not native.ifma_available():
        pytest.skip("no AVX512-IFMA on this CPU (or crypto_mb missing)")
    values = [0, 1, -1, pk.max_int, -pk.max_int, secrets.randbits(pk.bits - 3)]
    cts = ENCRYPTION.encrypt_many(pk, [pl.encode_signed(pk, v) for v in values])
    assert ENCRYPTION.encryptor(pk).backend in ("adx", "gmp", "gmpy2")  # n^2 is wider than every IFMA kernel
    for use_ifma in (True, False):
        assert [pl.decode_signed(pk, m) for m in sk.decrypt_many(cts, use_ifma=use_ifma)] == values
    assert sk.raw_decrypt_reference(cts[5].value) == values[5]
    # the same randomness gives the reference's ciphertexts
    es = [pk.random_exponent() for _ in range(3)]
    assert ENCRYPTION.encryptor(pk).encrypt_raw([5, 6, 7], es) == [pk.raw_encrypt(m, a) for m, a in zip([5, 6, 7], es)]


@pytest.mark.skipif(not native.ifma_available(), reason="no AVX512-IFMA on this CPU (or crypto_mb missing)")
def test_explicit_ifma_for_a_key_it_cannot_hold_is_a_clean_error(big_keys) -> None:
    pk, _ = big_keys
    with pytest.raises(ConfigError, match="backend 'ifma' handles keys up to 2,053 bits.*use 'auto' or 'gmp'"):
        ENCRYPTION.encrypt(pk, 1, backend="ifma")
    # and 2048-bit keys still get IFMA under auto
    assert pl.resolve_backend("auto", 4096) == "ifma"
