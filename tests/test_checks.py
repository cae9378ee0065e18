"""The shared validators: bool is not an integer, NaN and infinities are not numbers, and the
message names the value and what it must be."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

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
    # issue 37: "1 2 4" was read as 124
    with pytest.raises(ConfigError, match=r"^--devices: '1 2 4' holds a space; separate the values with commas: 1,2,4$"):
        parse_ints("--devices", "1 2 4")
    with pytest.raises(ConfigError, match="separate the values with commas: 100,1e3"):
        parse_floats("--rates", "100 1e3")


def test_ceilings_seeds_ports() -> None:
    from cryptoffload.checks import MAX_SEED, check_port, check_seed

    assert check_int("n", 10, maximum=10) == 10
    with pytest.raises(ConfigError, match="--devices must be at most 1,024, got 100,000,000"):
        check_int("--devices", 100_000_000, maximum=1024)
    with pytest.raises(ConfigError, match=r"characters\)"):
        check_int("--n", 10**60, maximum=5)  # a huge value is shortened in the message
    assert check_positive("x", 3.0, maximum=3.0) == 3.0
    with pytest.raises(ConfigError, match="at most"):
        check_positive("x", 1e30, maximum=1e6)
    assert check_seed("--seed", 0) == 0 and check_seed("--seed", MAX_SEED) == MAX_SEED
    for bad in (-1, MAX_SEED + 1, 1.0, True):
        with pytest.raises(ConfigError):
            check_seed("--seed", bad)
    assert check_port("--port", 0) == 0 and check_port("--port", 65535) == 65535
    for bad in (-1, 65536):
        with pytest.raises(ConfigError):
            check_port("--port", bad)
    with pytest.raises(ConfigError):
        check_port("--port", 0, allow_zero=False)


@pytest.mark.parametrize("host, ok", [("127.0.0.1", True), ("::1", True), ("[::1]", True), ("localhost", True),
                                      ("a-b.example.org", True), ("no such host!", False), ("999.1.1.1", False),
                                      ("", False), ("-x", False), ("a" * 64, False)])
def test_check_host(host: str, ok: bool) -> None:
    from cryptoffload.checks import check_host

    if ok:
        assert check_host("--host", host)
    else:
        with pytest.raises(ConfigError, match="--host must be a host name or an IP address"):
            check_host("--host", host)


@pytest.mark.parametrize("url, ok", [("http://127.0.0.1:8000", True), ("https://h.example:443/p", True),
                                     ("http://[::1]:80/", True), ("not a url", False), ("ftp://127.0.0.1/", False),
                                     ("http://", False), ("http://256.256.256.256:80", False),
                                     ("http://127.0.0.1:99999", False), ("http://127.0.0.1:0", False), ("", False)])
def test_check_url(url: str, ok: bool) -> None:
    from cryptoffload.checks import check_url

    if ok:
        assert check_url("--csp", url) == url
    else:
        with pytest.raises(ConfigError, match="--csp"):
            check_url("--csp", url)


def test_parse_floats_wants_at_least_one_number() -> None:
    from cryptoffload.checks import parse_floats

    assert parse_floats("--rates", "1, 2e3,") == [1.0, 2000.0]
    with pytest.raises(ConfigError, match="none"):
        parse_floats("--rates", ",,")


def test_is_number_tells_a_header_cell_from_data() -> None:
    from cryptoffload.checks import is_number

    assert is_number("3") and is_number("-1.5e3") and is_number(" 2 ") and is_number(".5")
    assert not is_number("age") and not is_number("") and not is_number("1,5")
    # one grammar: what Python's float() alone would also take is not a number here
    for text in ("nan", "inf", "-Infinity", "1_000", "\u0661\u0662", "0x10", "1e", "+"):
        assert not is_number(text), text


@pytest.mark.parametrize("text, value", [("0", 0), (" -12 ", -12), ("+7", 7), ("\t42\t", 42),
                                          ("9" * 1000, int("9" * 1000))])
def test_parse_int_takes_ascii_digits_with_an_optional_sign(text: str, value: int) -> None:
    from cryptoffload.checks import parse_int

    assert parse_int("--n", text) == value


@pytest.mark.parametrize("text", ["", " ", "1_000", "\u0661\u0662", "\uff11", "0x10", "1.0", "1e3", "--1",
                                  "1 2", "\n1", None, 12, "9" * 5000])
def test_parse_int_refuses_every_other_form_naming_the_value(text: object) -> None:
    from cryptoffload.checks import parse_int

    with pytest.raises(ConfigError, match=r"^--n must be an integer \(ASCII digits, optional sign\), got "):
        parse_int("--n", text)


def test_parse_int_bounds_name_the_limit() -> None:
    from cryptoffload.checks import parse_int

    with pytest.raises(ConfigError, match=r"^--n must be at most 10, got 11$"):
        parse_int("--n", "11", maximum=10)
    with pytest.raises(ConfigError, match=r"^--n must be at least 0, got -1$"):
        parse_int("--n", "-1", minimum=0)


@given(st.integers(min_value=-10**60, max_value=10**60))
def test_parse_int_round_trips_every_integer(value: int) -> None:
    from cryptoffload.checks import parse_int

    assert parse_int("--n", str(value)) == value


@pytest.mark.parametrize("text", ["nan", "inf", "1e400", "1_0.5", "\u0661.5", "0x1p3", ".", "e5"])
def test_parse_float_refuses_non_decimal_and_non_finite(text: str) -> None:
    from cryptoffload.checks import parse_float

    with pytest.raises(ConfigError, match=r"^--rate must be a finite decimal number, got "):
        parse_float("--rate", text)


@pytest.mark.parametrize("value", [1e308, 1e-300, 5e-324, 86_400.1, 9.9e-4])
def test_check_bounded_has_a_floor_and_a_ceiling_with_the_unit(value: float) -> None:
    from cryptoffload.checks import WAIT_S, check_bounded

    with pytest.raises(ConfigError, match=r"^--timeout must be between 0\.001 and 86400 s, got "):
        check_bounded("--timeout", value, WAIT_S, "s")
    assert check_bounded("--timeout", 1e-3, WAIT_S, "s") == 1e-3
    assert check_bounded("--timeout", 86_400, WAIT_S, "s") == 86_400.0


def test_check_bounded_with_zero_keeps_zero_and_normalises_negative_zero() -> None:
    from cryptoffload.checks import LAMBDA, check_bounded

    assert math.copysign(1.0, check_bounded("--lam", -0.0, LAMBDA, allow_zero=True)) == 1.0
    with pytest.raises(ConfigError, match=r"--lam must be 0 or between 1e-09 and 1e\+12, got 1e-300"):
        check_bounded("--lam", 1e-300, LAMBDA, allow_zero=True)
    with pytest.raises(ConfigError, match=r"--lam must be 0 or between .* got nan"):
        check_bounded("--lam", math.nan, LAMBDA, allow_zero=True)
    with pytest.raises(ConfigError, match=r"between 0\.001 and 10 s, got 11"):
        check_bounded("--wait", 11, (1e-3, 1e6), "s", maximum=10)


def test_check_positive_floor_is_optional_and_named() -> None:
    assert check_positive("x", 1e-300) == 1e-300  # internal callers without a floor keep their contract
    with pytest.raises(ConfigError, match=r"x must be at least 0\.5 MB, got 0\.1"):
        check_positive("x", 0.1, minimum=0.5, unit="MB")


# -- issue 32: one table of named bounds, and strict JSON ----------------------------------------


def test_a_bound_reads_text_by_the_grammar_and_names_its_range_and_unit() -> None:
    from cryptoffload.checks import PORT, RATE_PER_S, REQUESTS

    assert REQUESTS.parse("--requests", " 1000 ") == 1000 and REQUESTS.parse("--requests", 610_000) == 610_000
    assert RATE_PER_S.parse("--rate", "2.5e3") == 2500.0 and PORT.parse("--port", "0") == 0
    with pytest.raises(ConfigError, match=r"^--requests must be between 2 and 100,000,000 requests, "
                                          r"got 1,000,000,000,000$"):
        REQUESTS.parse("--requests", str(10**12))
    with pytest.raises(ConfigError, match=r"^--requests must be a whole number between 2 and 100,000,000 requests, "
                                          r"got 3\.0$"):
        REQUESTS.check("--requests", 3.0)
    with pytest.raises(ConfigError, match=r"^--rate must be between 0\.001 and 1e\+09 requests/s, got 1e\+308$"):
        RATE_PER_S.parse("--rate", "1e308")
    with pytest.raises(ConfigError, match=r"^--rate must be a finite decimal number, got '1e400'$"):
        RATE_PER_S.parse("--rate", "1e400")
    with pytest.raises(ConfigError, match=r"^--port must be 0 or between 1 and 65,535, got 65,536$"):
        PORT.parse("--port", "65536")


@pytest.mark.parametrize("text", ["1_000", "\u0661\u0662", "\uff11", "12.0", "0x10", "1e3", "", "nan", "True"])
def test_an_integer_bound_takes_ascii_digits_only(text: str) -> None:
    from cryptoffload.checks import REQUESTS

    with pytest.raises(ConfigError, match=r"^--requests must be an integer \(ASCII digits, optional sign\)"):
        REQUESTS.parse("--requests", text)


def test_a_maximum_lowers_a_ceiling_and_zero_is_admitted_only_when_asked() -> None:
    from cryptoffload.checks import DURATION_MS, WORKERS

    with pytest.raises(ConfigError, match=r"^--workers must be between 1 and 64 workers, got 65$"):
        WORKERS.parse("--workers", "65", maximum=64)
    assert DURATION_MS.parse("--reconfig-ms", "0", allow_zero=True) == 0.0
    with pytest.raises(ConfigError, match=r"--reconfig-ms must be between 1e-06 and 1e\+06 ms, got 0\.0"):
        DURATION_MS.parse("--reconfig-ms", "0")


def test_the_table_holds_every_bound_once_with_a_finite_range() -> None:
    from cryptoffload.checks import BOUNDS, Bound

    assert len(BOUNDS) > 30 and all(isinstance(b, Bound) and b.name == n for n, b in BOUNDS.items())
    low, high = BOUNDS["wait_s"]  # still a (floor, ceiling) pair for older callers
    assert (low, high) == (1e-3, 86_400.0)
    with pytest.raises(ValueError, match="finite and ordered"):
        Bound("x", 2.0, 1.0)


@pytest.mark.parametrize("text, reason", [
    ("NaN", "NaN is not JSON"), ("[-Infinity]", "-Infinity is not JSON"), ("1e400", "out of range"),
    ("9" * 4301, "4,301 digits"), ('{"a": 1, "a": 2}', "appears twice"), ("[" * 100_000, "too deeply"),
    (b'"\xff"', "not UTF-8"), ("{", "truncated or garbled"),
])
def test_strict_json_refuses_what_python_reads_beyond_the_standard(text: str | bytes, reason: str) -> None:
    from cryptoffload.checks import JsonRefused, load_json, strict_json

    with pytest.raises(JsonRefused, match=reason):
        strict_json(text)
    with pytest.raises(ConfigError, match=rf"^the body is not acceptable JSON: .*{reason}"):
        load_json("the body", text)


def test_strict_json_reads_the_standard() -> None:
    from cryptoffload.checks import strict_json

    assert strict_json('{"n": -' + "9" * 4300 + ', "x": [1.5, "\\u00e9", true, null]}')["x"] == [1.5, "é", True, None]
