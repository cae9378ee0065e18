"""Integers <-> limb arrays, modulus contexts, host-drawn exponents (no device needed)."""

from __future__ import annotations

import secrets

import numpy as np
import pytest

from cryptoffload.crypto.paillier_gpu import limbs as L
from cryptoffload.errors import ConfigError


def test_limb_round_trip() -> None:
    vals = [0, 1, (1 << 64) - 1, secrets.randbits(2048)]
    arr = L.to_limbs(vals, 64)
    assert arr.shape == (64, 4) and arr.dtype == np.uint32 and arr.flags.c_contiguous
    assert L.from_limbs(arr) == vals
    assert arr[0, 2] == 0xFFFFFFFF and arr[2, 2] == 0   # limb-major: limb j of value i at [j, i]
    with pytest.raises(ConfigError, match="fit"):
        L.to_limbs([1 << 64], 2)
    with pytest.raises(ConfigError, match="fit"):
        L.to_limbs([-1], 2)
    with pytest.raises(ConfigError, match="integers"):
        L.to_limbs([1.5], 2)


def test_random_exponents_are_uniform_below_the_bound() -> None:
    e = L.random_exponents(500, 45)
    assert e.shape == (2, 500) and e.dtype == np.uint32
    ints = L.from_limbs(e)
    assert max(ints) < 1 << 45 and max(ints) >= 1 << 40 and len(set(ints)) == 500


def test_context_words() -> None:
    m = (1 << 61) - 1
    ctx = L.context_words(m, 2)
    r = (1 << 64) % m
    assert L.from_limbs(ctx[:6].reshape(3, 2).T) == [m, r, r * r % m]
    assert (int(ctx[6]) * m) % (1 << 32) == (1 << 32) - 1   # minv = -m^-1 mod 2^32
    with pytest.raises(ConfigError, match="odd"):
        L.context_words(1 << 10, 2)
    with pytest.raises(ConfigError, match="does not fit"):
        L.context_words((1 << 65) + 1, 2)


def test_checks() -> None:
    bound = (1 << 40) + 7
    arr = L.to_limbs([0, bound - 1, 5], 2)
    assert L.check_limbs_below(arr, bound, 2, "x") is arr
    with pytest.raises(ConfigError, match="value 1 is not below"):
        L.check_limbs_below(L.to_limbs([0, bound], 2), bound, 2, "x")
    with pytest.raises(ConfigError, match="shape"):
        L.check_limbs_below(arr.astype(np.int64), bound, 2, "x")
    assert L.check_range((1, 2), 3, "x") == [1, 2]
    for bad in ([3], [-1], [True], [1.0]):
        with pytest.raises(ConfigError, match="x must be integers"):
            L.check_range(bad, 3, "x")
