"""The BSGS kernel: the matrix-vector product on a backend, hoisted or not, and on the recording
backend the rotations and products its description promises."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoffload.crypto.ckks import RecordingBackend
from cryptoffload.crypto.ckks.batched import BatchedOps
from cryptoffload.crypto.ckks.bsgs import baby_rotations, bsgs_product, giant_sums, prerotate, rotate_slots

from .ckks_helpers import PARAMS, close


def test_rotate_slots_is_the_ckks_left_rotation() -> None:
    v = np.arange(8)
    assert list(rotate_slots(v, 3)[:3]) == [3, 4, 5]
    assert list(rotate_slots(v, -1)[:2]) == [7, 0]
    assert list(prerotate(v, 3)[:4]) == [5, 6, 7, 0]


class _PlainOps(BatchedOps):
    """The kernel's ops on numpy vectors (rescale: nothing to do); the batched ops are the loops."""

    mul_plain = staticmethod(np.multiply)
    add = staticmethod(np.add)
    rotate = staticmethod(rotate_slots)

    @staticmethod
    def rotate_many(x, steps):
        return [rotate_slots(x, s) for s in steps]

    @staticmethod
    def rescale(v):
        return v


_Plain = _PlainOps()


def _plaintexts(m: np.ndarray, g: int, G: int) -> list[list[np.ndarray]]:
    n = m.shape[0]
    k = np.arange(n)
    return [[prerotate(m[k, (k + g * j + i) % n], g * j) for i in range(g)] for j in range(G)]


@settings(max_examples=40, deadline=None)
@given(log_n=st.integers(1, 6), data=st.data())
def test_product_is_the_matrix_vector_product(log_n: int, data: st.DataObject) -> None:
    n = 1 << log_n
    g = 1 << data.draw(st.integers(0, log_n))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    m, x = rng.normal(size=(n, n)), rng.normal(size=n)
    got = bsgs_product(_Plain, x, _plaintexts(m, g, n // g), list(range(g)), [g * j for j in range(n // g)])
    assert np.allclose(got, m @ x)


def test_product_on_the_emulator_and_its_recorded_ops(emu) -> None:
    """A dense 64 x 64 block (zero diagonals skipped) on encrypted slots, and what it costs:
    the baby rotations in one rotate_many, one rescale and one rotation per non-empty giant step."""
    n, g = 64, 8
    rng = np.random.default_rng(3)
    m = rng.uniform(-1, 1, (n, n))
    m[:, ::9] = 0.0                                           # some diagonals all zero
    x = rng.uniform(-1, 1, n)
    steps = [*range(1, g), *range(g, n, g)]
    emu.add_rotation_keys(steps)
    period = np.tile(x, PARAMS.slots // n)                    # rotations are cyclic over all slots
    ct = emu.encrypt(period)
    pts = [[emu.encode(np.tile(p, PARAMS.slots // n), like=ct) if np.any(p) else None for p in row]
           for row in _plaintexts(m, g, n // g)]
    rec = RecordingBackend(emu)
    out = bsgs_product(rec, ct, pts, list(range(g)), [g * j for j in range(n // g)])
    close(emu.decrypt(out)[:n], m @ x, 1e-9)
    counts = rec.summary()["counts"]
    used = {i for row in pts for i, p in enumerate(row) if p is not None and i}
    assert counts["rotate"] == len(used) + (n // g - 1) and counts["rescale"] == n // g
    assert counts["mul_plain"] == sum(p is not None for row in pts for p in row)
    assert rec.summary()["calls"]["rotate"] == counts["rotate"]  # every step has its own key
    assert rec.level(out) == PARAMS.levels - 1


def test_baby_rotations_hoisted_or_one_by_one(emu) -> None:
    ct = emu.encrypt(np.arange(8.0))
    for hoisted in (True, False):
        rec = RecordingBackend(emu)
        outs = baby_rotations(rec, ct, [0, 1, 2, 4], hoisted=hoisted)
        assert outs[0] is ct and [emu.decrypt(o)[0] for o in outs[1:]] == [1.0, 2.0, 4.0]
        assert rec.summary()["calls"]["rotate"] == 3


def test_giant_sums_of_a_subset_and_of_nothing() -> None:
    x = np.arange(4.0)
    rows = [[np.ones(4)], [None], [2 * np.ones(4)]]
    assert giant_sums(_Plain, [x], rows, [0, 1, 2], [1]) is None
    assert np.allclose(giant_sums(_Plain, [x], rows, [0, 1, 2], [2, 0]), rotate_slots(2 * x, 2) + x)
