"""NTT tables, Galois permutations and CRT constants, checked against their definitions with
Python integers (small rings)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cryptoffload.crypto.ckks.gpu.arith import Arith
from cryptoffload.crypto.ckks.gpu.chain import prime_chain
from cryptoffload.crypto.ckks.gpu.ring import RnsRing, bit_reverse, primitive_root_2n

N = 32


@pytest.fixture(scope="module")
def ring():
    return RnsRing(prime_chain(N, (30, 20, 20, 30)))


def _random(ring, rng):
    return (rng.integers(0, 2 ** 62, size=(ring.rows, ring.n)).astype(np.uint64) % ring.q[:, None])


def test_primitive_root_has_order_2n():
    q = 12289
    root = primitive_root_2n(q, 1024)
    assert pow(root, 1024, q) == q - 1 and pow(root, 2048, q) == 1


def test_ntt_output_i_is_the_value_at_psi_to_2_bitrev_i_plus_1(ring):
    rng = np.random.default_rng(1)
    a = _random(ring, rng)
    rows = np.arange(ring.rows)
    fa = Arith(ring, np, "ref").ntt(a.copy(), rows)
    rev = bit_reverse(N)
    for k, q in enumerate(ring.primes):
        psi = ring.psi_root[k]
        for i in range(N):
            e = 2 * int(rev[i]) + 1
            assert int(fa[k, i]) == sum(int(a[k, j]) * pow(psi, e * j, q) for j in range(N)) % q


def test_pointwise_product_is_the_negacyclic_product(ring):
    rng = np.random.default_rng(2)
    a, b = _random(ring, rng), _random(ring, rng)
    rows = np.arange(ring.rows)
    ar = Arith(ring, np, "ref")
    c = ar.intt(ar.mul(ar.ntt(a.copy(), rows), ar.ntt(b.copy(), rows), rows), rows)
    for k, q in enumerate(ring.primes):
        want = [0] * N
        for i in range(N):
            for j in range(N):
                sign = 1 if i + j < N else -1
                want[(i + j) % N] += sign * int(a[k, i]) * int(b[k, j])
        assert [w % q for w in want] == c[k].tolist()


@pytest.mark.parametrize("elt", [5, 25, 2 * N - 1, 3])
def test_galois_permutation_is_the_automorphism(ring, elt):
    rng = np.random.default_rng(3)
    a = _random(ring, rng)[:1]
    q = ring.primes[0]
    sigma = [0] * N
    for j in range(N):
        e = j * elt % (2 * N)
        sigma[e % N] = (sigma[e % N] + (int(a[0, j]) if e < N else -int(a[0, j]))) % q
    ar = Arith(ring, np, "ref")
    row = np.array([0])
    want = ar.ntt(np.array([sigma], dtype=np.uint64), row)
    assert np.array_equal(ar.permute(ar.ntt(a.copy(), row), elt), want)


def test_conversion_constants(ring):
    src, dst = (0, 1), (2, 3)
    yinv, yinv_sh, mat, qmod = ring.conversion(src, dst)
    qs = [ring.primes[i] for i in src]
    big = math.prod(qs)
    for s, q in enumerate(qs):
        assert int(yinv[s]) * (big // q) % q == 1
        assert int(yinv_sh[s]) == (int(yinv[s]) << 32) // q
        for d, t in enumerate(dst):
            assert int(mat[s, d]) == big // q % ring.primes[t]
    assert qmod.tolist() == [big % ring.primes[t] for t in dst]


def test_level_digits_drop_rows_above_the_level():
    ring = RnsRing(prime_chain(2048, (40, 30, 30, 30, 40)))
    assert ring.digits == ((0, 1), (2,), (3,), (4,))
    assert ring.level_digits(0) == [(0, 1)]
    assert ring.level_digits(2) == [(0, 1), (2,), (3,)]
    assert ring.qp_rows(1).tolist() == [0, 1, 2, 5, 6]
