"""DJN encryption and ciphertext arithmetic of one public key on every runtime present, against
the textbook formulas (tests/paillier_reference.py, Python's ``pow``) and, where gmpy2 is
installed, against the CPU ``Encryptor``."""

from __future__ import annotations

import importlib.util
import secrets

import pytest

import paillier_reference as ref
from cryptoffload.crypto._native import gpu_runtime as gr
from cryptoffload.crypto.paillier import ENCRYPTION
from cryptoffload.crypto.paillier_gpu import DEFAULT_GPU_WINDOWS, GpuDecryptor, GpuPaillier
from cryptoffload.errors import ConfigError

HAVE_GMPY2 = importlib.util.find_spec("gmpy2") is not None


@pytest.mark.parametrize("bits", [1024, 2048, 3072])
@pytest.mark.parametrize("constant_time", [True, False])
def test_encryption_equals_the_reference(rt: gr.Runtime, bits: int, constant_time: bool) -> None:
    """n = 1024, 2048 and 3072 in both lookup modes (small windows: the table is built per key)."""
    pk, sk = ref.keypair(bits)
    window = {1024: 4, 2048: 3, 3072: 2}[bits] + (0 if constant_time else 2)
    g = GpuPaillier(pk, rt, constant_time=constant_time, window=window)
    msgs = [0, 1, pk.n - 1, pk.max_int, secrets.randbelow(pk.n)]
    exps = [0, 1, (1 << pk.exp_bits) - 1, secrets.randbits(pk.exp_bits), secrets.randbits(pk.exp_bits)]
    got = g.encrypt_raw(msgs, exps)
    assert got == [ref.encrypt(pk, m, a) for m, a in zip(msgs, exps)]
    if HAVE_GMPY2 and bits == 1024:
        assert got == ENCRYPTION.encryptor(pk, "gmpy2").encrypt_raw(msgs, exps)
    assert sk.decrypt_many(g.encrypt_raw(msgs[:2])) == msgs[:2]


def test_default_window_table_and_fresh_randomness(rt: gr.Runtime) -> None:
    pk, sk = ref.keypair(1024)
    g = GpuPaillier(pk, rt)
    assert g.window == DEFAULT_GPU_WINDOWS[True] and g.constant_time
    assert g.table_bytes == g.windows * (1 << g.window) * 64 * 4
    assert str(g.window) in g.describe()
    msgs = [secrets.randbelow(pk.n) for _ in range(5)]
    cts = g.encrypt_raw(msgs)
    assert sk.decrypt_many(cts) == msgs
    assert len(set(cts)) == len(cts)  # fresh randomness per ciphertext
    assert g.randomness(2)[0] != g.randomness(2)[0]


def test_homomorphic_operations(rt: gr.Runtime) -> None:
    pk, sk = ref.keypair(1024)
    g = GpuPaillier(pk, rt, window=4)
    a = [secrets.randbelow(pk.n) for _ in range(4)]
    b = [secrets.randbelow(pk.n) for _ in range(4)]
    ca, cb = g.encrypt_raw(a), g.encrypt_raw(b)
    sums = g.add(ca, cb)
    assert sums == [x * y % pk.nsquare for x, y in zip(ca, cb)]
    assert sk.decrypt_many(sums) == [(x + y) % pk.n for x, y in zip(a, b)]
    ks = [0, 1, pk.n - 1, secrets.randbelow(pk.n)]
    prod = g.scalar_multiply(ca, ks)
    assert prod == [pow(c, k, pk.nsquare) for c, k in zip(ca, ks)]
    assert sk.decrypt_many(prod) == [x * k % pk.n for x, k in zip(a, ks)]
    rows, cols = 5, 3
    plain = [secrets.randbelow(1 << 64) for _ in range(rows * cols)]
    agg = g.column_products(g.encrypt_raw(plain), rows, cols)
    assert sk.decrypt_many(agg) == [sum(plain[c::cols]) % pk.n for c in range(cols)]
    with GpuDecryptor(sk, rt) as dec:
        assert dec.decrypt(agg) == sk.decrypt_many(agg)


def test_encryption_input_checks(rt: gr.Runtime) -> None:
    pk, _ = ref.keypair(1024)
    g = GpuPaillier(pk, rt, window=2)
    with pytest.raises(ConfigError, match="plaintexts"):
        g.encrypt_raw([pk.n])
    with pytest.raises(ConfigError, match="one exponent per message"):
        g.encrypt_raw([1, 2], [3])
    with pytest.raises(ConfigError, match="exponents"):
        g.encrypt_raw([1], [1 << pk.exp_bits])
    with pytest.raises(ConfigError, match="scalars"):
        g.scalar_multiply([1], [pk.n])
    with pytest.raises(ConfigError, match="window"):
        GpuPaillier(pk, rt, window=17)
    with pytest.raises(ConfigError, match="MiB"):
        GpuPaillier(pk, rt, window=12, max_table_bytes=1 << 20)
    assert g.encrypt_raw([]) == []
