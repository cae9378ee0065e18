"""On a CUDA GPU only (skipped elsewhere, with the reason): the gpu backend computes exactly
what its CPU twin computes -- every kernel, and whole key sets and ciphertexts from the same
host randomness -- and classifies an HE-CNN image as the plaintext model does.

Run on the GPU machine (docs/crypto/ckks-gpu.md):
``python3 -m pytest -q tests/crypto/ckks/gpu/test_gpu_device.py``."""

from __future__ import annotations

import numpy as np
import pytest

from cryptoffload.crypto.ckks import DEFAULT_PARAMS
from cryptoffload.crypto.ckks.gpu.arith import Arith
from cryptoffload.crypto.ckks.gpu.backend import GpuCkksBackend, RnsCkksBackend
from cryptoffload.crypto.ckks.gpu.chain import prime_chain
from cryptoffload.crypto.ckks.gpu.device import gpu_reason
from cryptoffload.crypto.ckks.gpu.ring import RnsRing

from .gpu_helpers import PARAMS, seed_randomness

REASON = gpu_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"no CUDA GPU: {REASON}")


@pytest.fixture(scope="module")
def cp():
    import cupy

    return cupy


@pytest.mark.parametrize("n", [1024, 4096, 16384, 65536])
def test_every_kernel_matches_the_twin(cp, n):
    ring = RnsRing(prime_chain(n, (40, 30, 30, 60)))
    twin, gpu, ref = Arith(ring, np, "numba"), Arith(ring, cp, "cuda"), Arith(ring, cp, "ref")
    rng = np.random.default_rng(n)
    rows = np.arange(ring.rows)
    a = rng.integers(0, 2 ** 62, size=(2, ring.rows, n)).astype(np.uint64) % ring.q[:, None]
    b = rng.integers(0, 2 ** 62, size=(2, ring.rows, n)).astype(np.uint64) % ring.q[:, None]
    ga, gb = cp.asarray(a), cp.asarray(b)
    c, c_sh = ring.constant(987654321, rows)

    def same(fn):
        want = fn(twin, a, b)
        for ar in (gpu, ref):
            got = cp.asnumpy(fn(ar, ga, gb))
            assert np.array_equal(got, want), ar.kernels

    same(lambda ar, x, y: ar.add(x, y, rows))
    same(lambda ar, x, y: ar.sub(x, y, rows))
    same(lambda ar, x, y: ar.neg(x, rows))
    same(lambda ar, x, y: ar.mul(x, y, rows))
    same(lambda ar, x, y: ar.mul_const(x, ar.asarray(c), ar.asarray(c_sh), rows))
    same(lambda ar, x, y: ar.ntt(x.copy(), rows))
    same(lambda ar, x, y: ar.intt(x.copy(), rows))
    same(lambda ar, x, y: ar.permute(x, 5 ** 11 % (2 * n)))
    for exact in (False, True):
        same(lambda ar, x, y: ar.base_convert(x[0, :3], (0, 1, 2), (3, 4, 5), exact=exact))
    same(lambda ar, x, y: ar.ks_inner(x, ar.asarray(np.stack([b, a])), rows, rows))


def _run(be):
    be.keygen([1, 5, -3], conjugation=True)
    x = np.linspace(-1, 1, be.slots)
    c = be.encrypt(x)
    m = be.rescale(be.relinearize(be.mul(c, be.rotate(c, 5))))
    outs = [c, m, *be.rotate_many(m, [1, -3, 4]), be.conjugate(m), be.mul_plain(m, be.encode(x, like=m))]
    return [be.scheme.ar.to_host(o.raw.data) for o in outs], be.decrypt(outs[2])


def test_gpu_and_twin_agree_bit_for_bit_from_the_same_bytes():
    gpu, dec_g = _run(seed_randomness(GpuCkksBackend(PARAMS, insecure_study=True), b"gpu"))
    twin, dec_t = _run(seed_randomness(RnsCkksBackend(PARAMS, insecure_study=True), b"gpu"))
    for g, t in zip(gpu, twin):
        assert np.array_equal(g, t)
    assert np.array_equal(dec_g, dec_t)


def test_he_cnn_image_on_the_gpu():
    from cryptoffload.apps.he_cnn.infer import infer_image

    r = infer_image(7, backend="gpu", params=DEFAULT_PARAMS)
    assert r.prediction == r.plain_prediction and r.max_abs_error < 0.05 and r.rotations == 45
