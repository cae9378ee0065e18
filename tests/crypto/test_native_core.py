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
