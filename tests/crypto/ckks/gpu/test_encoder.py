"""The special FFT against the canonical embedding's definition; CRT to and from RNS exactly."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoffload.crypto.ckks.gpu.encoder import CrtDecoder, SpecialFft, to_residues

PRIMES = [1073739649, 1047041, 1048193, 1073741441]
Q = math.prod(PRIMES)


def test_encode_evaluates_to_the_slots_on_the_rotation_group():
    n = 64
    fft = SpecialFft(n)
    rng = np.random.default_rng(0)
    z = rng.normal(size=n // 2) + 1j * rng.normal(size=n // 2)
    c = fft.encode(z, 1.0)
    xi = np.exp(2j * np.pi / (2 * n))
    got = [np.sum(c * xi ** (pow(5, j, 2 * n) * np.arange(n))) for j in range(n // 2)]
    assert np.max(np.abs(np.array(got) - z)) < 1e-12
    assert np.max(np.abs(fft.decode(c, 1.0) - z)) < 1e-12


def test_rotation_and_conjugation_act_on_slots():
    n = 64
    fft = SpecialFft(n)
    z = np.random.default_rng(1).normal(size=n // 2) + 0j
    c = fft.encode(z, 1.0)
    for elt, want in ((5, np.roll(z, -1)), (2 * n - 1, np.conj(z))):
        sigma = np.zeros(n)
        for j in range(n):
            e = j * elt % (2 * n)
            sigma[e % n] += c[j] if e < n else -c[j]
        assert np.max(np.abs(fft.decode(sigma, 1.0) - want)) < 1e-12


def test_batched_round_trip():
    fft = SpecialFft(128)
    z = np.random.default_rng(2).uniform(-1, 1, size=(3, 64))
    assert np.max(np.abs(fft.decode(fft.encode(z, 2.0 ** 20), 2.0 ** 20) - z)) < 1e-12


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-(2 ** 93), 2 ** 93), min_size=1, max_size=8))
def test_to_residues_is_exact_beyond_64_bits(values):
    res = to_residues(np.array(values, dtype=np.float64), PRIMES)
    for k, p in enumerate(PRIMES):
        assert res[k].tolist() == [int(float(v)) % p for v in values]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-(Q // 2) + 1, Q // 2), min_size=1, max_size=8))
def test_crt_decode_returns_the_centred_value(values):
    res = np.array([[v % p for v in values] for p in PRIMES], dtype=np.uint64)
    got = CrtDecoder(PRIMES).decode(res)
    for g, v in zip(got, values):
        assert g == float(v) or abs(g - v) <= abs(v) * 2 ** -50
