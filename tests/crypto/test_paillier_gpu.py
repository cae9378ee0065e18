"""GPU Paillier against gmpy2 and the CPU key, on every runtime present: the CPU twin here,
and also CUDA where a GPU is (the same tests then check the GPU itself)."""

from __future__ import annotations

import secrets
from functools import reduce

import gmpy2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoffload.crypto import paillier as pl
from cryptoffload.crypto import paillier_gpu as G
from cryptoffload.crypto._native import gpu_runtime as gr
from cryptoffload.crypto._native.gpu_kernels import WIDTHS
from cryptoffload.errors import ConfigError

DEVICES = [d for d, why in (("cpu-twin", gr.twin_reason()), ("cuda", gr.cuda_reason())) if why is None]
pytestmark = pytest.mark.skipif(not DEVICES, reason="neither the CPU twin nor a CUDA GPU is available")


@pytest.fixture(scope="module", params=DEVICES)
def rt(request: pytest.FixtureRequest) -> gr.Runtime:
    return gr.get_runtime(request.param)


@pytest.fixture(scope="module")
def keys() -> dict[int, tuple[pl.PublicKey, pl.PrivateKey]]:
    return {bits: pl.generate_keypair(bits, insecure_study_size=True) for bits in (1024, 2048)}


@pytest.fixture(scope="module")
def key3072() -> tuple[pl.PublicKey, pl.PrivateKey]:
    return pl.generate_keypair(3072)


def _extreme_moduli() -> list[int]:
    """Per width: the smallest modulus that needs it, one with all-ones limbs, a random one."""
    out = []
    prev = 0
    for w in WIDTHS:
        out += [(1 << (32 * prev)) + 1 if prev else 3, (1 << (32 * w)) - 1, secrets.randbits(32 * w) | 1 | (1 << (32 * w - 1))]
        prev = w
    return out


def _edge_values(m: int) -> list[int]:
    w = gr.width_for_bits(m.bit_length())
    cands = [0, 1, 2, m - 1, m - 2, (1 << 32) - 1, (1 << (32 * (w - 1))) - 1, m // 2, secrets.randbelow(m)]
    return [v % m for v in cands]


# -- generic arithmetic ----------------------------------------------------------------------


@pytest.mark.parametrize("m", _extreme_moduli(), ids=lambda m: f"{m.bit_length()}b")
def test_mulmod_and_powm_edges_at_every_width(rt: gr.Runtime, m: int) -> None:
    mod = G.Modulus(rt, m)
    vals = _edge_values(m)
    a = [x for x in vals for _ in vals]
    b = [y for _ in vals for y in vals]
    assert mod.mulmod(a, b) == [x * y % m for x, y in zip(a, b)]
    # one batch runs at its longest exponent's length: a full-size exponent only where cheap
    exps = [0, 1, 2, (1 << 64) - 1, secrets.randbits(96)] + ([m - 1] if m.bit_length() <= 2048 else [])
    bases = [vals[i % len(vals)] for i in range(len(exps))]
    assert mod.powm(bases, exps) == [int(gmpy2.powmod(x, e, m)) for x, e in zip(bases, exps)]


@settings(max_examples=25, deadline=None)
@given(bits=st.sampled_from([64, 511, 512, 513, 1024, 1536, 2047, 2048, 3072, 4096, 6144]),
       rows=st.integers(1, 70), cols=st.integers(1, 3), data=st.data())
def test_column_products_match_python(bits: int, rows: int, cols: int, data: st.DataObject) -> None:
    rt = gr.get_runtime(DEVICES[0])
    m = data.draw(st.integers(1 << (bits - 1), (1 << bits) - 1).map(lambda x: x | 1), label="m")
    vals = data.draw(st.lists(st.integers(0, m - 1), min_size=rows * cols, max_size=rows * cols), label="vals")
    want = [reduce(lambda x, y: x * y % m, vals[c::cols], 1) for c in range(cols)]
    assert G.Modulus(rt, m).column_products(vals, rows, cols) == want


@settings(max_examples=25, deadline=None)
@given(bits=st.sampled_from([64, 1024, 2048, 3000, 6144]), data=st.data())
def test_powm_matches_gmpy2(bits: int, data: st.DataObject) -> None:
    rt = gr.get_runtime(DEVICES[0])
    m = data.draw(st.integers(3, (1 << bits) - 1).map(lambda x: x | 1), label="m")
    bases = data.draw(st.lists(st.integers(0, 1 << (bits + 8)), min_size=1, max_size=4), label="bases")
    exps = data.draw(st.lists(st.integers(0, 1 << 300), min_size=len(bases), max_size=len(bases)), label="exps")
    assert G.Modulus(rt, m).powm(bases, exps) == [int(gmpy2.powmod(b, e, m)) for b, e in zip(bases, exps)]


def test_bad_moduli_and_values_are_refused(rt: gr.Runtime) -> None:
    with pytest.raises(ConfigError, match="odd"):
        G.Modulus(rt, 1 << 100)
    with pytest.raises(ConfigError, match="largest width"):
        G.Modulus(rt, (1 << 6200) + 1)
    mod = G.Modulus(rt, 1009)
    with pytest.raises(ConfigError, match="factors"):
        mod.mulmod([1009], [1])
    with pytest.raises(ConfigError, match="non-negative"):
        mod.powm([2], [-1])
    with pytest.raises(ConfigError, match="matrix"):
        mod.column_products([1, 2, 3], 2, 2)
    assert mod.mulmod([], []) == [] and mod.powm([], []) == []


def test_limb_round_trip_and_random_exponents() -> None:
    vals = [0, 1, (1 << 64) - 1, secrets.randbits(2048)]
    arr = G.to_limbs(vals, 64)
    assert arr.shape == (64, 4) and arr.dtype == np.uint32
    assert G.from_limbs(arr) == vals
    with pytest.raises(ConfigError, match="fit"):
        G.to_limbs([1 << 64], 2)
    with pytest.raises(ConfigError, match="fit"):
        G.to_limbs([-1], 2)
    e = G.random_exponents(500, 45)
    assert e.shape == (2, 500)
    ints = G.from_limbs(e)
    assert max(ints) < 1 << 45 and max(ints) >= 1 << 40 and len(set(ints)) == 500


# -- Paillier ------------------------------------------------------------------------------


@pytest.mark.parametrize("bits", [1024, 2048])
@pytest.mark.parametrize("constant_time", [True, False])
def test_encryption_equals_the_reference(rt: gr.Runtime, keys, bits: int, constant_time: bool) -> None:
    pk, sk = keys[bits]
    g = G.GpuPaillier(pk, rt, constant_time=constant_time, window=4 if constant_time else 7)
    msgs = [0, 1, pk.n - 1, pk.max_int] + [secrets.randbelow(pk.n) for _ in range(4)]
    exps = [0, 1, (1 << pk.exp_bits) - 1] + [secrets.randbits(pk.exp_bits) for _ in range(5)]
    got = g.encrypt_raw(msgs, exps)
    assert got == [pk.raw_encrypt(m, a) for m, a in zip(msgs, exps)]
    assert got == pk.encryptor("gmpy2").encrypt_raw(msgs, exps)
    assert sk.raw_decrypt_many(g.encrypt_raw(msgs)) == msgs


def test_default_window_table_and_decryption(rt: gr.Runtime, keys) -> None:
    pk, sk = keys[1024]
    g = G.GpuPaillier(pk, rt)
    assert g.window == G.DEFAULT_GPU_WINDOWS[True] and g.constant_time
    assert g.table_bytes == g.windows * (1 << g.window) * 64 * 4
    assert str(g.window) in g.describe()
    msgs = [secrets.randbelow(pk.n) for _ in range(5)]
    cts = g.encrypt_raw(msgs)
    dec = G.GpuDecryptor(sk, rt)
    assert dec.decrypt(cts) == msgs == sk.raw_decrypt_many(cts)
    assert "p=" not in repr(dec) and str(sk.p) not in repr(dec)
    assert len(set(cts)) == len(cts)  # fresh randomness per ciphertext
    assert g.randomness(2)[0] != g.randomness(2)[0]


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_decryption_matches_the_cpu_key(data: st.DataObject) -> None:
    rt = gr.get_runtime(DEVICES[0])
    pk, sk = _shared_key()
    cts = data.draw(st.lists(st.integers(1, pk.nsquare - 1), min_size=1, max_size=4), label="cts")
    cts = [c for c in cts if gmpy2.gcd(c, pk.n) == 1] or [1]
    assert _decryptor(rt).decrypt(cts) == [sk.raw_decrypt_reference(c) for c in cts]


_CACHE: dict[str, object] = {}


def _shared_key() -> tuple[pl.PublicKey, pl.PrivateKey]:
    if "key" not in _CACHE:
        _CACHE["key"] = pl.generate_keypair(1024, insecure_study_size=True)
    return _CACHE["key"]  # type: ignore[return-value]


def _decryptor(rt: gr.Runtime) -> G.GpuDecryptor:
    k = f"dec-{rt.device}"
    if k not in _CACHE:
        _CACHE[k] = G.GpuDecryptor(_shared_key()[1], rt)
    return _CACHE[k]  # type: ignore[return-value]


def test_3072_bit_keys(rt: gr.Runtime, key3072) -> None:
    pk, sk = key3072
    g = G.GpuPaillier(pk, rt, window=3)
    msgs = [pk.n - 1, secrets.randbelow(pk.n)]
    exps = [(1 << pk.exp_bits) - 1, secrets.randbits(pk.exp_bits)]
    cts = g.encrypt_raw(msgs, exps)
    assert cts == [pk.raw_encrypt(m, a) for m, a in zip(msgs, exps)]
    assert G.GpuDecryptor(sk, rt).decrypt(cts) == msgs


def test_homomorphic_operations(rt: gr.Runtime, keys) -> None:
    pk, sk = keys[1024]
    g = G.GpuPaillier(pk, rt, window=4)
    a = [secrets.randbelow(pk.n) for _ in range(4)]
    b = [secrets.randbelow(pk.n) for _ in range(4)]
    ca, cb = g.encrypt_raw(a), g.encrypt_raw(b)
    sums = g.add(ca, cb)
    assert sums == [x * y % pk.nsquare for x, y in zip(ca, cb)]
    assert sk.raw_decrypt_many(sums) == [(x + y) % pk.n for x, y in zip(a, b)]
    ks = [0, 1, pk.n - 1, secrets.randbelow(pk.n)]
    prod = g.scalar_multiply(ca, ks)
    assert prod == [pow(c, k, pk.nsquare) for c, k in zip(ca, ks)]
    assert sk.raw_decrypt_many(prod) == [x * k % pk.n for x, k in zip(a, ks)]
    rows, cols = 5, 3
    plain = [secrets.randbelow(1 << 64) for _ in range(rows * cols)]
    agg = g.column_products(g.encrypt_raw(plain), rows, cols)
    assert sk.raw_decrypt_many(agg) == [sum(plain[c::cols]) % pk.n for c in range(cols)]


def test_encryption_input_checks(rt: gr.Runtime, keys) -> None:
    pk, _ = keys[1024]
    g = G.GpuPaillier(pk, rt, window=2)
    with pytest.raises(ConfigError, match="plaintexts"):
        g.encrypt_raw([pk.n])
    with pytest.raises(ConfigError, match="one exponent per message"):
        g.encrypt_raw([1, 2], [3])
    with pytest.raises(ConfigError, match="exponents"):
        g.encrypt_raw([1], [1 << pk.exp_bits])
    with pytest.raises(ConfigError, match="scalars"):
        g.scalar_multiply([1], [pk.n])
    with pytest.raises(ConfigError, match="window"):
        G.GpuPaillier(pk, rt, window=17)
    with pytest.raises(ConfigError, match="MiB"):
        G.GpuPaillier(pk, rt, window=12, max_table_bytes=1 << 20)
    assert g.encrypt_raw([]) == []


def test_private_key_blob_needs_ordered_factors() -> None:
    with pytest.raises(ConfigError, match="p < q"):
        G.private_key_blob(11, 7)
