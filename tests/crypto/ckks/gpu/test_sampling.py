"""Randomness: os.urandom by default, exact maps to the distributions."""

from __future__ import annotations

import os

import numpy as np

from cryptoffload.crypto.ckks.gpu import sampling
from cryptoffload.crypto.ckks.gpu.sampling import BOUND, SIGMA, Sampler

from .gpu_helpers import DeterministicSampler


def test_the_source_is_the_os_csprng(monkeypatch):
    calls = []
    monkeypatch.setattr(os, "urandom", lambda n: calls.append(n) or bytes(n))
    assert Sampler().random_bytes(7) == bytes(7) and calls == [7]


def test_no_constructor_takes_a_byte_source():
    """Seeding is a test's own subclass, never a parameter of the package's classes."""
    import inspect

    from cryptoffload.crypto.ckks.gpu.backend import RnsCkksBackend
    from cryptoffload.crypto.ckks.gpu.scheme import RnsScheme

    for cls in (Sampler, RnsScheme, RnsCkksBackend):
        params = inspect.signature(cls.__init__).parameters
        assert not [p for p in params if "rand" in p or "seed" in p or "bytes" in p], cls


def test_ternary_is_uniform_on_three_values():
    t = Sampler().ternary(60000)
    assert set(np.unique(t)) == {-1, 0, 1}
    counts = np.bincount(t + 1)
    assert np.all(np.abs(counts / 60000 - 1 / 3) < 0.015)


def test_gaussian_has_sigma_3_2_and_the_6_sigma_bound():
    g = Sampler().gaussian(200000)
    assert np.max(np.abs(g)) <= BOUND
    assert abs(np.mean(g)) < 0.05
    assert abs(np.std(g) - SIGMA) < 0.05


def test_gaussian_table_matches_the_distribution():
    # thresholds are the cumulative distribution scaled to 2^64
    x = np.arange(-BOUND, BOUND + 1)
    w = np.exp(-x.astype(float) ** 2 / (2 * SIGMA ** 2))
    cdf = np.cumsum(w / w.sum())[:-1]
    assert np.allclose(sampling._CDT.astype(float) / 2.0 ** 64, cdf, atol=1e-15)


def test_uniform_residues_are_below_their_primes():
    primes = [1073741441, 1047041]
    u = Sampler().uniform(primes, 50000)
    for k, q in enumerate(primes):
        assert u[k].max() < q and abs(u[k].mean() / q - 0.5) < 0.01


def test_a_byte_source_can_be_substituted_for_comparisons():
    a = DeterministicSampler().uniform([1047041], 100)
    b = DeterministicSampler().uniform([1047041], 100)
    assert np.array_equal(a, b)
