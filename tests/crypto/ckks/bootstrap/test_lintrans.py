"""A stage's BSGS evaluation (bootstrap/lintrans.py) on plain slot vectors: it computes the
stage's matrix-vector product, its rotations are the grid's, and its op counts are the
workloads model's (bsgs.bootstrap_stages) except where diagonals coincide modulo the slots."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pytest

from cryptoffload.crypto.ckks.batched import BatchedOps
from cryptoffload.crypto.ckks.bootstrap import dft, lintrans
from cryptoffload.workloads.bsgs import bootstrap_stages


class PlainSlots(BatchedOps):
    """Slot vectors as ciphertexts and plaintexts: rotations are rolls, products are products.
    Records every rotation step, so a test sees what a backend would be asked."""

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self.steps: list[int] = []

    def encode_for_rotations(self, values: np.ndarray, *, level: int, scale: float) -> np.ndarray:
        return np.asarray(values, dtype=np.complex128)

    def rotate(self, ct: np.ndarray, steps: int) -> np.ndarray:
        assert abs(steps) < self.slots
        self.steps.append(steps)
        return np.roll(ct, -steps)

    def rotate_many(self, ct: np.ndarray, steps: Sequence[int]) -> list[np.ndarray]:
        return [self.rotate(ct, s) for s in steps]

    def mul_plain(self, ct: np.ndarray, pt: np.ndarray) -> np.ndarray:
        return ct * pt

    def add(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return a + b

    def rescale(self, ct: np.ndarray) -> np.ndarray:
        return ct


@pytest.mark.parametrize("n,budget,dim1", [(64, 3, 0), (64, 2, 4), (256, 3, 2), (32, 1, 0), (128, 4, 8)])
@pytest.mark.parametrize("sparse", [False, True])
def test_a_stage_on_slots_is_its_matrix_vector_product(n, budget, dim1, sparse):
    rng = np.random.default_rng(n + budget)
    slots = 4 * n                                  # the ciphertext holds the stage's width repeated
    ev = PlainSlots(slots)
    for transform in (dft.COEFF_TO_SLOT, dft.SLOT_TO_COEFF):
        for st in dft.stages(transform, n, budget, dim1, sparse=sparse):
            w = st.width
            x = rng.normal(size=w) + 1j * rng.normal(size=w)
            factor = rng.normal(size=w) + 1j * rng.normal(size=w)   # a row scaling, as the sparse halves
            enc = lintrans.encode(ev, st, level=0, scale=1.0, factor=factor)
            ev.steps.clear()
            got = lintrans.apply(ev, np.tile(x, slots // w), enc)
            want = factor * dft.apply(st.diagonals, x)
            assert np.allclose(got, np.tile(want, slots // w), atol=1e-9)
            assert {s for s in ev.steps if s} == enc.grid.rotation_steps
            counts = enc.grid.op_counts()
            assert counts["baby_rotations"] + counts["giant_rotations"] == len([s for s in ev.steps if s])
            assert counts["pmul"] == len(st.diagonals)


def test_a_share_of_the_giant_steps_adds_up_to_the_whole_product():
    """What a Dask split does: each worker sums its giant steps unrescaled, then one rescale."""
    ev = PlainSlots(256)
    st = dft.stages(dft.SLOT_TO_COEFF, 256, 2)[0]
    enc = lintrans.encode(ev, st, level=0, scale=1.0)
    x = np.random.default_rng(1).normal(size=256) + 0j
    giants = range(len(enc.giant))
    parts = [lintrans.apply(ev, x, enc, [i for i in giants if i % 2 == w], rescale=False) for w in (0, 1)]
    assert np.allclose(parts[0] + parts[1], lintrans.apply(ev, x, enc))


def _model_counts(slots: int, budget: tuple[int, int], dim1: tuple[int, int]) -> list[dict[str, int]]:
    return [st.shape.op_counts() for st in bootstrap_stages(slots, budget, dim1)]


@pytest.mark.parametrize("slots", [1 << 9, 1 << 12])
@pytest.mark.parametrize("budget,dim1", [((3, 3), (0, 0)), ((2, 2), (0, 0)), ((4, 3), (4, 8)), ((3, 2), (2, 16))])
def test_op_counts_are_the_models_except_where_diagonals_wrap(slots, budget, dim1):
    """Equal for every stage whose offsets stay inside the slots. The stage holding the
    butterfly of half-distance slots/2 (the first CoeffToSlot stage, the last SlotToCoeff one) has
    offsets k * stride with k and k - 2^t the same rotation modulo the slots: its 2^(t+1) - 1
    diagonals are 2^t, which the model (written from OpenFHE's plaintext count) does not merge."""
    model = _model_counts(slots, budget, dim1)
    ours = [lintrans.grid(s).op_counts()
            for name, b, d in ((dft.COEFF_TO_SLOT, budget[0], dim1[0]), (dft.SLOT_TO_COEFF, budget[1], dim1[1]))
            for s in dft.stages(name, slots, b, d)]
    stages = [s for name, b, d in ((dft.COEFF_TO_SLOT, budget[0], dim1[0]), (dft.SLOT_TO_COEFF, budget[1], dim1[1]))
              for s in dft.stages(name, slots, b, d)]
    assert len(ours) == len(model)
    for st, got, want in zip(stages, ours, model):
        wraps = st.stride << st.layers == slots
        if not wraps:
            assert got == want
        else:
            assert got["pmul"] == 1 << st.layers < want["pmul"] == (1 << (st.layers + 1)) - 1
            assert got["baby_rotations"] == want["baby_rotations"] and got["rescale"] == want["rescale"] == 1


def test_the_grid_puts_the_zero_rotation_among_the_baby_and_the_giant_steps():
    for st in dft.stages(dft.COEFF_TO_SLOT, 1 << 10, 3) + dft.stages(dft.SLOT_TO_COEFF, 1 << 10, 3, 4):
        gr = lintrans.grid(st)
        assert 0 in gr.baby and 0 in gr.giant
        assert all(abs(s) <= st.width // 2 for s in gr.baby + gr.giant)
        cells: list[Any] = [k for row in gr.cells for k in row if k is not None]
        assert sorted(cells) == sorted(st.diagonals)          # every diagonal in exactly one cell
