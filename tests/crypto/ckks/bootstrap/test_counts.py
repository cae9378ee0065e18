"""A bootstrap's op counts from the recording backend, stage by stage, against the counts the
multi-device model (workloads/bsgs.bootstrap_stages) prices for the same plan -- equal where they
should be, and the one difference named -- and its kernel launches on the twin."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from cryptoffload.crypto.ckks import CkksParams, RecordingBackend, make_backend
from cryptoffload.crypto.ckks.bootstrap.plan import BootstrapPlan
from cryptoffload.crypto.ckks.gpu.dnum import params_for_dnum
from cryptoffload.workloads.bsgs import bootstrap_stages

#: the secure N = 2^16 chain of the benchmark (60 + 21 x 59 bits, dnum 3): shape only, nothing encrypted
SECURE = params_for_dnum(CkksParams(65536, (60,) + (59,) * 21 + (60,), 59), 3)
SMALL = params_for_dnum(CkksParams(1024, (60,) + (59,) * 17 + (60,), 59), 3)


def stage_counts(ops: list[dict]) -> dict[str, Counter]:
    out: dict[str, Counter] = {}
    for op in ops:
        phase = op["phase"]
        if phase.startswith(("CoeffToSlot:", "SlotToCoeff:")) and phase.split(":")[1].isdigit():
            out.setdefault(phase, Counter())[op["op"]] += 1
    return out


def traced(params: CkksParams, plan: BootstrapPlan) -> list[dict]:
    rec = RecordingBackend(params=params)
    rec.keygen([])
    rec.bootstrap_setup(plan)
    ct = rec.encrypt(np.zeros(4), level=1)
    start = len(rec.ops)
    rec.bootstrap(ct)
    return rec.ops[start:]


@pytest.mark.parametrize("plan", [BootstrapPlan((3, 3)), BootstrapPlan((4, 2), (8, 4)), BootstrapPlan((3, 3), (0, 0), 1 << 12)],
                         ids=["default", "dim1", "sparse"])
def test_stage_op_counts_are_the_models(plan):
    """Per stage: hoisted baby rotations + giant rotations, one product per diagonal, the adds
    between them, one rescale -- the model's ``op_counts``, except in the stage holding the
    butterfly of half-distance slots/2 (CoeffToSlot's first, SlotToCoeff's last): there offsets
    ``k`` and ``k - 2^t`` (times the stride) are one rotation modulo the slots, so its
    ``2^(t+1) - 1`` diagonals are ``2^t`` (fewer products and giant steps), and OpenFHE's count,
    which the model follows, is not. Sparse slots run over twice the width, where a giant step of
    ``n`` slots is a rotation the model's ``n``-slot view does not count."""
    slots = plan.slots_for(SECURE.poly_modulus_degree)
    counts = stage_counts(traced(SECURE, plan))
    model = bootstrap_stages(slots, plan.level_budget, plan.dim1)
    assert len(counts) == len(model)
    for st in model:
        got = counts[f"{st.transform}:{st.index}"]
        want = st.shape.op_counts()
        assert got["rescale"] == want["rescale"] == 1
        # sparse slots run over twice the width: their offsets never meet modulo it
        wraps = st.shape.stride << st.layers == slots == SECURE.slots
        if wraps:       # 2^t diagonals: as many baby steps, fewer giant steps and products
            giants = -(-(1 << st.layers) // st.shape.baby) - 1
            assert got["rotate"] == want["baby_rotations"] + giants < want["baby_rotations"] + want["giant_rotations"]
            assert got["mul_plain"] == 1 << st.layers and want["pmul"] == (1 << (st.layers + 1)) - 1
        else:
            assert got["mul_plain"] == want["pmul"] and got["add"] == want["add"]
            # sparse: a giant step of n slots is a real rotation over the doubled width (it swaps
            # the copies), which the model's n-slot view takes for the identity
            extra = int(slots < SECURE.slots and (st.shape.baby * st.shape.stride) % slots == 0 and st.shape.giant > 1)
            assert got["rotate"] == want["baby_rotations"] + want["giant_rotations"] + extra


def test_the_secure_plan_takes_56_keys_of_4_byte_words_under_8_gb():
    """Key memory at N = 2^16, counted from the chain (what the twin holds: ``key_bytes``)."""
    from cryptoffload.crypto.ckks.bootstrap.driver import rotation_steps
    from cryptoffload.crypto.ckks.gpu.chain import prime_chain
    from cryptoffload.crypto.ckks.gpu.dnum import key_bytes

    steps = rotation_steps(BootstrapPlan((3, 3)), SECURE.poly_modulus_degree)
    keys = len(steps) + 3                       # + conjugation, relinearisation, sparse_to_dense
    one = key_bytes(prime_chain(SECURE.poly_modulus_degree, SECURE.coeff_mod_bits))
    assert SECURE.is_secure and keys * one < 8e9 and 2 * keys * one > 8e9     # 8-byte words would not fit


def test_launches_per_bootstrap_are_counted_on_the_twin_and_do_not_depend_on_the_values():
    b = make_backend("gpu-twin", SMALL, insecure_study=True)
    b.keygen([])
    b.bootstrap_setup(BootstrapPlan((2, 2)))
    counts = []
    for seed in (1, 2):
        ct = b.encrypt(np.random.default_rng(seed).uniform(-1, 1, b.slots), level=1)
        before = b.kernel_launches
        b.bootstrap(ct)
        counts.append(b.kernel_launches - before)
    assert counts[0] == counts[1] > 0
