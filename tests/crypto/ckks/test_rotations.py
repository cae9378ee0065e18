"""Rotation keys: NAF composition of steps without a key of their own, as SEAL does."""

from __future__ import annotations

import pytest

from cryptoffload.crypto.ckks import CkksError, naf, power_of_two_steps, rotation_plan


def test_naf_and_power_of_two_steps():
    for v in range(-300, 300):
        terms = naf(v)
        assert sum(terms) == v
        assert all(abs(t) & (abs(t) - 1) == 0 for t in terms)
    assert naf(3) == [-1, 4]
    assert power_of_two_steps(8) == [1, -1, 2, -2, 4]


def test_rotation_plan_composes_missing_steps(seal, emu):
    for b in (seal, emu):
        assert b.rotation_plan(5) == ["galois:5"]
        assert b.rotation_plan(3) == ["galois:-1", "galois:4"]  # NAF 3 = -1 + 4, as SEAL does
        assert b.rotation_plan(b.slots - 1) == ["galois:-1"]  # same Galois element as -1
        assert b.rotation_plan(0) == []
        with pytest.raises(CkksError, match="no Galois key for step 7"):
            b.rotation_plan(7)  # NAF 7 = -1 + 8, no key for 8
        with pytest.raises(CkksError, match="out of range"):
            b.rotation_plan(b.slots)


def test_rotation_plan_needs_no_backend():
    """The plan is a function of the key set alone (the recording backend plans without a library)."""
    keys = {1: "galois:1", 4: "galois:4", 4095: "galois:-1"}
    assert rotation_plan(3, keys, 4096) == ["galois:-1", "galois:4"]
    assert rotation_plan(-4095, keys, 4096) == ["galois:1"]  # same Galois element as 1
    assert rotation_plan(0, {}, 4096) == []
    with pytest.raises(CkksError, match=r"no Galois key for step 2 .*keys: \[-1, 1, 4\]"):
        rotation_plan(2, keys, 4096)
    with pytest.raises(CkksError, match="must be an integer"):
        rotation_plan(True, keys, 4096)
