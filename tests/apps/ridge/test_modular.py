"""Linear algebra modulo n and rational reconstruction, against exact fractions."""

from __future__ import annotations

import math
from fractions import Fraction

import gmpy2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoffload.apps.ridge import ReconstructionError, SingularMatrixError, rational_reconstruct, solve_mod
from cryptoffload.errors import ConfigError

PROPS = settings(max_examples=200, deadline=None)


def test_solve_mod_and_singular_refusal():
    n = 1000003 * 1000033
    M = [[2, 1], [1, 3]]
    x = solve_mod(M, [5, 10], n)
    assert [(M[i][0] * x[0] + M[i][1] * x[1]) % n for i in range(2)] == [5, 10]
    with pytest.raises(SingularMatrixError, match="column 1"):
        solve_mod([[1, 2], [2, 4]], [1, 1], n)
    with pytest.raises(SingularMatrixError, match="column 0"):
        solve_mod([[0, 0], [0, 0]], [0, 0], n)
    with pytest.raises(ConfigError):
        solve_mod([[1, 2]], [1], n)


@st.composite
def fraction_case(draw):
    n = draw(st.integers(1 << 40, 1 << 600)) | 1
    n_bits = n.bit_length()
    num_bits = draw(st.integers(1, n_bits - 3))
    N = draw(st.integers(1, 1 << num_bits))
    D = max(1, (n - 1) // (2 * N))
    p = draw(st.integers(-N, N))
    q = draw(st.integers(1, D))
    return n, N, D, p, q


@PROPS
@given(case=fraction_case())
def test_rational_reconstruction_recovers_fractions(case):
    n, N, D, p, q = case
    if math.gcd(q, n) != 1:
        return
    a = p * int(gmpy2.invert(q, n)) % n
    assert rational_reconstruct(a, n, N, D) == Fraction(p, q)


@PROPS
@given(bits=st.integers(64, 512), data=st.data())
def test_rational_reconstruction_default_bounds(bits, data):
    n = data.draw(st.integers(1 << (bits - 1), (1 << bits) - 1)) | 1
    lim = math.isqrt(n // 2)
    p = data.draw(st.integers(-lim, lim))
    q = data.draw(st.integers(1, lim))
    if math.gcd(q, n) != 1:
        return
    a = p * int(gmpy2.invert(q, n)) % n
    assert rational_reconstruct(a, n) == Fraction(p, q)


def test_rational_reconstruction_refusals():
    n = (1 << 127) - 1  # prime
    with pytest.raises(ConfigError, match="2 \\* num_bound"):
        rational_reconstruct(5, n, 1 << 64, 1 << 64)
    # a residue of a fraction far beyond tiny bounds
    a = 123456789 * int(gmpy2.invert(987654321, n)) % n
    with pytest.raises(ReconstructionError, match="no fraction"):
        rational_reconstruct(a, n, 1000, 1000)
    assert rational_reconstruct(0, n) == 0
    assert rational_reconstruct(n - 1, n) == -1
