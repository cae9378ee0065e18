"""The HE-CNN server's memory bounds: a session's bound from the parameters and the plan, the
budget's reserve/settle/free arithmetic, refusals of budgets too small for one session."""

from __future__ import annotations

import pytest

from cryptoffload.apps.he_cnn.budget import MIB, MemoryBudget, release_memory, session_bounds
from cryptoffload.apps.he_cnn.model import load_model
from cryptoffload.apps.he_cnn.packing import PerChannelPlan
from cryptoffload.apps.he_cnn.train import DEFAULT_WEIGHTS
from cryptoffload.crypto.ckks import DEFAULT_PARAMS
from cryptoffload.errors import ConfigError


def test_session_bound_at_the_default_parameters():
    """28 Galois keys + relinearisation key of 6 x 2 x 7 x 16384 words, the public key, the
    context kept, 169 plaintexts of weights: ~0.3 GB of keys, ~0.7 GB in all."""
    plan = PerChannelPlan(load_model(DEFAULT_WEIGHTS), DEFAULT_PARAMS)
    b = session_bounds(DEFAULT_PARAMS, plan, MIB)
    assert len(plan.rotation_steps()) == 28
    assert b.keys == 2 * 16384 * 7 * 8 + 29 * 6 * 2 * 7 * 16384 * 8
    assert b.context == b.keys + MIB
    assert b.weights == 90_963_968          # what PerChannelPlan.prepare encodes on SEAL too
    assert 0.6e9 < b.total < 0.8e9


def test_reserve_settle_free():
    budget = MemoryBudget(total=250, per_session=100, need=90)
    assert budget.reserve() and budget.reserve()
    assert not budget.reserve()             # 200 reserved + 100 > 250
    budget.settle(60)                       # opened, holds 60
    budget.settle(0)                        # refused: nothing held
    assert budget.used == 60 and budget.reserve() and budget.used == 160
    budget.settle(500)                      # never charged beyond the reservation
    assert budget.used == 160
    budget.free(100)
    assert budget.used == 60


def test_budgets_too_small_refused():
    with pytest.raises(ConfigError, match=r"--session-memory 1 MiB is below what one session needs .*\(2 MiB"):
        MemoryBudget(total=10 * MIB, per_session=MIB, need=2 * MIB)
    with pytest.raises(ConfigError, match="--memory-budget 1 MiB cannot hold one session"):
        MemoryBudget(total=MIB, per_session=2 * MIB, need=MIB)


def test_release_memory_collects_cycles():
    class Node:
        pass
    a, b = Node(), Node()
    a.other, b.other = b, a
    del a, b
    assert release_memory() >= 2
