"""Every hot loop, three implementations, one answer: the NumPy reference, the numba twin and
the CUDA kernels (run on the host, see cuda_host.py) agree bit for bit; the reference agrees
with Python integers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoffload.crypto.ckks.gpu.arith import Arith
from cryptoffload.crypto.ckks.gpu.chain import prime_chain
from cryptoffload.crypto.ckks.gpu.ring import RnsRing
from cryptoffload.errors import ConfigError

from . import cuda_host

# three 20-bit data primes, two 30-bit ones, special primes of 30 bits: mixed sizes on purpose
RING = RnsRing(prime_chain(4096, (40, 20, 30, 30, 60)))
SEEDS = settings(max_examples=4, deadline=None)


@pytest.fixture(scope="module")
def impls(host_lib):
    ref = Arith(RING, np, "ref")
    nb = Arith(RING, np, "numba")
    cu = cuda_host.cuda_on_host(Arith(RING, np, "numba"))
    return ref, nb, cu


@pytest.fixture(autouse=True)
def _host_kernels(monkeypatch, host_lib):
    from cryptoffload.crypto.ckks.gpu import arith_cuda

    monkeypatch.setattr(arith_cuda, "_kernel", cuda_host.host_kernels(host_lib))


def rand(rng, rows, lead=()):
    q = RING.q[rows]
    return rng.integers(0, 2 ** 62, size=lead + (len(rows), RING.n)).astype(np.uint64) % q[:, None]


def agree(impls, fn):
    ref, *others = [fn(a) for a in impls]
    for got in others:
        assert got.dtype == np.uint64 and np.array_equal(got, ref)
    return ref


@SEEDS
@given(seed=st.integers(0, 2 ** 32), lead=st.sampled_from([(), (2,), (3, 1)]))
def test_elementwise_and_transforms(impls, seed, lead):
    rng = np.random.default_rng(seed)
    rows = np.array([0, 2, 3, 5, 6])
    a, b = rand(rng, rows, lead), rand(rng, rows, lead)
    c, c_sh = RING.constant(123456789, rows)
    agree(impls, lambda ar: ar.add(a, b, rows))
    agree(impls, lambda ar: ar.sub(a, b, rows))
    agree(impls, lambda ar: ar.neg(a, rows))
    agree(impls, lambda ar: ar.mul(a, b, rows))
    agree(impls, lambda ar: ar.mul_const(a, ar.asarray(c), ar.asarray(c_sh), rows))
    fwd = agree(impls, lambda ar: ar.ntt(a.copy(), rows))
    back = agree(impls, lambda ar: ar.intt(fwd.copy(), rows))
    assert np.array_equal(back, a)
    agree(impls, lambda ar: ar.permute(a, 5 ** 7 % (2 * RING.n)))


def test_small_rings_run_the_shared_memory_stages_alone(host_lib, monkeypatch):
    from cryptoffload.crypto.ckks.gpu import arith_cuda

    monkeypatch.setattr(arith_cuda, "_kernel", cuda_host.host_kernels(host_lib))
    monkeypatch.setattr(arith_cuda, "MAX_CHUNK_THREADS", 64)   # N/2 > T: global and shared stages
    ring = RnsRing(prime_chain(1024, (30, 20, 30)))
    rows = np.arange(ring.rows)
    a = np.random.default_rng(5).integers(0, 2 ** 62, size=(ring.rows, ring.n)).astype(np.uint64) % ring.q[:, None]
    ref, cu = Arith(ring, np, "ref"), cuda_host.cuda_on_host(Arith(ring, np, "numba"))
    f_ref = ref.ntt(a.copy(), rows)
    assert np.array_equal(cu.ntt(a.copy(), rows), f_ref)
    assert np.array_equal(cu.intt(f_ref.copy(), rows), a)


@SEEDS
@given(seed=st.integers(0, 2 ** 32), exact=st.booleans())
def test_base_conversion(impls, seed, exact):
    rng = np.random.default_rng(seed)
    src, dst = (0, 1, 2), (3, 5, 6)
    x = rand(rng, np.array(src))
    out = agree(impls, lambda ar: ar.base_convert(x, src, dst, exact=exact))
    qs = [RING.primes[s] for s in src]
    big = math.prod(qs)
    for j in range(0, RING.n, 97):   # against the CRT with Python integers
        value = sum(int(x[i, j]) * (big // q) * pow(big // q, -1, q) for i, q in enumerate(qs)) % big
        if exact:
            value = value - big if value >= big / 2 else value
        for d, t in enumerate(dst):
            got = int(out[d, j])
            if exact:
                assert got == value % RING.primes[t]
            else:   # the fast conversion is off by a multiple u * Qs, 0 <= u < S
                assert any(got == (value + u * big) % RING.primes[t] for u in range(len(src)))


@SEEDS
@given(seed=st.integers(0, 2 ** 32), digits=st.integers(1, 4))
def test_key_switching_inner_product(impls, seed, digits):
    rng = np.random.default_rng(seed)
    rows = np.array([0, 1, 2, 5, 6])
    d = rand(rng, rows, (digits,))
    key = rand(rng, np.arange(RING.rows), (4, 2))
    out = agree(impls, lambda ar: ar.ks_inner(d, key, rows, rows))
    q = RING.q[rows][:, None]
    want0 = sum((d[g] * key[g, 0][rows]) % q for g in range(digits)) % q
    assert np.array_equal(out[0], want0)


def test_kernel_sets_are_bound_to_their_array_module():
    with pytest.raises(ConfigError, match="does not run on numpy"):
        Arith(RING, np, "cuda")
    with pytest.raises(ConfigError, match="unknown kernel set"):
        Arith(RING, np, "fortran")
