"""The bootstrap end to end (bootstrap/driver.py through the backend interface), on the twin at a
small insecure ring: full and sparse slots come back with >= 20 bits of precision at the level
the schedule promises and the input's scale; a refreshed ciphertext computes and bootstraps
again; misuse is refused by name; the recording backend records the same bootstrap op by op,
and its trace loads as an HE program."""

from __future__ import annotations

import numpy as np
import pytest

from cryptoffload.crypto.ckks import CkksParams, RecordingBackend, make_backend
from cryptoffload.crypto.ckks.bootstrap.driver import PHASES, rotation_steps
from cryptoffload.crypto.ckks.bootstrap.plan import BootstrapPlan
from cryptoffload.crypto.ckks.bootstrap.precision import precision
from cryptoffload.crypto.ckks.errors import CkksError
from cryptoffload.crypto.ckks.gpu.dnum import params_for_dnum
from cryptoffload.workloads.he_trace import load_trace

#: N = 1024 (insecure: a study setting), 17 levels of 59 bits over a 60-bit q_0, dnum 3: enough
#: for a (2, 2) plan (2 + 11 + 2 levels) with two levels left
PARAMS = params_for_dnum(CkksParams(1024, (60,) + (59,) * 17 + (60,), 59), 3)
PLAN = BootstrapPlan((2, 2))
SPARSE = BootstrapPlan((2, 2), (4, 0), 64)


@pytest.fixture(scope="module")
def twin():
    b = make_backend("gpu-twin", PARAMS, insecure_study=True)
    b.keygen([])
    return b


def values(n: int, seed: int, complex_: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, n)
    return x + 1j * rng.uniform(-1, 1, n) if complex_ else x


@pytest.mark.parametrize("plan", [PLAN, SPARSE], ids=["full", "sparse"])
def test_a_bootstrap_refreshes_full_and_sparse_slots_to_20_bits(twin, plan):
    took = twin.bootstrap_setup(plan)
    assert set(took) == {"keygen_s", "setup_s"}
    n = plan.slots_for(PARAMS.poly_modulus_degree)
    x = np.tile(values(n, 1, complex_=True), twin.slots // n)
    ct = twin.encrypt_complex(x, level=1)
    out = twin.bootstrap(ct)
    sched = twin.bootstrapper.schedule
    assert twin.level(out) == sched.after == PARAMS.levels - 2 - 11 - 2
    assert twin.scale(out) == pytest.approx(twin.scale(ct), rel=1e-12)
    got = precision(twin.decrypt_complex(out), x)
    assert got.mean_bits >= 20 and got.worst_bits >= 18, got
    run = twin.last_bootstrap
    assert run is not None and tuple(run.seconds) == PHASES and run.level_out == sched.after
    assert run.message_ratio_bits == pytest.approx(8.0, abs=1e-9)


def test_a_refreshed_ciphertext_computes_and_bootstraps_again(twin):
    twin.bootstrap_setup(PLAN)
    x = values(twin.slots, 2) * 0.9
    once = twin.bootstrap(twin.encrypt(x, level=1))
    sq = twin.rescale(twin.relinearize(twin.mul(once, once)))          # a level of the refresh spent
    assert precision(twin.decrypt(sq), x * x).mean_bits >= 19
    again = twin.bootstrap(sq)
    assert precision(twin.decrypt(again), x * x).mean_bits >= 18


def test_an_input_at_level_0_is_taken_at_its_scale_unless_it_leaves_no_room(twin):
    twin.bootstrap_setup(PLAN)
    x = values(twin.slots, 3)
    low = twin.encrypt(x, level=0, scale=float(twin.primes[0]) / 2.0 ** 10)
    out = twin.bootstrap(low)
    assert twin.last_bootstrap.message_ratio_bits == pytest.approx(10.0)
    assert precision(twin.decrypt(out), x).mean_bits >= 18
    crowded = twin.encrypt(x * 0.01, level=0, scale=float(twin.primes[0]) / 4.0)
    with pytest.raises(CkksError, match="bits under q_0"):
        twin.bootstrap(crowded)


def test_misuse_is_refused_by_name(twin):
    for name in ("seal", "emulator"):
        other = (make_backend(name, PARAMS, insecure_study=True) if name == "emulator"
                 else make_backend(name, CkksParams(8192, (60, 40, 60), 40)))
        other.keygen([])
        with pytest.raises(CkksError, match=f"{name} backend cannot bootstrap|emulator keeps slot values"):
            other.bootstrap_setup(PLAN)
        with pytest.raises(CkksError, match="cannot bootstrap"):
            other.bootstrap(other.encrypt([1.0]))
    fresh = make_backend("gpu-twin", PARAMS, insecure_study=True)
    fresh.keygen([])
    with pytest.raises(CkksError, match="bootstrap_setup"):
        fresh.bootstrap(fresh.encrypt([1.0], level=1))
    with pytest.raises(CkksError, match="BootstrapPlan"):
        fresh.bootstrap_setup((2, 2))  # type: ignore[arg-type]
    with pytest.raises(CkksError, match="levels"):
        fresh.bootstrap_setup(BootstrapPlan((6, 6)))            # 6 + 11 + 6 > 17
    twin.bootstrap_setup(PLAN)
    ct = twin.encrypt([0.5], level=2)
    with pytest.raises(CkksError, match="size-2"):
        twin.bootstrap(twin.mul(ct, ct))


def test_setup_makes_exactly_the_plans_keys(twin):
    twin.bootstrap_setup(SPARSE)
    steps = {s % twin.slots for s in rotation_steps(SPARSE, PARAMS.poly_modulus_degree)}
    assert steps <= {s % twin.slots for s in twin.rotation_steps}
    assert {"conj", "relin", "encapsulation:sparse_to_dense", "encapsulation:to_sparse"} <= set(twin.key_bytes())


def test_the_recording_backend_records_the_bootstrap_op_by_op(twin, tmp_path):
    rec = RecordingBackend(params=PARAMS)                        # shape only: no keys, no values
    rec.keygen([])
    rec.bootstrap_setup(PLAN)
    ct = rec.encrypt(np.zeros(4), level=1)
    start = len(rec.ops)
    out = rec.bootstrap(ct)
    ops = rec.ops[start:]
    phases = {op["phase"].split(":")[0] for op in ops}
    assert phases == set(PHASES)
    assert sum(op["op"] == "mod_raise" for op in ops) == 1 and sum(op["op"] == "conjugate" for op in ops) == 1
    assert rec.level(out) == rec.bootstrapper.schedule.after
    prog = load_trace(rec.save(tmp_path / "bootstrap.json"))
    assert len(prog.ops) == len(rec.ops)
    # the twin runs the same ops: the recording over it counts the same
    over_twin = RecordingBackend(twin)
    over_twin.bootstrap_setup(PLAN)
    c = over_twin.encrypt(values(twin.slots, 4), level=1)
    first = len(over_twin.ops)
    over_twin.bootstrap(c)
    assert [op["op"] for op in over_twin.ops[first:]] == [op["op"] for op in ops]


def test_a_stage_splits_over_workers_that_hold_only_the_public_context(twin):
    """What the Dask split needs: each worker rebuilds the backend from the public context,
    encodes the stage itself from its StageEncoding, sums its share of the giant steps unrescaled;
    the shares add up to the stage's product."""
    from cryptoffload.crypto.ckks import backend_from_context
    from cryptoffload.crypto.ckks.bootstrap import dft, lintrans

    twin.bootstrap_setup(PLAN)
    boot = twin.bootstrapper
    spec = boot.stage_encodings(dft.SLOT_TO_COEFF)[0]
    x = values(twin.slots, 5, complex_=True) * 0.5
    ct = twin.encrypt_complex(x, level=spec.level, scale=float(twin.primes[spec.level]))
    whole = lintrans.apply(twin, ct, boot.encoded(dft.SLOT_TO_COEFF)[0])
    public = twin.public_context()
    giants = range(len(lintrans.grid(spec.stage).giant))
    parts = []
    for share in ([i for i in giants if i % 2 == 0], [i for i in giants if i % 2 == 1]):
        worker = backend_from_context(public, insecure_study=True)
        enc = lintrans.encode(worker, spec.stage, level=spec.level, scale=spec.scale, factor=spec.factor)
        parts.append(lintrans.apply(worker, worker.deserialize_ciphertext(twin.serialize_ciphertext(ct)), enc, share,
                                    rescale=False))
    total = twin.rescale(twin.add(*[twin.deserialize_ciphertext(twin.serialize_ciphertext(p)) for p in parts]))
    assert precision(twin.decrypt_complex(total), twin.decrypt_complex(whole)).worst_bits > 25


@pytest.mark.parametrize("plan", [PLAN, SPARSE], ids=["full", "sparse"])
def test_every_stage_on_ciphertexts_is_its_plaintext_matrix(twin, plan):
    """Each encoded stage, run on a ciphertext, equals its diagonals (times its factor) applied
    to the decrypted slots: the homomorphic DFT is the plaintext one, stage by stage."""
    from cryptoffload.crypto.ckks.bootstrap import dft, lintrans

    twin.bootstrap_setup(plan)
    boot = twin.bootstrapper
    rng = np.random.default_rng(6)
    for transform in (dft.COEFF_TO_SLOT, dft.SLOT_TO_COEFF):
        for spec, enc in zip(boot.stage_encodings(transform), boot.encoded(transform)):
            w = spec.stage.width
            x = np.tile(rng.uniform(-1, 1, w) + 1j * rng.uniform(-1, 1, w), twin.slots // w)
            ct = twin.encrypt_complex(x, level=spec.level, scale=float(twin.primes[spec.level]))
            got = twin.decrypt_complex(lintrans.apply(twin, ct, enc))
            want = np.tile(spec.factor * dft.apply(spec.stage.diagonals, x[:w]), twin.slots // w)
            assert np.max(np.abs(got - want)) <= 2.0 ** -30 * max(1.0, float(np.max(np.abs(want))))
