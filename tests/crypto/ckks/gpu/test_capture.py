"""A captured program replays on new inputs exactly as a direct run computes them (on the twin:
the recorded launches; on a GPU: a CUDA graph) -- proof that every piece of device work of the
program goes through the launch code and nothing depends on the encrypted values."""

from __future__ import annotations

import numpy as np
import pytest

from cryptoffload.crypto.ckks import make_backend
from cryptoffload.crypto.ckks.bsgs import bsgs_product
from cryptoffload.crypto.ckks.errors import CkksError

from .gpu_helpers import PARAMS, close


@pytest.fixture(scope="module")
def be(host_lib):
    b = make_backend("gpu-twin", PARAMS, insecure_study=True)
    b.keygen([1, 2, 3, 4, 8, 12])
    return b


def _program(be, weights, example):
    """Every kind of op the HE-CNN plans use: a hoisted BSGS product (batched inner sums,
    rescales, giant rotations, sum), a bias (encoded beforehand, as a plan's prepare does), a
    square with relinearisation, a fold."""
    babies, giants = [0, 1, 2, 3], [0, 4, 8, 12]
    bias = be.encode(np.full(be.slots, 0.125), like=bsgs_product(be, example, weights, babies, giants))

    def run(ct):
        x = be.add_plain(bsgs_product(be, ct, weights, babies, giants), bias)
        x = be.rescale(be.relinearize(be.mul(x, x)))
        return be.add(x, be.rotate(x, 2))
    return run


def _weights(be):
    rng = np.random.default_rng(7)
    return [[be.encode(rng.uniform(-0.3, 0.3, be.slots)) if (i + j) % 3 else None for i in range(4)]
            for j in range(4)]


def test_a_replay_is_the_direct_run_bit_for_bit(be):
    rng = np.random.default_rng(1)
    example = be.encrypt(rng.uniform(-1, 1, be.slots))
    fn = _program(be, _weights(be), example)
    prog = be.capture(fn, example)
    assert prog.launches > 0
    for _ in range(2):
        x = rng.uniform(-1, 1, be.slots)
        ct = be.encrypt(x)
        got, want = prog(ct), fn(ct)
        assert np.array_equal(be.scheme.ar.to_host(got.raw.data), be.scheme.ar.to_host(want.raw.data))
        assert be.level(got) == be.level(want) and be.scale(got) == be.scale(want)
        close(be.decrypt(got), be.decrypt(want))


def test_replays_do_not_share_their_outputs(be):
    prog = be.capture(lambda c: be.rotate(c, 1), be.encrypt(np.ones(be.slots)))
    a = prog(be.encrypt(np.arange(be.slots) / be.slots))
    b = prog(be.encrypt(np.zeros(be.slots)))
    close(be.decrypt(a), np.roll(np.arange(be.slots) / be.slots, -1))
    close(be.decrypt(b), np.zeros(be.slots))


def test_an_input_of_another_shape_is_refused(be):
    prog = be.capture(lambda c: be.rotate(c, 1), be.encrypt(np.ones(be.slots)))
    low = be.rescale(be.mul_plain(be.encrypt(np.ones(be.slots)), be.encode(np.ones(be.slots))))
    with pytest.raises(CkksError, match="captured program: input 0 .* capture again"):
        prog(low)
    with pytest.raises(CkksError, match="2 inputs"):
        prog(low, low)


def test_a_program_that_encodes_while_captured_is_refused(be):
    """Encoding inside the program copies data from the host at every run: a CUDA graph cannot
    hold that, and a replay would reuse the first run's plaintext, so the capture says so."""
    ct = be.encrypt(np.ones(be.slots))
    with pytest.raises(CkksError, match="copies data from the host .* encode its plaintexts before"):
        be.capture(lambda c: be.add_plain(c, be.encode(np.ones(be.slots), like=c)), ct)


def test_kernel_sets_without_the_launch_code_cannot_capture():
    b = make_backend("gpu-twin", PARAMS, insecure_study=True, kernels="numba")
    b.keygen([1])
    with pytest.raises(CkksError, match="kernels='cuda-host'"):
        b.capture(lambda c: b.rotate(c, 1), b.encrypt(np.ones(b.slots)))
