"""Chebyshev series (bootstrap/chebyshev.py): the interpolant against numpy's, the split and the
baby-step giant-step recursion against numpy's chebval, and the homomorphic evaluation -- on the
emulator (exact slot arithmetic, so only the levels, scales and the decomposition are tested)
and on the twin (with its noise) -- coming out at the level the depth formula says."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.polynomial import chebyshev as C

from cryptoffload.crypto.ckks import CkksParams, make_backend
from cryptoffload.crypto.ckks.bootstrap import chebyshev
from cryptoffload.crypto.ckks.bootstrap.scales import factor_for, prescale_for

#: eight 58-bit levels above a 60-bit q_0 (composite primes on the twin, SEAL's on the emulator)
DEEP = CkksParams(1024, (60,) + (58,) * 8 + (60,), 58)
coefficient_lists = st.lists(st.floats(-1, 1, allow_nan=False), min_size=2, max_size=60)


def test_interpolation_matches_numpy():
    for degree in (5, 16, 37):
        ours = chebyshev.interpolate(np.cos, degree)
        assert np.allclose(ours, C.chebinterpolate(np.cos, degree), atol=1e-14)


@settings(max_examples=40, deadline=None)
@given(c=coefficient_lists, data=st.data())
def test_split_is_a_division_by_t_g(c, data):
    c = np.array(c)
    g = data.draw(st.integers((len(c) + 1) // 2, len(c) - 1))
    lo, hi = chebyshev.split(c, g)
    tg = np.zeros(g + 1)
    tg[g] = 1
    got = C.chebadd(lo, C.chebmul(tg, hi))
    size = max(len(got), len(c))
    assert np.allclose(np.pad(got, (0, size - len(got))), np.pad(c, (0, size - len(c))), atol=1e-12)
    assert len(lo) == g and len(hi) == len(c) - g


@settings(max_examples=30, deadline=None)
@given(c=coefficient_lists, k=st.sampled_from([2, 4, 8, 16]))
def test_the_baby_step_giant_step_recursion_is_the_polynomial(c, k):
    y = np.linspace(-1, 1, 101)
    assert np.allclose(chebyshev.evaluate_split(np.array(c), y, k), C.chebval(y, c), atol=1e-10)


def test_scale_helpers_land_on_the_wanted_float():
    rng = np.random.default_rng(0)
    hits = 0
    for _ in range(200):
        have, want, q = (2.0 ** rng.uniform(50, 60) for _ in range(3))
        got = have * factor_for(have, want)
        hits += got == want
        assert abs(got - want) <= np.spacing(want)          # the backends' add accepts one last bit
        assert abs(prescale_for(want, q) / q - want) <= np.spacing(want)
    assert hits >= 170     # and most land exactly


@pytest.fixture(scope="module", params=["emulator", "gpu-twin"])
def backend(request):
    b = make_backend(request.param, DEEP, insecure_study=True)
    b.keygen([])
    return b


@pytest.mark.parametrize("degree,k", [(3, 2), (9, 4), (31, 8), (40, 8), (12, 16)])
def test_a_series_on_ciphertexts_is_the_polynomial_at_the_promised_level(backend, degree, k):
    rng = np.random.default_rng(degree)
    c = rng.uniform(-0.5, 0.5, degree + 1)
    y = rng.uniform(-1, 1, backend.slots)
    top = DEEP.levels
    ct = backend.encrypt(y, level=top, scale=float(backend.primes[top]))
    ev = chebyshev.ChebyshevEvaluator(backend, ct, k)
    level = ev.output_level(len(c))
    assert level == top - chebyshev.depth(len(c), k)
    out = ev.series(c, float(backend.primes[level]))
    assert backend.level(out) == level and backend.scale(out) == pytest.approx(float(backend.primes[level]), rel=1e-15)
    tol = 1e-12 if backend.name == "emulator" else 2.0 ** -30
    assert np.max(np.abs(backend.decrypt(out) - C.chebval(y, c))) < tol


def test_depth_is_one_more_than_the_bits_of_the_degree():
    for degree in range(1, 130):
        k = chebyshev.baby_size(degree)
        assert chebyshev.depth(degree + 1, k) <= degree.bit_length() + 1
