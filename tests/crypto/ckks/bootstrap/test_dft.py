"""The special FFT factored into stages (bootstrap/dft.py), in plaintext: the product of the stages
equals the slot matrix built from numpy's DFT; every stage is the product of its butterfly layers
built here from their definition; the grouping and strides are OpenFHE's, as the workloads
model has them; sparse widths hold two copies of the transform."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoffload.crypto.ckks.bootstrap import dft
from cryptoffload.crypto.ckks.errors import CkksError
from cryptoffload.workloads.bsgs import bootstrap_stages, select_layers


def slot_matrix_by_definition(n: int) -> np.ndarray:
    """``U[j, i] = exp(2 pi i 5^j i / 4n)`` directly (a second reference beside numpy's DFT)."""
    j = np.array([pow(5, k, 4 * n) for k in range(n)])[:, None]
    return np.exp(2j * np.pi * (j * np.arange(n)[None, :] % (4 * n)) / (4 * n))


def butterfly(n: int, length: int, inverse: bool) -> np.ndarray:
    """One layer as a dense matrix, from HEAAN's butterfly written out."""
    m = np.zeros((n, n), dtype=np.complex128)
    h = length // 2
    for start in range(0, n, length):
        for u in range(h):
            w = np.exp(2j * np.pi * (pow(5, u, 4 * length)) / (4 * length))
            a, b = start + u, start + u + h
            if inverse:
                m[a, a], m[a, b] = 1, 1
                m[b, a], m[b, b] = np.conj(w), -np.conj(w)
            else:
                m[a, a], m[a, b] = 1, w
                m[b, a], m[b, b] = 1, -w
    return m


def product(stages: list[dft.Stage]) -> np.ndarray:
    width = stages[0].width
    m = np.eye(width, dtype=np.complex128)
    for s in stages:
        m = dft.dense(s.diagonals, width) @ m
    return m


def test_numpy_dft_gives_the_slot_matrix():
    for n in (2, 8, 64):
        assert np.allclose(dft.slot_matrix(n), slot_matrix_by_definition(n), atol=1e-12)


@pytest.mark.parametrize("n", [2, 4, 16, 128, 512])
@pytest.mark.parametrize("budget", [1, 2, 3, 4])
def test_the_stages_multiply_to_the_inverse_and_the_forward_transform(n, budget):
    u = dft.slot_matrix(n)
    br = np.eye(n)[dft.bit_reverse_indices(n)]
    cts = dft.stages(dft.COEFF_TO_SLOT, n, budget)
    stc = dft.stages(dft.SLOT_TO_COEFF, n, budget)
    assert len(cts) == len(stc) == min(budget, max(1, n.bit_length() - 1))
    # CoeffToSlot: the bit-reversed coefficients (without HEAAN's 1/n); SlotToCoeff: back
    assert np.allclose(product(cts) / n, br @ np.linalg.inv(u), atol=1e-9)
    assert np.allclose(product(stc), u @ br, atol=1e-9)


@pytest.mark.parametrize("n,budget", [(64, 3), (256, 2), (256, 4)])
def test_each_stage_is_the_product_of_its_butterfly_layers(n, budget):
    log_n = n.bit_length() - 1
    layers, rows, rem = select_layers(log_n, budget)
    for transform, inverse in ((dft.COEFF_TO_SLOT, True), (dft.SLOT_TO_COEFF, False)):
        done = []
        for s in dft.stages(transform, n, budget):
            halves = [s.stride << k for k in range(s.layers)]
            order = sorted(halves, reverse=inverse)          # inverse layers: largest first
            want = np.eye(n, dtype=np.complex128)
            for h in order:
                want = butterfly(n, 2 * h, inverse) @ want
            assert np.allclose(dft.dense(s.diagonals, n), want, atol=1e-12)
            offsets = sorted({(k + n // 2 - 1) % n - n // 2 + 1 for k in s.diagonals})
            assert all(o % s.stride == 0 for o in offsets) and len(offsets) <= 2 ** (s.layers + 1) - 1
            done += halves
        assert sorted(done) == [1 << k for k in range(log_n)]    # every layer exactly once


@pytest.mark.parametrize("slots", [1 << 10, 1 << 13])
@pytest.mark.parametrize("budget,dim1", [((3, 3), (0, 0)), ((4, 2), (8, 4)), ((2, 2), (16, 0)), ((5, 5), (0, 2))])
def test_grouping_strides_and_baby_steps_are_the_workloads_models(slots, budget, dim1):
    """The stage structure the multi-device model prices (workloads/bsgs.py) is what runs."""
    model = [(st.transform, st.layers, st.shape.stride, st.shape.baby) for st in bootstrap_stages(slots, budget, dim1)]
    ours = [(s.transform, s.layers, s.stride, s.baby)
            for name, b, d in ((dft.COEFF_TO_SLOT, budget[0], dim1[0]), (dft.SLOT_TO_COEFF, budget[1], dim1[1]))
            for s in dft.stages(name, slots, b, d)]
    assert ours == model


@settings(max_examples=20, deadline=None)
@given(log_n=st.integers(1, 16), budget=st.integers(1, 17))
def test_layer_selection_agrees_with_the_model(log_n, budget):
    assert dft.select_layers(log_n, budget) == select_layers(log_n, budget)


@pytest.mark.parametrize("n,budget", [(8, 2), (64, 3), (128, 1)])
def test_sparse_widths_carry_two_copies_of_the_transform(n, budget):
    """Over width 2n each stage is the n-slot stage on both copies (block diagonal), so one
    ciphertext of repeated n-slot vectors carries both halves a sparse bootstrap needs."""
    u = dft.slot_matrix(n)
    br = np.eye(n)[dft.bit_reverse_indices(n)]
    cts = dft.stages(dft.COEFF_TO_SLOT, n, budget, sparse=True)
    m = product(cts) / n
    block = br @ np.linalg.inv(u)
    assert np.allclose(m[:n, :n], block, atol=1e-9) and np.allclose(m[n:, n:], block, atol=1e-9)
    assert np.allclose(m[:n, n:], 0, atol=1e-12) and np.allclose(m[n:, :n], 0, atol=1e-12)
    z = np.random.default_rng(n).normal(size=n) + 0j
    assert np.allclose(dft.transform(cts, np.tile(z, 2)), np.tile(n * block @ z, 2), atol=1e-9)


def test_apply_is_the_dense_product():
    rng = np.random.default_rng(3)
    for s in dft.stages(dft.SLOT_TO_COEFF, 32, 2):
        x = rng.normal(size=32) + 1j * rng.normal(size=32)
        assert np.allclose(dft.apply(s.diagonals, x), dft.dense(s.diagonals, 32) @ x)


def test_bad_slot_counts_and_budgets_are_refused():
    with pytest.raises(CkksError, match="power-of-two"):
        dft.stages(dft.COEFF_TO_SLOT, 12, 2)
    with pytest.raises(CkksError, match="at least 1"):
        dft.select_layers(4, 0)
