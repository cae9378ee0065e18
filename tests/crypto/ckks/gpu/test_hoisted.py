"""Double hoisting (gpu/hoisted.py): the inner sums of a BSGS product computed with one
decomposition and one ModDown per sum equal the same sums made of single rotations and products;
plaintexts over Q and P as 32-bit words multiply as ordinary ones (dot32_k against dot_k, and the
GPU's order against the twin's); a step without a key of its own falls back to single ops; the
key store holds 32-bit words and never two copies of a key."""

from __future__ import annotations

import numpy as np
import pytest

from cryptoffload.crypto.ckks import make_backend
from cryptoffload.crypto.ckks.gpu.arith import Arith
from cryptoffload.crypto.ckks.gpu.chain import prime_chain
from cryptoffload.crypto.ckks.gpu.keystore import KEY_DTYPE, EvalKeys
from cryptoffload.crypto.ckks.gpu.ring import RnsRing

from .gpu_helpers import PARAMS, close
from .test_arith import gpu_ordered

STEPS = [0, 1, -2, 5]


@pytest.fixture(scope="module")
def twin():
    b = make_backend("gpu-twin", PARAMS, insecure_study=True)
    b.keygen([1, -2, 5, 4, -1])
    return b


def rows_of(b, rng, level, extended):
    enc = b.encode_for_rotations if extended else b.encode_complex
    vals = [[rng.uniform(-1, 1, b.slots) + 1j * rng.uniform(-1, 1, b.slots) for _ in STEPS] for _ in range(3)]
    pts = [[enc(v, level=level, scale=2.0 ** 20) for v in row] for row in vals]
    pts[1][0] = pts[2][2] = None                               # cells without a diagonal
    return vals, pts


def test_double_hoisted_sums_equal_the_single_ops(twin):
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, twin.slots) + 1j * rng.uniform(-1, 1, twin.slots)
    ct = twin.encrypt_complex(x, level=2)
    vals, ext = rows_of(twin, np.random.default_rng(10), 2, True)
    _, plain = rows_of(twin, np.random.default_rng(10), 2, False)    # the same values, ordinary plaintexts
    fused = twin.baby_giant_sums(ct, STEPS, ext)
    single = twin.baby_giant_sums(ct, STEPS, plain)
    for i, row in enumerate(vals):
        want = sum(v * np.roll(x, -s) for s, v, p in zip(STEPS, row, ext[i]) if p is not None)
        close(twin.decrypt_complex(fused[i]), want, 2.0 ** -10)
        close(twin.decrypt_complex(single[i]), want, 2.0 ** -10)
        assert twin.level(fused[i]) == 2 and twin.scale(fused[i]) == twin.scale(single[i])


def test_a_composed_step_falls_back_to_single_ops(twin):
    rng = np.random.default_rng(2)
    x = rng.uniform(-1, 1, twin.slots)
    ct = twin.encrypt(x, level=1)
    pt = twin.encode_for_rotations(np.ones(twin.slots), level=1, scale=2.0 ** 20)
    (out,) = twin.baby_giant_sums(ct, [3], [[pt]])                # 3 = 4 - 1: no key of its own
    close(twin.decrypt(out), np.roll(x, -3), 2.0 ** -10)


@pytest.mark.parametrize("kernels", ["cuda-host", "numba", "ref", "gpu-order"])
def test_32_bit_plaintexts_multiply_as_64_bit_ones(host_lib, monkeypatch, kernels):
    ring = RnsRing(prime_chain(PARAMS.poly_modulus_degree, PARAMS.coeff_mod_bits))
    rows = np.arange(4)
    rng = np.random.default_rng(3)
    q = ring.q[rows][:, None]
    cts = [np.stack([rng.integers(0, q, (4, ring.n)) for _ in range(2)]).astype(np.uint64) for _ in range(3)]
    pts = [rng.integers(0, q, (4, ring.n)).astype(np.uint64) for _ in range(3)]
    want = Arith(ring, np, "ref").dot(cts, pts, rows)
    ar = gpu_ordered(monkeypatch, ring) if kernels == "gpu-order" else Arith(ring, np, kernels)
    assert np.array_equal(ar.dot(cts, [p.astype(np.uint32) for p in pts], rows), want)
    # a plaintext with more rows (P's) multiplies by its first ones
    wide = [np.concatenate([p, p[:2]]).astype(np.uint32) for p in pts]
    assert np.array_equal(ar.dot(cts, wide, rows), want)


def test_the_key_store_holds_32_bit_words_once():
    ring = RnsRing(prime_chain(PARAMS.poly_modulus_degree, PARAMS.coeff_mod_bits))
    keys = EvalKeys(Arith(ring, np))
    shape = (2, 2, ring.rows, ring.n)
    keys.put("a", np.ones(shape, dtype=np.uint64))
    keys.reserve(3, shape)
    stack_before = keys.stack
    for name in ("b", "c", "d"):
        keys.put(name, np.full(shape, 7, dtype=np.uint64))
    assert keys.stack is stack_before and keys.stack.dtype == KEY_DTYPE      # written into its slots
    assert keys.nbytes == 4 * shape[0] * shape[1] * shape[2] * shape[3] * 4
    assert int(keys.get("c")[0, 0, 0, 0]) == 7 and keys.index("d") == 3
    keys.put("e", np.zeros(shape, dtype=np.uint32))                 # no room: waits, then one restack
    assert "e" in keys and keys.index("e") == 4 and len(keys) == 5
