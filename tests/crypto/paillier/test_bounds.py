"""Bounds on plaintexts (issue 32): the limit is the signed encoding's n/3, a result's bound
past it is refused with the bound, the limit and the fix, and decoding under a bound returns
the value or nothing -- never a number outside the bound."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cryptoffload.crypto import paillier as pl
from cryptoffload.crypto.paillier import ENCRYPTION, bounds


def test_the_limit_is_what_signed_decoding_accepts(keys) -> None:
    pk, _ = keys
    limit = bounds.signed_limit(pk)
    assert limit == pk.max_int == pk.n // 3
    for x in (limit, -limit):
        assert pl.decode_signed(pk, pl.encode_signed(pk, x)) == x
    with pytest.raises(pl.PlaintextRangeError):
        pl.encode_signed(pk, limit + 1)
    assert pl.DEFAULT_BOUND == 2 ** 64 < limit


def test_describe_is_exact_when_short_and_a_power_of_two_when_not() -> None:
    assert bounds.describe(0) == "0" and bounds.describe(1 << 64) == "18,446,744,073,709,551,616"
    assert bounds.describe((1 << 80) - 1) == "1,208,925,819,614,629,174,706,175"
    assert bounds.describe(1 << 80) == "about 2^80.000"
    assert bounds.describe(3 << 1000) == "about 2^1001.585"


def test_check_bound_and_check_values(keys) -> None:
    pk, _ = keys
    assert bounds.check_bound(pk, 0, "--bound") == 0 and bounds.check_bound(pk, pk.max_int, "x") == pk.max_int
    with pytest.raises(pl.PlaintextRangeError,
                       match=r"^--bound: a bound is a largest \|value\| and cannot be negative, got -1$"):
        bounds.check_bound(pk, -1, "--bound")
    with pytest.raises(pl.PlaintextRangeError, match="^f.bin: bound about 2.* is above this 1024-bit key's signed "
                       "limit n/3 .*; give a smaller bound or use a larger key$"):
        bounds.check_bound(pk, pk.max_int + 1, "f.bin")
    with pytest.raises(pl.PlaintextRangeError, match="must be an integer, got bool"):
        bounds.check_bound(pk, True, "--bound")
    bounds.check_values(pk, [0, 5, -5], 5, "m.txt", "--bound")
    with pytest.raises(pl.PlaintextRangeError, match="^m.txt: value 3 is a 3-bit integer, above --bound 5; give "
                       "--bound at least its size"):
        bounds.check_values(pk, [0, 5, -6], 5, "m.txt", "--bound")


def test_check_result_names_the_operation_the_bound_the_limit_and_the_fix(keys) -> None:
    pk, _ = keys
    assert bounds.check_result(pk, pk.max_int, "sum", "fix it") == pk.max_int
    with pytest.raises(pl.PlaintextRangeError, match=r"^sum of 2 values: the result could reach about 2\^\d+\.\d{3}, "
                       r"past this 1024-bit key's signed limit n/3 \(about 2\^\d+\.\d{3}\), where it would decrypt to "
                       r"a wrong number; fix it$"):
        bounds.check_result(pk, pk.max_int + 1, "sum of 2 values", "fix it")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(x=st.integers(0, 1021).flatmap(lambda b: st.integers(-(1 << b), 1 << b)),
       slack=st.integers(-3, 3))
def test_decode_within_returns_the_value_or_nothing(keys, x: int, slack: int) -> None:
    pk, sk = keys
    bound = max(0, min(abs(x) + slack, pk.max_int))
    m = sk.decrypt(ENCRYPTION.encrypt(pk, pl.encode_signed(pk, x)))
    assert bounds.decode_within(pk, m, bound) == (x if abs(x) <= bound else None)


def test_decode_within_refuses_the_gap(keys) -> None:
    """Residues between n/3 and 2n/3 -- what a wrapped sum often lands on -- decode to nothing
    under any bound."""
    pk, _ = keys
    for m in (pk.max_int + 1, pk.n // 2, pk.n - pk.max_int - 1):
        assert bounds.decode_within(pk, m, pk.max_int) is None
    assert bounds.decode_within(pk, pk.n - 1, 1) == -1 and bounds.decode_within(pk, pk.n - 2, 1) is None
