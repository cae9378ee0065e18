"""The shared validators: bool is not an integer, NaN and infinities are not numbers, and the
message names the value and what it must be."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cryptoffload.checks import check_int, check_non_negative, check_positive
from cryptoffload.errors import ConfigError, CryptoffloadError


def test_check_int_accepts_integers_and_returns_python_ints() -> None:
    assert check_int("n", 3) == 3
    v = check_int("n", np.int64(4))
    assert v == 4 and type(v) is int
    assert check_int("n", 0, minimum=0) == 0


@pytest.mark.parametrize("bad", [0, -1, True, 2.0, "3", None])
def test_check_int_refuses(bad: object) -> None:
    with pytest.raises(ConfigError, match=f"--count must be a positive integer, got {bad!r}"):
        check_int("--count", bad)


def test_check_int_minimum_in_message_and_own_error() -> None:
    class MyError(CryptoffloadError):
        pass

    with pytest.raises(ConfigError, match="must be a non-negative integer, got -1"):
        check_int("bits", -1, minimum=0)
    with pytest.raises(MyError, match="must be an integer >= 2, got 1"):
        check_int("k", 1, minimum=2, error=MyError)


def test_check_positive() -> None:
    assert check_positive("x", 2) == 2.0 and type(check_positive("x", np.float32(0.5))) is float


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf, "fast", None, True])
def test_check_positive_rejects(bad: object) -> None:
    with pytest.raises(ConfigError, match="x must be a"):
        check_positive("x", bad)


def test_check_non_negative_allows_zero_only_extra() -> None:
    assert check_non_negative("x", 0) == 0.0
    for bad in (-1e-9, math.nan, -math.inf):
        with pytest.raises(ConfigError, match="x must be a non-negative finite number"):
            check_non_negative("x", bad)


def test_parse_lists() -> None:
    from cryptoffload.checks import parse_floats, parse_ints, split_list

    assert parse_floats("--rates", "100, 1e3,") == [100.0, 1000.0]
    assert parse_ints("--devices", "1, 2,4") == [1, 2, 4]
    assert split_list("--modes", " tls,,plain ") == ["tls", "plain"]
    with pytest.raises(ConfigError, match="--rates must be comma-separated numbers, got '10,abc'"):
        parse_floats("--rates", "10,abc")
    for bad in ("2,x", "0", ""):
        with pytest.raises(ConfigError, match="--devices must be a comma-separated list of positive integers"):
            parse_ints("--devices", bad)
    with pytest.raises(ConfigError, match="--modes: give at least one value"):
        split_list("--modes", " , ")
