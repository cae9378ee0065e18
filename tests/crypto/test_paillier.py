"""Paillier against plaintext arithmetic, backends against each other, bad input refused."""

from __future__ import annotations

import json
import math
import os
import stat

import gmpy2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cryptoffload.crypto import paillier as pl
from cryptoffload.crypto._native import core as native
from cryptoffload.errors import BackendUnavailable, ConfigError

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def keys() -> tuple[pl.PublicKey, pl.PrivateKey]:
    return pl.generate_keypair(1024, insecure_study_size=True)


@pytest.fixture(scope="module")
def other_keys() -> tuple[pl.PublicKey, pl.PrivateKey]:
    return pl.generate_keypair(1024, insecure_study_size=True)


def backends() -> list[str]:
    out = ["gmpy2"]
    if native.native_available():
        out.append("gmp")
    if native.ifma_available():
        out.append("ifma")
    return out


# -- keys ------------------------------------------------------------------------------------

def test_default_key_size_is_2048_bits() -> None:
    assert pl.DEFAULT_KEY_BITS == 2048
    with pytest.raises(ConfigError, match="insecure-study-size"):
        pl.generate_keypair(1024)


def test_key_structure(keys) -> None:
    pk, sk = keys
    assert pk.bits == 1024 and pk.n == sk.p * sk.q
    assert sk.p % 4 == 3 and sk.q % 4 == 3
    assert pk.g == pk.n + 1
    assert pk.exp_bits == 512
    # h_s is an n-th residue: h_s = h^n for h = -x^2, so it encrypts 0
    assert sk.raw_decrypt_reference(pk.hs) == 0
    assert "p=" not in repr(sk) and str(sk.p) not in repr(sk)


def test_bad_key_sizes() -> None:
    for bits in (1023, 0, "2048", True):
        with pytest.raises(ConfigError):
            pl.check_key_bits(bits, insecure_study_size=True)  # type: ignore[arg-type]


# -- correctness against plaintext arithmetic --------------------------------------------------

@SETTINGS
@given(a=st.integers(min_value=-(2**300), max_value=2**300), b=st.integers(min_value=-(2**300), max_value=2**300),
       k=st.integers(min_value=-(2**100), max_value=2**100))
def test_homomorphic_ops_match_plaintext(keys, a: int, b: int, k: int) -> None:
    pk, sk = keys
    ca = pk.encrypt(pl.encode_signed(pk, a))
    cb = pk.encrypt(pl.encode_signed(pk, b))
    assert sk.decrypt_signed(ca) == a
    assert sk.decrypt_signed(ca + cb) == a + b
    assert sk.decrypt_signed(ca - cb) == a - b
    assert sk.decrypt_signed(-ca) == -a
    assert sk.decrypt_signed(ca * k) == a * k
    assert sk.decrypt_signed(k * ca) == a * k
    assert sk.decrypt_signed(ca + k) == a + k
    assert sk.decrypt_signed(k - ca) == k - a
    assert sk.decrypt_signed(ca.rerandomize()) == a


@SETTINGS
@given(m=st.integers(min_value=0))
def test_decrypt_inverts_encrypt_for_every_backend(keys, m: int) -> None:
    pk, sk = keys
    m %= pk.n
    for backend in backends():
        for ct_mode in (True, False):
            c = pk.encrypt(m, backend=backend, constant_time=ct_mode)
            assert sk.decrypt(c) == m
            assert sk.raw_decrypt_reference(c.value) == m


def test_backends_give_identical_ciphertexts_from_the_same_randomness(keys) -> None:
    pk, _ = keys
    import secrets
    ms = [0, 1, pk.n - 1] + [secrets.randbelow(pk.n) for _ in range(21)]
    es = [0, 1, (1 << pk.exp_bits) - 1] + [pk.random_exponent() for _ in range(21)]
    ref = [pk.raw_encrypt(m, a) for m, a in zip(ms, es)]
    for backend in backends():
        for ct_mode in (True, False):
            for window in (None, 3, 7):
                enc = pl.Encryptor(pk, backend, constant_time=ct_mode, window=window)
                assert enc.encrypt_raw(ms, es) == ref, (backend, ct_mode, window)


@pytest.mark.skipif(not native.native_available(), reason="native core not built")
def test_native_decryption_matches_reference_with_and_without_ifma(keys) -> None:
    pk, sk = keys
    cts = pk.encrypt_many(list(range(19)))
    vals = [c.value for c in cts]
    ref = [sk.raw_decrypt_reference(v) for v in vals]
    assert ref == list(range(19))
    assert sk.raw_decrypt_many(vals, use_ifma=False) == ref
    assert sk.raw_decrypt_many(vals, use_ifma=True) == ref


@pytest.mark.skipif(not native.ifma_available(), reason="no AVX512-IFMA on this CPU (or crypto_mb missing)")
def test_ifma_batch_modexp_matches_gmp(keys) -> None:
    pk, _ = keys
    import secrets
    bases = [secrets.randbelow(pk.nsquare) for _ in range(11)]
    exps = [pk.random_exponent() for _ in range(11)]
    want = [int(gmpy2.powmod(b, e, pk.nsquare)) for b, e in zip(bases, exps)]
    assert native.mbx_powm_batch(bases, exps, pk.exp_bits, pk.nsquare) == want
    assert native.powm_batch(bases, exps, pk.nsquare) == want
    assert native.powm_batch(bases, exps, pk.nsquare, secret=True) == want


def test_ifma_backend_refused_cleanly_when_hidden(keys, monkeypatch) -> None:
    pk, _ = keys
    monkeypatch.setenv("COPL_DISABLE_IFMA", "1")
    with pytest.raises(BackendUnavailable, match="IFMA"):
        pl.resolve_backend("ifma")
    assert pl.resolve_backend("auto") in ("gmp", "gmpy2")
    with pytest.raises(ConfigError, match="unknown Paillier backend"):
        pl.resolve_backend("qat")


def test_classic_two_modexp_encryption_decrypts(keys) -> None:
    pk, sk = keys
    c = pl.Ciphertext(pk, pk.raw_encrypt_classic(123456789))
    assert sk.decrypt(c) == 123456789


@pytest.mark.skipif(not native.native_available(), reason="native core not built")
def test_randomness_pool_online_encryption(keys) -> None:
    pk, sk = keys
    with pl.RandomnessPool(pk.encryptor(), capacity=64, batch=16) as pool:
        assert pool.wait_full(timeout=30)
        cts = pool.encrypt_many(list(range(100)))  # 36 more than the pool holds: computed online
        assert pool.misses >= 36 - 64 or pool.misses >= 0
    assert sk.decrypt_many(cts) == list(range(100))
    # without a thread, fill() then take
    pool = pl.RandomnessPool(pk.encryptor(), capacity=8, background=False)
    pool.fill()
    assert len(pool) == 8
    assert sk.decrypt(pool.encrypt(7)) == 7
    assert len(pool) == 7 and pool.misses == 0


def test_window_respects_memory_cap(keys) -> None:
    pk, _ = keys
    if not native.native_available():
        pytest.skip("native core not built")
    enc = pl.Encryptor(pk, "gmp", constant_time=False, max_table_bytes=1 << 20)
    assert enc.table_bytes <= 1 << 20 and enc.window >= 2
    assert enc.table_bytes == pl.table_bytes_estimate(pk, "gmp", enc.window)
    with pytest.raises(ConfigError, match="MiB"):
        pl.Encryptor(pk, "gmp", window=14, max_table_bytes=1 << 20)


# -- encodings ---------------------------------------------------------------------------------

@SETTINGS
@given(x=st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), y=st.floats(min_value=-1e3, max_value=1e3))
def test_fixed_point_sum_and_scalar_product(keys, x: float, y: float) -> None:
    pk, sk = keys
    fp = pl.FixedPoint(40)
    cx = pk.encrypt(fp.encode(pk, x))
    # exact to 2^-frac_bits per encoded value, plus the float rounding of the comparison itself
    assert abs(fp.decode(pk, sk.decrypt(cx)) - x) <= 2.0 ** -40 + 2 * math.ulp(x)
    cy = pk.encrypt(fp.encode(pk, y))
    assert abs(fp.decode(pk, sk.decrypt(cx + cy)) - (x + y)) <= 2.0 ** -39 + 4 * math.ulp(x + y)
    prod = cx * fp.to_int(y)
    assert abs(fp.decode(pk, sk.decrypt(prod), scale_power=2) - x * y) <= 1e-6 * (1 + abs(x * y))


def test_signed_range_and_overflow_detection(keys) -> None:
    pk, sk = keys
    with pytest.raises(pl.PlaintextRangeError, match="too large"):
        pl.encode_signed(pk, pk.max_int + 1)
    with pytest.raises(pl.PlaintextRangeError, match="overflowed"):
        pl.decode_signed(pk, pk.n // 2)
    with pytest.raises(pl.PlaintextRangeError, match="out of range"):
        pk.encrypt(pk.n)
    with pytest.raises(pl.PlaintextRangeError, match="out of range"):
        pk.encrypt(-1)
    with pytest.raises(pl.PlaintextRangeError):
        pk.encrypt(1.5)  # type: ignore[arg-type]
    with pytest.raises(pl.PlaintextRangeError):
        pl.FixedPoint(8).encode(pk, float("nan"))
    with pytest.raises(ConfigError):
        pl.FixedPoint(-1)


# -- serialisation and bad input ---------------------------------------------------------------

def test_ciphertext_round_trip_and_refusals(keys, other_keys) -> None:
    pk, sk = keys
    opk, _ = other_keys
    c = pk.encrypt(42)
    blob = c.to_bytes()
    assert sk.decrypt(pk.ciphertext_from_bytes(blob)) == 42
    with pytest.raises(pl.KeyMismatchError, match="another key|not this key"):
        opk.ciphertext_from_bytes(blob)
    with pytest.raises(pl.CiphertextFormatError, match="truncated"):
        pk.ciphertext_from_bytes(blob[:-1])
    with pytest.raises(pl.CiphertextFormatError, match="bad header"):
        pk.ciphertext_from_bytes(b"XXXX" + blob[4:])
    with pytest.raises(pl.CiphertextFormatError, match="version"):
        pk.ciphertext_from_bytes(blob[:4] + b"\x09" + blob[5:])
    with pytest.raises(pl.CiphertextFormatError, match="bad header"):
        pk.ciphertext_from_bytes(b"")
    zero = blob[:21] + bytes(len(blob) - 21)
    with pytest.raises(pl.CiphertextFormatError, match="unit"):
        pk.ciphertext_from_bytes(zero)
    with pytest.raises(pl.KeyMismatchError):
        _ = c + opk.encrypt(1)
    with pytest.raises(pl.KeyMismatchError):
        sk.decrypt(opk.encrypt(1))
    with pytest.raises(pl.PaillierError, match="plaintext scalar"):
        _ = c * c


def test_key_serialisation_and_file_permissions(keys, tmp_path) -> None:
    pk, sk = keys
    assert pl.key_from_json(pk.to_json()) == pk
    sk2 = pl.load_key(pl.save_key(sk, tmp_path / "sk.json"))
    assert isinstance(sk2, pl.PrivateKey) and sk2.p == sk.p
    assert stat.S_IMODE(os.stat(tmp_path / "sk.json").st_mode) == 0o600
    assert sk2.decrypt(pk.encrypt(9)) == 9
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    d = json.loads(pk.to_json())
    d["n"] = format(pk.n + 2, "x")
    with pytest.raises(pl.CiphertextFormatError, match="fingerprint"):
        pl.key_from_dict(d)
    with pytest.raises(pl.CiphertextFormatError, match="JSON"):
        pl.key_from_json(pk.to_json()[:-5])
    d = sk.to_dict()
    d["version"] = 99
    with pytest.raises(pl.CiphertextFormatError, match="version"):
        pl.key_from_dict(d)
    d = sk.to_dict()
    d["p"] = format(sk.p + 2, "x")
    with pytest.raises(pl.KeyMismatchError):
        pl.key_from_dict(d)
    with pytest.raises(pl.PaillierError, match="cannot read"):
        pl.load_key(tmp_path / "missing.json")


@pytest.mark.skipif(not native.ifma_available(), reason="no AVX512-IFMA on this CPU (or crypto_mb missing)")
def test_mbx_refuses_moduli_it_would_get_wrong() -> None:
    import secrets
    for bits, ok in ((2048, True), (2029, True), (2028, False), (1990, False), (1024, True), (988, False),
                     (3069, True), (3068, False), (4057, True), (4056, False), (5000, False)):
        m = secrets.randbits(bits) | (1 << (bits - 1)) | 1
        assert (native.mbx_kernel_bits(m) is not None) == ok, bits
        if ok:
            bs = [secrets.randbelow(m) for _ in range(3)]
            es = [secrets.randbits(300) for _ in range(3)]
            assert native.mbx_powm_batch(bs, es, 300, m) == [int(gmpy2.powmod(b, e, m)) for b, e in zip(bs, es)]
        else:
            with pytest.raises(ConfigError, match="cannot exponentiate"):
                native.mbx_powm_batch([3], [5], 3, m)
