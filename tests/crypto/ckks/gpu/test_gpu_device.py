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
    twin, gpu, ref = Arith(ring, np), Arith(ring, cp, "cuda"), Arith(ring, cp, "ref")   # the twin: cuda-host, or numba without g++
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
    _batched_ops_match(cp, ring, twin, gpu, a, b)


def _batched_ops_match(cp, ring, twin, gpu, a, b):
    """The fused kernels on the GPU against their composition on the twin (arith_compose)."""
    from cryptoffload.crypto.ckks.gpu.convplan import ConvJob

    n, rows = ring.n, np.arange(ring.rows)
    offsets, primes = np.array([1, 3, 6, 7]), np.tile(rows, 2)[[1, 3, 6, 7]]
    jobs = [ConvJob(0, (0, 1), 0, (0, 1), (2, 3), True), ConvJob(ring.rows, (2,), 2, (1, 0), (0, 1), True)]
    perms = np.stack([ring.galois_perm(5), ring.galois_perm(25)])
    items = np.array([[0, 1, 0], [1, 0, -1]])
    c_items = np.array([[0, 0, 1], [ring.rows * n, -1, -1]])
    c, c_sh = ring.inverse_of(ring.p_product, rows[:3])

    def both(fn):
        want = fn(twin, a, b)
        got = fn(gpu, cp.asarray(a), cp.asarray(b))
        assert np.array_equal(cp.asnumpy(got), want)

    for inverse in (False, True):
        both(lambda ar, x, y: ar.transform(x.copy(), offsets, primes, inverse, src=y))
    both(lambda ar, x, y: ar.convert(x, ar.conv_plan(("gpu", n), lambda: jobs), ar.xp.zeros((4, n), ar.xp.uint64)))
    both(lambda ar, x, y: ar.ks_items(ar.xp.stack([x, y]), ar.xp.stack([ar.xp.stack([x, y]), ar.xp.stack([y, x])]),
                                      ar.asarray(perms), items, rows))
    both(lambda ar, x, y: ar.combine(x, y[:, :3], y, ar.asarray(perms), c_items, rows[:3], ar.asarray(c),
                                     ar.asarray(c_sh)))
    both(lambda ar, x, y: ar.dot([x, y] * 9, [x[0], y[1]] * 9, rows))
    both(lambda ar, x, y: ar.sum([x, y, x], rows))
    both(lambda ar, x, y: ar.tensor(x, y, rows))
    both(lambda ar, x, y: ar.gather([x, y] * 9))
    from cryptoffload.crypto.ckks.gpu.ring import shoup

    lc = np.random.default_rng(n).integers(0, 2 ** 40, size=(3, 2, ring.rows)).astype(np.uint64) % ring.q
    both(lambda ar, x, y: ar.lincomb(ar.xp.stack([x, y]), ar.asarray(lc), ar.asarray(shoup(lc, ring.q)), rows))


def _run(be):
    be.keygen([1, 5, -3], conjugation=True)
    x = np.linspace(-1, 1, be.slots)
    c = be.encrypt(x)
    m = be.rescale(be.relinearize(be.mul(c, be.rotate(c, 5))))
    pt = be.encode(x, like=m)
    sums = be.mul_plain_sums([[(m, pt), (m, pt)], [(m, pt)]])
    outs = [c, m, *be.rotate_many(m, [1, -3, 4]), be.conjugate(m), be.mul_plain(m, pt), *sums,
            *be.rescale_many(sums), *be.rotate_each([m, c], [5, -3]), be.add_many([m, m, m])]
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


def test_a_captured_he_cnn_inference_replays_as_a_direct_run():
    """The CUDA graph of one whole HE-CNN inference, replayed on another image, gives the
    direct run's ciphertext bit for bit, and the twin's launch count is the GPU's."""
    from cryptoffload.apps.he_cnn.data import load_mnist
    from cryptoffload.apps.he_cnn.infer import client_and_plan
    from cryptoffload.apps.he_cnn.model import load_model
    from cryptoffload.apps.he_cnn.train import DEFAULT_WEIGHTS

    model, data = load_model(DEFAULT_WEIGHTS), load_mnist(None)
    be, plan, _ = client_and_plan(model, "gpu", DEFAULT_PARAMS)
    pw = plan.prepare(be)
    prog = be.capture(lambda c: plan.run(be, c, pw), be.encrypt(plan.pack_image(data.x_test[0])))
    ct = be.encrypt(plan.pack_image(data.x_test[1]))
    got, want = prog(ct), plan.run(be, ct, pw)
    assert np.array_equal(be.scheme.ar.to_host(got.raw.data), be.scheme.ar.to_host(want.raw.data))
    assert prog.launches <= 500
