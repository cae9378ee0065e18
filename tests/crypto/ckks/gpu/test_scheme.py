"""The scheme on raw arrays: rescaling and ModDown round exactly, key-switching digits are
centred, and the three kernel sets produce the same keys and ciphertexts bit for bit from the
same host randomness (what the GPU must also do: see docs/crypto/ckks-gpu.md)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cryptoffload.crypto.ckks.gpu import keyswitch
from cryptoffload.crypto.ckks.gpu.chain import prime_chain
from cryptoffload.crypto.ckks.gpu.keystore import EvalKeys
from cryptoffload.crypto.ckks.gpu.scheme import RawCt, RnsScheme

from .gpu_helpers import COMPOSITE, PARAMS, seed_randomness

CHAIN = prime_chain(PARAMS.poly_modulus_degree, PARAMS.coeff_mod_bits)


def scheme(kernels="numba", seed=b"s"):
    return seed_randomness(RnsScheme(CHAIN, np, kernels), seed)


def crt(res, primes):
    """Centred integers of coefficient-form residues (Python integers)."""
    big = math.prod(primes)
    out = []
    for j in range(res.shape[1]):
        v = sum(int(res[i, j]) * (big // q) * pow(big // q, -1, q) for i, q in enumerate(primes)) % big
        out.append(v - big if v > big // 2 else v)
    return out


def test_rescale_divides_and_rounds_exactly():
    s = scheme()
    ring, level = s.ring, 2
    rows = s.rows(level)
    rng = np.random.default_rng(0)
    coeff = rng.integers(0, 2 ** 62, size=(len(rows), ring.n)).astype(np.uint64) % ring.q[rows][:, None]
    data = s.ar.ntt(coeff.copy(), rows)[None]
    out = s.rescale(RawCt(data, level, 1.0), 1.0)
    got = s.ar.intt(out.data[0].copy(), s.rows(level - 1))
    primes = [ring.primes[r] for r in rows]
    q_last = primes[-1]
    for j, v in enumerate(crt(coeff, primes)[:64]):
        want = (2 * v + q_last) // (2 * q_last)       # round(v / q_last), halves up
        for i, q in enumerate(primes[:-1]):
            assert int(got[i, j]) == want % q


def test_mod_down_rounds_exactly():
    s = scheme()
    ring, level = s.ring, 1
    qp = ring.qp_rows(level)
    primes = [ring.primes[r] for r in qp]
    p = ring.p_product
    rng = np.random.default_rng(1)
    values = [int(x) * p + int(r) for x, r in zip(rng.integers(-2 ** 40, 2 ** 40, ring.n),
                                                  rng.integers(-(p // 2) + 1, p // 2, ring.n))]
    coeff = np.array([[v % q for v in values] for q in primes], dtype=np.uint64)
    out = keyswitch.mod_down(s.ar, s.ar.ntt(coeff, qp), level)
    got = crt(s.ar.intt(out, s.rows(level)), primes[: len(s.rows(level))])
    assert got == [(2 * v + p) // (2 * p) for v in values]


def test_decomposition_digits_are_centred_representatives():
    s = scheme()
    ring, level = s.ring, s.top
    rows = s.rows(level)
    rng = np.random.default_rng(2)
    d = rng.integers(0, 2 ** 62, size=(len(rows), ring.n)).astype(np.uint64) % ring.q[rows][:, None]
    digits = keyswitch.decompose(s.ar, s.ar.ntt(d.copy(), rows), [0], level)[0]
    qp = ring.qp_rows(level)
    for g, drows in enumerate(ring.level_digits(level)):
        big = math.prod(ring.primes[r] for r in drows)
        coeff = s.ar.intt(digits[g].copy(), qp)
        got = crt(coeff, [ring.primes[r] for r in qp])[:32]
        want = crt(d[list(drows)], [ring.primes[r] for r in drows])[:32]
        assert got == want and max(abs(v) for v in got) <= big // 2


def keys_of(s, sk, rotations=(3,), conjugation=True):
    """An EvalKeys store with the relinearisation key, Galois keys and the conjugation key."""
    keys = EvalKeys(s.ar)
    keys.put("relin", s.gen_relin(sk))
    for r in rotations:
        keys.put(("galois", r), s.gen_galois(sk, s.galois_elt(r)), s.galois_elt(r))
    if conjugation:
        keys.put("conj", s.gen_galois(sk, s.conj_elt), s.conj_elt)
    return keys


def _pipeline(s):
    """Keys, encryption and every kind of op, batched ones too; returns every array made, in order."""
    sk = s.gen_secret()
    pk = s.gen_public(sk)
    keys = keys_of(s, sk)
    g3 = ("galois", 3)
    z = np.linspace(-1, 1, s.n // 2) + 0.25j
    a = s.encrypt(s.encode(z, s.top, 2.0 ** 30), pk)
    b = s.encrypt(s.encode(z[::-1], s.top, 2.0 ** 30), pk)
    m = s.rescale(s.relinearize(s.mul(a, b), keys), float(CHAIN.logical[s.top]))
    rots = s.automorphisms_hoisted(m, [(s.galois_elt(3), g3), (s.conj_elt, "conj")], keys)
    single = s.automorphism(a, s.galois_elt(3), g3, keys)
    each = s.automorphisms_each([a, b], [(s.galois_elt(3), g3), (s.conj_elt, "conj")], keys)
    pt = s.encode(z * 0.5, s.top, 2.0 ** 30)
    dot = s.mul_plain_sum([(a, pt), (b, pt), (a, pt)])
    total = s.add_many([a, b, a])
    plain = s.sub_plain(s.add_plain(a, pt), pt)
    scaled = s.rescale_many([dot, s.mul_plain(b, pt)], [1.0, 1.0])
    return [sk.ntt, pk, keys.get("relin"), keys.get(g3), a.data, b.data, m.data, rots[0].data, rots[1].data,
            single.data, each[0].data, each[1].data, dot.data, total.data, plain.data, scaled[0].data,
            scaled[1].data, s.decrypt(rots[0], sk)]


def test_kernel_sets_give_identical_keys_and_ciphertexts():
    base = _pipeline(scheme("numba"))
    ref = _pipeline(scheme("ref"))
    cu = _pipeline(scheme("cuda-host"))
    for i, (x, y, w) in enumerate(zip(base, ref, cu)):
        assert np.array_equal(x, y) and np.array_equal(x, w), i
    z = np.linspace(-1, 1, PARAMS.slots) + 0.25j
    assert np.max(np.abs(base[-1] - np.roll(z * z[::-1], -3))) < 1e-4


def test_the_twins_cpu_order_equals_the_gpus_order_over_a_whole_program(host_lib, monkeypatch):
    """Every launch of the pipeline (keys, encryption, products, rotations, batched ops) run in
    the GPU's block-and-thread order (kernels_host.cpp's *_gpu_order) and in the CPU order the
    twin uses: the same words throughout."""
    from .test_arith import gpu_ordered

    s_gpu = scheme("cuda-host", b"order")
    s_gpu.ar = gpu_ordered(monkeypatch, s_gpu.ring)
    for i, (x, y) in enumerate(zip(_pipeline(s_gpu), _pipeline(scheme("cuda-host", b"order")))):
        assert np.array_equal(x, y), i


@pytest.mark.parametrize("params", [PARAMS, COMPOSITE])
def test_every_level_rotates_and_conjugates(params):
    s = RnsScheme(prime_chain(params.poly_modulus_degree, params.coeff_mod_bits), np)
    sk = s.gen_secret()
    pk, keys = s.gen_public(sk), keys_of(s, sk, rotations=(-5,))
    z = np.random.default_rng(3).uniform(-1, 1, s.n // 2) * (1 + 1j)
    for level in range(s.top + 1):
        ct = s.encrypt(s.encode(z, level, params.scale), pk)
        got = s.decrypt(s.automorphism(ct, s.galois_elt(-5), ("galois", -5), keys), sk)
        assert np.max(np.abs(got - np.roll(z, 5))) < 1e-4
        assert np.max(np.abs(s.decrypt(s.automorphism(ct, s.conj_elt, "conj", keys), sk) - np.conj(z))) < 1e-4
