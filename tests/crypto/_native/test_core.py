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
