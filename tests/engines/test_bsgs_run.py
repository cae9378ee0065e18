"""Distributed BSGS on real SEAL ciphertexts: one 2-worker LocalCluster and one key set for the
module; the product equals ``M @ x`` for 1 and 2 devices, two baby-step sizes and every
strategy, more devices than workers, and input mistakes are one-line ConfigErrors."""

from __future__ import annotations

import sys
from typing import Iterator

import numpy as np
import pytest

from cryptoffload.crypto.ckks import CkksParams, make_backend
from cryptoffload.engines.bsgs_run import BsgsRunResult, run_bsgs, verify
from cryptoffload.engines.dask import DaskRunner
from cryptoffload.errors import ConfigError
from cryptoffload.workloads.bsgs import STRATEGIES, BsgsShape, matrix_of, split

PARAMS = CkksParams(8192, (60, 40, 40, 60), 40)     # 2 levels: input at level 2
SLOTS = PARAMS.slots
C = 16
TOL = 1e-3
SHAPES = {bs: BsgsShape(C, bs, slots=SLOTS, level=2) for bs in (4, 5)}
SPARSE = BsgsShape(6, 2, slots=SLOTS, stride=2, offset=7, level=2)


# run on the workers (top-level, so they pickle by reference)
def runs_left() -> int:
    from cryptoffload.engines import ckks_workers

    return len(ckks_workers.SESSIONS)


def backends_cached() -> int:
    from cryptoffload.engines import bsgs_run

    return len(bsgs_run._BACKENDS)


@pytest.fixture(scope="module")
def runner() -> Iterator[DaskRunner]:
    with DaskRunner(workers=2) as r:
        yield r


@pytest.fixture(scope="module")
def he():
    be = make_backend("seal", PARAMS)
    steps = sorted({s for sh in (*SHAPES.values(), SPARSE) for s in sh.rotation_steps()})
    be.keygen(rotations=steps)
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, SLOTS)
    diag = rng.uniform(-1, 1, (C, SLOTS))
    return be, x, diag, be.encrypt(x)


def _check_product(be, res: BsgsRunResult, diag: np.ndarray, shape: BsgsShape, x: np.ndarray) -> None:
    assert verify(be, res, diag, shape, x) < TOL
    got = be.decrypt(be.deserialize_ciphertext(res.result))
    assert np.max(np.abs(got - matrix_of(diag[:shape.diagonals], shape) @ x)) < TOL


@pytest.mark.parametrize("devices, strategy", [(1, "replicate")] + [(2, s) for s in STRATEGIES])
@pytest.mark.parametrize("bs", sorted(SHAPES))
def test_product_equals_plaintext(runner: DaskRunner, he, devices: int, strategy: str, bs: int) -> None:
    be, x, diag, ct = he
    shape = SHAPES[bs]
    sp = split(shape, devices, strategy)
    res = run_bsgs(runner, be, diag, shape, sp, ct, warmup=0)
    _check_product(be, res, diag, shape, x)
    assert (res.devices, res.workers, res.strategy, res.bs, res.diagonals) == (devices, devices, strategy, bs, C)
    assert not res.shared_workers and res.note == ""
    # every op of the product ran exactly once, on some device
    want = shape.op_counts()
    total = {k: sum(o[k] for o in res.ops) for k in res.ops[0]}
    assert total["pmul"] == want["pmul"] and total["rescale"] == want["rescale"]
    assert total["rotate"] >= want["baby_rotations"] + want["giant_rotations"]
    assert total["key_switch"] == total["rotate"]            # every step has its own key
    assert total["add"] == want["add"]
    # transfers: the baby sends plus the reduction, all across the two worker processes
    assert res.transfers == len(sp.baby_sends) + sum(len(r) for r in sp.reduction)
    # batched: one message per (src, dst) of baby steps (2 devices: one group each), per partial
    assert res.messages == len({(s, d) for s, d, _ in sp.baby_sends}) + sum(len(r) for r in sp.reduction)
    assert res.local_transfers == 0
    assert (res.bytes_moved > 0) == (res.transfers > 0)
    assert res.tasks == len(res.records) and all(r.end >= r.start for r in res.records)
    assert len(res.busy_s) == devices and all(b > 0 for b in res.busy_s)
    assert 0 < res.span_s and 0 < res.wall_s and res.setup_s > 0
    assert res.device_workers == tuple(runner.worker_addresses()[:devices])


def test_more_devices_than_workers(runner: DaskRunner, he) -> None:
    be, x, diag, ct = he
    shape = SHAPES[4]
    sp = split(shape, 3, "split-giant")
    res = run_bsgs(runner, be, diag, shape, sp, ct, warmup=0)
    _check_product(be, res, diag, shape, x)
    addrs = runner.worker_addresses()
    assert res.device_workers == (addrs[0], addrs[1], addrs[0])
    assert res.shared_workers and res.workers == 2 and "round-robin" in res.note
    assert res.local_transfers > 0


def test_sparse_strided_shape_and_repeats(runner: DaskRunner, he) -> None:
    be, x, diag, ct = he
    sp = split(SPARSE, 2, "broadcast")
    res = run_bsgs(runner, be, diag[:SPARSE.diagonals], SPARSE, sp, ct, repeats=3, warmup=1)
    _check_product(be, res, diag, SPARSE, x)
    assert len(res.wall_all) == 3 and res.wall_s == sorted(res.wall_all)[1]
    assert res.span_s in res.span_all


def test_workers_keep_backend_and_drop_run_state(runner: DaskRunner, he) -> None:
    be, _, diag, ct = he
    run_bsgs(runner, be, diag, SHAPES[4], split(SHAPES[4], 2), ct, warmup=0)
    for addr in runner.worker_addresses():
        assert runner.gather(runner.submit(runs_left, worker=addr)) == 0
        assert runner.gather(runner.submit(backends_cached, worker=addr)) >= 1


def backends_can_decrypt() -> list[bool]:
    from cryptoffload.engines import bsgs_run

    return [be.can_decrypt for be in bsgs_run._BACKENDS.values()]


def test_workers_never_hold_the_secret_key(runner: DaskRunner, he) -> None:
    """What a run ships to the workers rebuilds backends that evaluate but cannot decrypt."""
    be, _, diag, ct = he
    assert be.can_decrypt
    run_bsgs(runner, be, diag, SHAPES[4], split(SHAPES[4], 2), ct, warmup=0)
    for addr in runner.worker_addresses():
        held = runner.gather(runner.submit(backends_can_decrypt, worker=addr))
        assert held and not any(held)


def test_a_worker_refuses_a_secret_context(runner: DaskRunner, he) -> None:
    from cryptoffload.crypto.ckks import CkksError
    from cryptoffload.engines.bsgs_run import _worker_load_backend

    be = he[0]
    addr = runner.worker_addresses()[0]
    with pytest.raises(CkksError, match="public CKKS context only, got a secret context"):
        runner.gather(runner.submit(_worker_load_backend, be.secret_context(), "secret-digest", False, worker=addr))
    assert not any(runner.gather(runner.submit(backends_can_decrypt, worker=addr)))


def test_the_client_sends_nothing_but_a_public_context(runner: DaskRunner, he,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A backend whose public export carried the secret key is stopped before anything is
    scattered: no worker gets a context at all."""
    be, _, diag, ct = he
    monkeypatch.setattr(be, "public_context", be.secret_context)
    sent: list[object] = []
    monkeypatch.setattr(runner, "scatter", lambda *a, **k: sent.append(a) or pytest.fail("scattered"))
    with pytest.raises(RuntimeError, match="returned a secret context; refusing to send it"):
        run_bsgs(runner, be, diag, SHAPES[4], split(SHAPES[4], 2), ct, warmup=0)
    assert not sent


def test_bad_inputs(runner: DaskRunner, he) -> None:
    be, x, diag, ct = he
    shape = SHAPES[4]
    sp = split(shape, 2)

    def refused(match: str, **kw) -> None:
        args = dict(runner=runner, backend=be, diagonals=diag, shape=shape, sp=sp, ct=ct)
        args.update(kw)
        with pytest.raises(ConfigError, match=match) as info:
            run_bsgs(**args)
        assert "\n" not in str(info.value)

    no_slots = BsgsShape(C, 4, level=2)
    refused(r"slots = None but the seal backend has 4096", shape=no_slots, sp=split(no_slots, 2))
    refused("split was made for another shape", sp=split(SHAPES[5], 2))
    refused(r"shape \(16, 4096\)", diagonals=diag[:, :100])
    refused(r"shape \(16, 4096\)", diagonals=diag[:3])
    low = BsgsShape(C, 4, slots=SLOTS, level=1)
    refused("at level 2, but the shape says level=1", shape=low, sp=split(low, 2))
    refused("no hoisted rotations", hoisted=True)
    refused("repeats must be", repeats=0)
    refused("runner must be a DaskRunner", runner=object())
    other = make_backend("seal", PARAMS)
    other.keygen(rotations=[1])
    refused("cannot be used with this backend", ct=other.encrypt(x))
    refused(r"no Galois keys for rotation steps \[2, 3, 4, 8, 12\]; keygen\(rotations=\[1, 2, 3, 4, 8, 12\]\)",
            backend=other, ct=other.encrypt(x))
    with pytest.raises(ConfigError, match="result must be"):
        verify(be, "nope", diag, shape, x)


@pytest.mark.parametrize("strategy", ["broadcast", "split-giant"])
def test_unbatched_sends_each_baby_step_alone(runner: DaskRunner, he, strategy: str) -> None:
    """batched=False: a task and a message per baby step another device needs; same product."""
    be, x, diag, ct = he
    shape = SHAPES[4]
    sp = split(shape, 2, strategy)
    res = run_bsgs(runner, be, diag, shape, sp, ct, warmup=0, batched=False)
    _check_product(be, res, diag, shape, x)
    sent = [r for r in res.records if r.kind == "baby" and r.ops["serialize"]]
    assert len(sent) == len(sp.baby_sends) and all(r.ops["rotate"] == 1 for r in sent)
    recv = [r for r in res.records if r.kind == "recv"]
    assert len(recv) == len(sp.baby_sends) and all(r.ops["deserialize"] == 1 for r in recv)
    assert res.messages == res.transfers == len(sp.baby_sends) + 1
    # each record's op_s times its own ops, within the task's span
    for r in res.records:
        assert all(r.op_s[k] > 0 for k, n in r.ops.items() if n and k != "key_switch")
        assert sum(r.op_s.values()) <= r.seconds
    with pytest.raises(ConfigError, match="batched must be True or False"):
        run_bsgs(runner, be, diag, shape, sp, ct, batched=1)


def test_switch_interval_is_set_for_the_run_and_restored(runner: DaskRunner, he) -> None:
    from cryptoffload.engines.bsgs_run import worker_switch_interval

    be, x, diag, ct = he
    shape = SHAPES[4]
    a = runner.worker_addresses()[0]
    before = runner.submit(worker_switch_interval, 0.003, worker=a).result()
    try:
        assert runner.submit(worker_switch_interval, 0.003, worker=a).result() == pytest.approx(0.003)
        res = run_bsgs(runner, be, diag, shape, split(shape, 2), ct, warmup=0, switch_interval_s=0.0005)
        _check_product(be, res, diag, shape, x)
        assert runner.client.run(sys.getswitchinterval, workers=[a])[a] == pytest.approx(0.003)
    finally:
        runner.submit(worker_switch_interval, before, worker=a).result()
    for bad in (0, -1.0, 2.0, True, "1ms"):
        with pytest.raises(ConfigError, match="switch_interval_s must be None or seconds"):
            run_bsgs(runner, be, diag, shape, split(shape, 2), ct, switch_interval_s=bad)


def test_hoisted_groups_baby_steps(runner: DaskRunner, he, monkeypatch: pytest.MonkeyPatch) -> None:
    # SEAL cannot hoist; pretend it can to run the grouped path (rotate_many loops instead)
    be, x, diag, ct = he
    monkeypatch.setattr(be, "hoists_rotations", True)
    shape = SHAPES[4]
    sp = split(shape, 2, "broadcast")
    res = run_bsgs(runner, be, diag, shape, sp, ct, warmup=0, hoisted=True)
    _check_product(be, res, diag, shape, x)
    assert res.hoisted
    babies = [r for r in res.records if r.kind == "baby"]
    assert len(babies) == 2 and sum(r.ops["rotate"] for r in babies) == shape.baby - 1


def test_openfhe_style_stage_is_refused(runner, he) -> None:
    be, x, diag, ct = he
    shape = BsgsShape(C, 4, slots=SLOTS, level=2, rescale_each_giant=False, horner=True)
    with pytest.raises(ConfigError, match="modelled, not executed"):
        run_bsgs(runner, be, diag, shape, split(shape, 1), ct)


def test_hoisted_product_on_the_rns_twin(runner: DaskRunner, he) -> None:
    """The gpu backend's code on the CPU (gpu-twin) hoists its baby steps (one decomposition of
    the input for all of them) on the Dask workers, and the product is M @ x."""
    _, x, diag, _ = he
    twin = make_backend("gpu-twin", PARAMS)
    shape = SHAPES[4]
    twin.keygen(rotations=shape.rotation_steps())
    ct = twin.encrypt(x)
    for devices, strategy in ((1, "replicate"), (2, "split-giant")):
        res = run_bsgs(runner, twin, diag, shape, split(shape, devices, strategy), ct, warmup=0, hoisted=True)
        _check_product(twin, res, diag, shape, x)
