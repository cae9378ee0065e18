"""BSGS workload: the evaluation order is the matrix-vector product, splits cover the work
exactly once, and bootstrapping's stages follow OpenFHE's layer-collapsing rule."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoffload.errors import ConfigError
from cryptoffload.workloads.bsgs import (
    STRATEGIES, BsgsShape, bootstrap_stages, bsgs_plain, build_dag, diagonals_of, giant_blocks, matrix_of,
    reduction_tree, select_layers, sent_batches, split)


@settings(max_examples=60, deadline=None)
@given(n=st.sampled_from([4, 8, 16, 32]), data=st.data())
def test_dense_bsgs_equals_matrix_vector(n: int, data: st.DataObject) -> None:
    bs = data.draw(st.integers(1, n))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    m, x = rng.normal(size=(n, n)), rng.normal(size=n)
    shape = BsgsShape(n, bs, slots=n)
    d = diagonals_of(m, shape)
    assert np.allclose(matrix_of(d, shape), m)
    assert np.allclose(bsgs_plain(d, shape, x), m @ x)


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_sparse_bsgs_equals_its_matrix(data: st.DataObject) -> None:
    n = 64
    stride = data.draw(st.sampled_from([1, 2, 4, 8]))
    c = data.draw(st.integers(1, 15))
    bs = data.draw(st.integers(1, c))
    offset = -data.draw(st.integers(0, c - 1)) * stride
    shape = BsgsShape(c, bs, slots=n, stride=stride, offset=offset)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    d = rng.normal(size=(c, n))
    x = rng.normal(size=n)
    assert np.allclose(bsgs_plain(d, shape, x), matrix_of(d, shape) @ x)


def test_op_counts_of_one_device() -> None:
    shape = BsgsShape(64, 8, slots=64)
    assert shape.giant == 8
    assert shape.op_counts() == {"baby_rotations": 7, "giant_rotations": 7, "pmul": 64, "add": 63, "rescale": 8}
    dag = build_dag(split(shape, 1))
    c = dag.counts()
    assert (c["rotate"], c["pmul"], c["add"], c["rescale"], c["send"]) == (14, 64, 63, 8, 0)
    # partial last giant step: 10 diagonals, bs 4 -> giant steps of 4, 4, 2
    assert [len(BsgsShape(10, 4).babies_of(j)) for j in range(3)] == [4, 4, 2]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 8, 16])
def test_split_covers_every_diagonal_once(strategy: str, n: int) -> None:
    shape = BsgsShape(50, 6, slots=64)
    sp = split(shape, n, strategy)
    giants = sorted(j for s in sp.shares for j in s.giant)
    assert giants == list(range(shape.giant))
    dag = build_dag(sp)
    assert dag.counts()["pmul"] == 50
    assert dag.ops[dag.result].device == 0
    # every device that evaluates giant steps has every baby step it uses, computed or received
    have = {s.device: set(s.baby) for s in sp.shares}
    for src, dst, i in sp.baby_sends:
        assert i in have[src] or src == 0
        have[dst].add(i)
    for s in sp.shares:
        if s.giant:
            assert set(range(1, len(shape.babies_of(s.giant[0])))) <= have[s.device]
    rotations = dag.counts()["rotate"]
    giant_rot = sum(1 for j in range(shape.giant) if shape.giant_rotation(j))
    if strategy == "replicate" or n == 1:   # each active device rotates what its giant steps use
        babies = sum(len(shape.babies_of(s.giant[0])) - 1 for s in sp.shares if s.giant)
    else:                                   # computed once
        babies = shape.baby - 1
    assert rotations == giant_rot + babies


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_sent_batches_partition_what_a_device_rotates_and_sends(strategy: str, n: int) -> None:
    """Batched: every baby step a device rotates and sends is in exactly one group, the group's
    baby steps go to the same devices; alone: one group per such baby step."""
    sp = split(BsgsShape(50, 6, slots=64), n, strategy)
    for share in sp.shares:
        d = share.device
        dests: dict[int, set[int]] = {}
        for src, dst, i in sp.baby_sends:
            if src == d and i in share.baby:
                dests.setdefault(i, set()).add(dst)
        groups = sent_batches(sp, d)
        assert sorted(i for g in groups for i in g) == sorted(dests)
        assert all(len({frozenset(dests[i]) for i in g}) == 1 for g in groups)
        assert len({frozenset(dests[g[0]]) for g in groups}) == len(groups)
        assert sent_batches(sp, d, batched=False) == [(i,) for i in share.baby if i in dests]
    if strategy == "broadcast" and n == 2:     # each device sends all its baby steps to the other
        assert sent_batches(sp, 0) == [(1, 3, 5)] and sent_batches(sp, 1) == [(2, 4)]


def test_reduction_tree_is_log2_rounds() -> None:
    assert reduction_tree([0]) == ()
    assert len(reduction_tree(list(range(16)))) == 4
    assert len(reduction_tree(list(range(5)))) == 3
    seen = {0}
    for rnd in reduction_tree(list(range(13))):
        for src, dst in rnd:
            assert dst in seen or dst < src
            seen.add(src)
    assert seen == set(range(13))


def test_giant_blocks_are_balanced() -> None:
    blocks = giant_blocks(10, 4)
    assert [len(b) for b in blocks] == [3, 3, 2, 2]
    assert [j for b in blocks for j in b] == list(range(10))


@pytest.mark.parametrize("kw, message", [
    ({"diagonals": 8, "baby": 0}, "baby-step size bs must be a positive integer"),
    ({"diagonals": 8, "baby": 9}, "between 1 and C = 8"),
    ({"diagonals": 0, "baby": 1}, "number of diagonals C must be a positive integer"),
    ({"diagonals": 8, "baby": 2.5}, "baby-step size bs must be a positive integer"),
])
def test_bad_shape(kw: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        BsgsShape(**kw)


@pytest.mark.parametrize("n", [0, -1, 2.0, True])
def test_bad_device_count(n: object) -> None:
    with pytest.raises(ConfigError, match="number of devices N must be a positive integer"):
        split(BsgsShape(8, 2), n)  # type: ignore[arg-type]


def test_unknown_strategy() -> None:
    with pytest.raises(ConfigError, match="unknown BSGS strategy 'gather'"):
        split(BsgsShape(8, 2), 2, "gather")


@pytest.mark.parametrize("log_slots, budget, want", [
    (15, 1, (15, 1, 0)), (15, 3, (5, 3, 0)), (15, 4, (4, 3, 3)), (12, 3, (4, 3, 0)), (12, 5, (2, 4, 4)),
])
def test_select_layers_uses_exactly_the_budget(log_slots: int, budget: int, want: tuple) -> None:
    layers, rows, rem = select_layers(log_slots, budget)
    assert (layers, rows, rem) == want
    assert rows * layers + rem == log_slots
    assert rows + (rem != 0) == min(budget, log_slots) or layers == 1


def test_bootstrap_stages_follow_openfhe() -> None:
    """OpenFHE 1.6.1's structure, as benchmarks/bench_bootstrap_openfhe.py read it off the
    library (its rotation keys and call stacks): 2^15 slots, budget (3, 3) -> 5 layers per
    stage; 2048 slots, budget (3, 3) -> 4, 4, then a 3-layer remainder, which CoeffToSlot runs
    last at stride 1 with the default baby step whatever dim1 says."""
    stages = bootstrap_stages(2**15, (3, 3))
    assert [s.transform for s in stages] == ["CoeffToSlot"] * 3 + ["SlotToCoeff"] * 3
    assert all(s.shape.diagonals == 63 and s.shape.baby == 16 for s in stages)
    assert [s.shape.stride for s in stages[:3]] == [1024, 32, 1]
    assert [s.shape.stride for s in stages[3:]] == [1, 32, 1024]
    assert [s.shape.level for s in stages[:3]] == [30, 29, 28]
    assert [s.shape.level for s in stages[3:]] == [4, 3, 2]
    small = bootstrap_stages(2048, (3, 3), (4, 4), top_level=21, levels_after=2)
    assert [(s.layers, s.shape.stride, s.shape.baby) for s in small[:3]] == [(4, 128, 4), (4, 8, 4), (3, 1, 8)]
    assert [(s.layers, s.shape.stride) for s in small[3:]] == [(4, 1), (4, 16), (3, 256)]
    # the key set EvalBootstrapKeyGen made for 2048 slots, budget (3, 3), dim1 (4, 4)
    keys = sorted(set().union(*(s.shape.rotation_steps() for s in small)))
    assert keys == [1, 2, 3, 4, 5, 6, 7, 8, 16, 24, 32, 48, 64, 128, 256, 384, 512, 768, 1024, 1280, 1536, 1792]
    # one rescale per stage, Horner giant steps: gs - 1 rotations
    c = small[0].shape.op_counts()
    assert c["rescale"] == 1 and c["giant_rotations"] == small[0].shape.giant - 1
    # a budget of one is the dense transform of Table 1: C = slots
    assert bootstrap_stages(2**15, (1, 1))[0].shape.diagonals == 2**15
    with pytest.raises(ConfigError, match="power of two"):
        bootstrap_stages(1000)
    with pytest.raises(ConfigError, match="dim1 for CoeffToSlot must be a power of two"):
        bootstrap_stages(2048, (3, 3), (3, 3))


def test_every_stage_is_a_sparse_product_of_its_diagonals() -> None:
    slots = 64
    rng = np.random.default_rng(0)
    x = rng.normal(size=slots)
    for stage in bootstrap_stages(slots, (2, 2)):
        d = rng.normal(size=(stage.shape.diagonals, slots))
        assert np.allclose(bsgs_plain(d, stage.shape, x), matrix_of(d, stage.shape) @ x)
