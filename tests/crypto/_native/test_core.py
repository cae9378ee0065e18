"""The native core's batch helpers against plain Python arithmetic."""

from __future__ import annotations

import secrets
from functools import reduce

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoffload.crypto._native import core as native
from cryptoffload.errors import ConfigError

pytestmark = pytest.mark.skipif(not native.native_available(), reason="native core not built")


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(1, 9), cols=st.integers(1, 4), bits=st.sampled_from([64, 511, 1024, 2047, 2048, 4096]))
def test_column_products_match_python(rows: int, cols: int, bits: int) -> None:
    m = secrets.randbits(bits) | (1 << (bits - 1)) | 1
    vals = [[secrets.randbelow(m) for _ in range(cols)] for _ in range(rows)]
    words = native.ints_to_words([v for row in vals for v in row], m)
    got = native.column_products(words, rows, cols, m)
    want = [reduce(lambda a, b: a * b % m, (vals[r][c] for r in range(rows)), 1) % m for c in range(cols)]
    assert got == want


def test_column_products_refuses_bad_shapes() -> None:
    m = (1 << 127) - 1
    words = native.ints_to_words([3, 5], m)
    with pytest.raises(ConfigError, match="expected"):
        native.column_products(words, 3, 1, m)
    with pytest.raises(ConfigError, match="odd"):
        native.column_products(native.ints_to_words([3], m + 1), 1, 1, m + 1)
    with pytest.raises(ConfigError):
        native.column_products(b"", 0, 1, m)


@pytest.mark.skipif(not native.ifma_available(), reason="no AVX512-IFMA on this CPU (or crypto_mb missing)")
def test_ifma_batch_modexp_matches_gmp() -> None:
    m = secrets.randbits(2048) | (3 << 2046) | 1
    bases = [secrets.randbelow(m) for _ in range(11)]
    exps = [secrets.randbits(1024) for _ in range(11)]
    want = [pow(b, e, m) for b, e in zip(bases, exps)]
    assert native.mbx_powm_batch(bases, exps, 1024, m) == want
    assert native.powm_batch(bases, exps, m) == want
    assert native.powm_batch(bases, exps, m, secret=True) == want


@pytest.mark.skipif(not native.ifma_available(), reason="no AVX512-IFMA on this CPU (or crypto_mb missing)")
def test_mbx_refuses_moduli_it_would_get_wrong() -> None:
    for bits, ok in ((2048, True), (2029, True), (2028, False), (1990, False), (1024, True), (988, False),
                     (3069, True), (3068, False), (4057, True), (4056, False), (5000, False)):
        m = secrets.randbits(bits) | (1 << (bits - 1)) | 1
        assert (native.mbx_kernel_bits(m) is not None) == ok, bits
        if ok:
            bs = [secrets.randbelow(m) for _ in range(3)]
            es = [secrets.randbits(300) for _ in range(3)]
            assert native.mbx_powm_batch(bs, es, 300, m) == [pow(b, e, m) for b, e in zip(bs, es)]
        else:
            with pytest.raises(ConfigError, match="cannot exponentiate"):
                native.mbx_powm_batch([3], [5], 3, m)


def test_ifma_fixed_base_limit(monkeypatch) -> None:
    """The kernel table's widest product (79 digits of 52 bits, almost-Montgomery needs two
    spare bits) bounds the fixed-base modulus: n^2 of a 2,053-bit key fits, wider does not."""
    if native.ifma_available():
        assert native.ifma_fixed_base_fits(4096) and native.ifma_fixed_base_fits(79 * 52 - 2)
        assert not native.ifma_fixed_base_fits(79 * 52 - 1) and not native.ifma_fixed_base_fits(6144)
    monkeypatch.setenv("COPL_DISABLE_IFMA", "1")
    assert not native.ifma_fixed_base_fits(2048)


def _multi_pow_reference(bases: list[int], row: list[int], m: int) -> int:
    return reduce(lambda a, b: a * b % m, (pow(b, e, m) for b, e in zip(bases, row)), 1) % m


@settings(max_examples=40, deadline=None)
@given(k=st.integers(1, 5), rows=st.integers(1, 4), exp_bits=st.integers(1, 600),
       bits=st.sampled_from([512, 1000, 1024, 2048, 4096]), data=st.data())
def test_multi_powm_matches_pow(k: int, rows: int, exp_bits: int, bits: int, data) -> None:
    """The constant-time multi-exponentiation (shared tables and squarings) against Python's
    pow, on both kernel sets where they run, with edge exponents (0, all ones) and bases
    (0, 1, m - 1)."""
    m = secrets.randbits(bits) | (1 << (bits - 1)) | 1
    edge_bases = [0, 1, m - 1]
    bases = [data.draw(st.sampled_from(edge_bases)) if data.draw(st.booleans()) else secrets.randbelow(m)
             for _ in range(k)]
    top = (1 << exp_bits) - 1
    exps = [[data.draw(st.sampled_from([0, top, secrets.randbits(exp_bits)])) for _ in range(k)] for _ in range(rows)]
    want = [_multi_pow_reference(bases, row, m) for row in exps]
    backends = ["gmp"] + (["adx"] if native.adx_fits(m.bit_length()) else [])
    for backend in backends:
        assert native.multi_powm(bases, exps, m, exp_bits, backend) == want, backend
    assert native.multi_powm(bases, exps, m, exp_bits) == want


def test_multi_powm_refuses_bad_input() -> None:
    m = (1 << 1024) - 105   # odd
    with pytest.raises(ConfigError, match="one exponent per base"):
        native.multi_powm([2, 3], [[1]], m, 8)
    with pytest.raises(ConfigError, match="odd modulus"):
        native.multi_powm([2], [[1]], m + 1, 8)
    with pytest.raises(ConfigError, match=r"\[0, 2\^8\)"):
        native.multi_powm([2], [[256]], m, 8)
    assert native.multi_powm([2], [], m, 8) == []


@pytest.mark.skipif(not native.adx_available(), reason="no BMI2 + ADX + AVX2 here")
def test_adx_fixed_base_matches_gmp_for_every_window() -> None:
    """The ADX tables (MULX/ADX products, AVX2 scan, window-major lanes) give GMP's ciphertexts
    for windows 1..9 and batches that do and do not fill the 8 lanes."""
    n = secrets.randbits(512) | (1 << 511) | 1
    m = n * n
    base = secrets.randbelow(m)
    msgs = [secrets.randbelow(n) for _ in range(11)]
    exps = [secrets.randbits(256) for _ in msgs]
    want = [(1 + x * n) * pow(base, a, m) % m for x, a in zip(msgs, exps)]
    for w in range(1, 10):
        for ct in (True, False):
            table = native.FixedBaseTable(base, m, n, 256, w, ct, native.BACKEND_ADX)
            assert table.encrypt(msgs, exps) == want, (w, ct)
            assert table.encrypt(msgs[:3], exps[:3]) == want[:3]


def test_cpu_path_and_signature_are_reported() -> None:
    assert native.cpu_path() in ("ifma", "adx", "gmp")
    assert native.cpu_signature().count("-") == 3


def _edge_operands(m: int, words: int) -> list[int]:
    """Operands where carries run the whole length: zero, one, m - 1, all-ones words below the
    top one, and the largest value of every word count that stays below m."""
    ones = (1 << (64 * (words - 1))) - 1
    return [0, 1, m - 1, m - 2, ones, ones % m, (m - 1) >> 1, 1 << (64 * words - 65)]


def _moduli(words: int, data) -> list[int]:
    """A random odd modulus of exactly ``words`` words, and the extremes: all-ones words
    (2^(64 words) - 1) and the smallest (2^(64 words - 1) + 1)."""
    top = 64 * words
    return [secrets.randbits(top) | (1 << (top - 1)) | 1, (1 << top) - 1, (1 << (top - 1)) + 1][:data]


@settings(max_examples=60, deadline=None)
@given(words=st.sampled_from([8, 16, 24, 32, 48, 64, 96]), which=st.integers(1, 3), data=st.data())
def test_montgomery_kernels_match_python(words: int, which: int, data) -> None:
    """Every Montgomery product and square (GMP, MULX/ADX, four-lane AVX2) against Python's
    integers: a b / R mod m, over random and edge operands (0, 1, m - 1, all-ones words) and
    moduli (random, all-ones words, 2^k + 1), at the sizes the core uses (p^2 and n^2 of 512- to
    3072-bit keys)."""
    for m in _moduli(words, which):
        pool = _edge_operands(m, words) + [secrets.randbelow(m) for _ in range(4)]
        for name, (lanes, _) in native.MONTGOMERY_KERNELS.items():
            if not name.startswith("gmp") and not native.adx_fits(m.bit_length()) or \
                    name.startswith("avx2") and words > 87:   # 28-bit digits: moduli up to 5,598 bits
                continue
            a = [data.draw(st.sampled_from(pool)) for _ in range(lanes)]
            b = [data.draw(st.sampled_from(pool)) for _ in range(lanes)]
            got, rbits = native.montgomery_kernel(name, a, b, m)
            rinv = pow(1 << rbits, -1, m)
            want = [(x * x if name.endswith("sqr") else x * y) * rinv % m for x, y in zip(a, b)]
            assert got == want, (name, words)


@pytest.mark.skipif(not native.adx_available(), reason="no BMI2 + ADX + AVX2 here")
def test_squares_of_every_edge_operand() -> None:
    """The squares alone, every edge operand in every lane position, at the two sizes CRT
    decryption runs (p^2 of 1024- and 2048-bit keys)."""
    for words in (16, 32):
        for m in ((1 << (64 * words)) - 1, secrets.randbits(64 * words) | (1 << (64 * words - 1)) | 1):
            pool = _edge_operands(m, words)
            for x in pool:
                rinv = pow(1 << 64 * words, -1, m)
                assert native.montgomery_kernel("adx-sqr", [x], [0], m)[0] == [x * x * rinv % m]
                assert native.montgomery_kernel("gmp-sqr", [x], [0], m)[0] == [x * x * rinv % m]
            for i in range(0, len(pool), 4):
                lanes = (pool[i:i + 4] + pool[:4])[:4]
                got, rbits = native.montgomery_kernel("avx2-sqr", lanes, [0] * 4, m)
                assert got == [x * x * pow(1 << rbits, -1, m) % m for x in lanes]


def test_montgomery_kernel_refuses_bad_arguments() -> None:
    with pytest.raises(ConfigError, match="4 value"):
        native.montgomery_kernel("avx2-mul", [1], [1], (1 << 1024) - 1)
    with pytest.raises(ConfigError, match="refused"):
        native.montgomery_kernel("gmp-mul", [1], [1], 1 << 1024)   # even
