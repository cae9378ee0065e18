"""Signed and fixed-point encodings: exact within their range, overflow detected."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cryptoffload.crypto import paillier as pl
from cryptoffload.errors import ConfigError

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


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
