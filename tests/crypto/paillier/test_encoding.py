"""Signed and fixed-point encodings: exact within their range, overflow detected."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cryptoffload.crypto import paillier as pl
from cryptoffload.crypto.paillier import ENCRYPTION
from cryptoffload.errors import ConfigError

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(x=st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), y=st.floats(min_value=-1e3, max_value=1e3))
def test_fixed_point_sum_and_scalar_product(keys, x: float, y: float) -> None:
    pk, sk = keys
    fp = pl.FixedPoint(40)
    cx = ENCRYPTION.encrypt(pk, fp.encode(pk, x))
    # exact to 2^-frac_bits per encoded value, plus the float rounding of the comparison itself
    assert abs(fp.decode(pk, sk.decrypt(cx)) - x) <= 2.0 ** -40 + 2 * math.ulp(x)
    cy = ENCRYPTION.encrypt(pk, fp.encode(pk, y))
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
        ENCRYPTION.encrypt(pk, pk.n)
    with pytest.raises(pl.PlaintextRangeError, match="out of range"):
        ENCRYPTION.encrypt(pk, -1)
    with pytest.raises(pl.PlaintextRangeError):
        ENCRYPTION.encrypt(pk, 1.5)  # type: ignore[arg-type]
    with pytest.raises(pl.PlaintextRangeError):
        pl.FixedPoint(8).encode(pk, float("nan"))
    with pytest.raises(ConfigError):
        pl.FixedPoint(-1)


# -- issue 37: the one fixed-point encoding of the API and the CLI --------------------------------
@SETTINGS
@given(m=st.integers(min_value=-(2**80), max_value=2**80), bits=st.integers(min_value=0, max_value=64))
def test_to_decimal_is_the_shortest_text_that_encodes_back(m: int, bits: int) -> None:
    fp = pl.FixedPoint(bits)
    text = fp.to_decimal(m)
    assert fp.parse("x", text) == m
    if "." in text:  # one digit fewer would not encode back: the shortest
        shorter = text[:-1].rstrip(".")
        assert fp.parse("x", shorter) != m


def test_decimal_text_is_read_exactly_under_the_one_grammar() -> None:
    from cryptoffload.crypto.paillier.encoding import MAX_DECIMAL_EXPONENT, parse_decimal

    fp = pl.FixedPoint(64)
    assert fp.parse("v", "0.1") == ((1 << 64) + 5) // 10 != round((1 << 64) * 0.1)  # exact, not through a float
    assert fp.parse("v", "-2.25e1") == -(225 << 64) // 10 and fp.parse("v", " 3 ") == 3 << 64
    assert pl.FixedPoint(16).parse("v", "1e-9000000") == 0
    for bad in ("nan", "inf", "1_000", "0x10", "", "1.2.3", "\u0661"):
        with pytest.raises(pl.PlaintextRangeError, match="^v: must be a decimal number"):
            fp.parse("v", bad)
    with pytest.raises(pl.PlaintextRangeError, match="too large for any key"):
        parse_decimal("v", f"1e{MAX_DECIMAL_EXPONENT + 1}")


def test_fixed_point_scale_bounds_and_exact_integers() -> None:
    import numpy as np

    fp = pl.FixedPoint()
    assert fp.frac_bits == 32 and fp.scale == 2**32 and fp.to_int(np.int64(2**62)) == 2**94  # no float on the way
    assert fp.bound_for(1.5) == 3 * 2**31 and pl.FixedPoint(2).bound_for(0.3) == 2  # ceil(0.3 * 4)
    assert fp.to_int(0.5) == 2**31 and fp.from_int(-(2**31)) == -0.5
    with pytest.raises(pl.PlaintextRangeError, match="does not fit a float"):
        pl.FixedPoint(0).from_int(1 << 2000)
    with pytest.raises(pl.PlaintextRangeError, match="cannot encode True"):
        fp.to_int(True)
