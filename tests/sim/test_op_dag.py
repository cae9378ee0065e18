"""The DAG scheduler: closed forms first (one device is a sum; a pure transfer is latency +
bytes / bandwidth), then the properties the tuner relies on."""

from __future__ import annotations

import dataclasses
import random

import pytest

from cryptoffload.errors import ConfigError, ProfileError
from cryptoffload.sim.op_dag import DagCosts, schedule
from cryptoffload.workloads.bsgs import STRATEGIES, BsgsShape, build_dag, split

COSTS = DagCosts(rotate_s=1e-3, pmul_s=1e-4, add_s=2e-5, bytes=1e6, bandwidth_Bps=1e9, latency_s=1e-5,
                 rescale_s=3e-4, rotate_low_s=8e-4, add_low_s=1.5e-5)


def test_one_device_is_the_sum_of_its_ops() -> None:
    shape = BsgsShape(64, 8, slots=64, level=3)
    sch = schedule(build_dag(split(shape, 1)), COSTS)
    want = 7 * 1e-3 + 64 * 1e-4 + (64 - 8) * 2e-5 + 8 * 3e-4 + 7 * 8e-4 + 7 * 1.5e-5
    assert sch.makespan == pytest.approx(want, rel=1e-12)
    assert sch.transfers == 0 and sch.busy[0] == pytest.approx(want)


def test_two_devices_closed_form() -> None:
    """Replicate on 2: each device does all baby steps and half the giant steps, then one
    transfer (latency + bytes/bandwidth) and one add."""
    shape = BsgsShape(64, 8, slots=64, level=3)
    sch = schedule(build_dag(split(shape, 2)), COSTS)
    dev1 = 7 * 1e-3 + 32 * 1e-4 + (32 - 4) * 2e-5 + 4 * 3e-4 + 4 * 8e-4 + 3 * 1.5e-5
    wire = 1e6 / 1e9   # bytes at the low level = bytes (no limb scaling, no bytes_low)
    assert sch.makespan == pytest.approx(dev1 + wire + 1e-5 + 1.5e-5, rel=1e-12)
    assert sch.transfers == 1 and sch.bytes_moved == 1e6


def test_transfers_share_ports() -> None:
    """Broadcast on 2 devices with 5 baby steps: device 0 sends 2 rotated babies to device 1
    and receives 2; sends serialise on a port, so bytes/bandwidth add up."""
    shape = BsgsShape(10, 5, slots=64, level=2)
    slow = dataclasses.replace(COSTS, bandwidth_Bps=1e6)      # 1 s per ciphertext
    sch = schedule(build_dag(split(shape, 2, "broadcast")), slow)
    assert sch.transfers == 4 + 1
    assert sch.makespan > 2.0 + 1.0     # two babies in a row on one port, then the reduction


def test_serialisation_and_task_overhead_are_charged() -> None:
    shape = BsgsShape(16, 4, slots=64, level=2)
    dag = build_dag(split(shape, 2))
    base = schedule(dag, COSTS).makespan
    more = schedule(dag, dataclasses.replace(COSTS, serialize_s=0.01, deserialize_s=0.02, task_s=0.05)).makespan
    # task_s: dispatch, the giant-step task after the baby steps, the transfer's receiving task
    assert more == pytest.approx(base + 0.01 + 0.02 + 3 * 0.05, rel=1e-9)


def test_batched_sends_closed_form() -> None:
    """split-giant on 2 devices, baby steps batched (the Dask execution): device 0 rotates and
    serialises babies 1-3 in one task, they cross in one message, device 1 deserialises them
    in one task, then runs its giant steps and sends its partial back. task_s is paid before
    each task, once."""
    shape = BsgsShape(16, 4, slots=64, level=2)
    ser, de, task = 0.002, 0.003, 0.005
    costs = dataclasses.replace(COSTS, serialize_s=ser, deserialize_s=de, task_s=task)
    dag = build_dag(split(shape, 2, "split-giant"), batched_sends=True)
    assert len({op.batch for op in dag.ops if op.kind == "send" and op.label.startswith("baby")}) == 1
    sch = schedule(dag, costs)
    giant1 = 8 * 1e-4 + 6 * 2e-5 + 2 * 3e-4 + 2 * 8e-4 + 1 * 1.5e-5      # giant steps 2 and 3
    babies = task + 3 * 1e-3 + 3 * ser + 3 * 1e-3 + 1e-5                  # on device 1's port
    partial1 = babies + task + 3 * de + task + giant1
    want = partial1 + ser + 1e-3 + 1e-5 + task + de + 1.5e-5
    assert sch.makespan == pytest.approx(want, rel=1e-12)
    assert sch.transfers == 3 + 1 and sch.bytes_moved == 4e6
    # alone, each baby step pays its own task and receiving task, and leaves earlier
    alone = schedule(build_dag(split(shape, 2, "split-giant")), costs)
    assert alone.transfers == sch.transfers and alone.makespan > sch.makespan
    # out of a device that goes on computing (device 0 starts its giant steps), the batch
    # crosses at the busy bandwidth and latency; the partial leaves an idle device 1 as before
    busy = dataclasses.replace(costs, busy_latency_s=0.004, busy_bandwidth_Bps=5e8)
    assert schedule(dag, busy).makespan == pytest.approx(want + 3 * (2e-3 - 1e-3) + (0.004 - 1e-5), rel=1e-12)
    with pytest.raises(ConfigError, match="go together"):
        dataclasses.replace(costs, busy_latency_s=0.004)
    with pytest.raises(ConfigError, match="busy_bandwidth_Bps must be > 0"):
        dataclasses.replace(costs, busy_latency_s=0.004, busy_bandwidth_Bps=0.0)


def test_batching_changes_nothing_when_no_baby_step_is_sent() -> None:
    shape = BsgsShape(64, 8, slots=64, level=3)
    for n in (1, 2, 3):
        sp = split(shape, n)
        assert (schedule(build_dag(sp, batched_sends=True), COSTS).makespan
                == schedule(build_dag(sp), COSTS).makespan)


def test_chains_do_not_change_the_schedule() -> None:
    """Merging a device's giant steps into one node (one Dask task) changes nothing when
    receiving costs no compute (an FPGA's DMA): only a deserialisation could have slipped in
    between two of its ops."""
    rnd = random.Random(7)
    costs = dataclasses.replace(COSTS, hoisted_rotate_s=4e-4)
    for _ in range(150):
        c = rnd.randint(1, 70)
        shape = BsgsShape(c, rnd.randint(1, c), slots=128, level=rnd.randint(1, 4))
        sp = split(shape, rnd.randint(1, 9), rnd.choice(STRATEGIES))
        hoisted = rnd.random() < 0.5
        fine = build_dag(sp, hoisted_babies=hoisted)
        coarse = build_dag(sp, hoisted_babies=hoisted, granularity="chain")
        assert len(coarse.ops) <= len(fine.ops)
        assert fine.counts() == coarse.counts()
        assert schedule(fine, costs).makespan == pytest.approx(schedule(coarse, costs).makespan, rel=1e-9)


def test_levels_scale_with_limbs() -> None:
    costs = dataclasses.replace(COSTS, limbs=4, rotate_low_s=None, add_low_s=None)
    assert costs.op_s("rotate", 3, 3) == 1e-3
    assert costs.op_s("rotate", 1, 3) == pytest.approx(1e-3 * 2 / 4)
    assert costs.op_s("pmul", 10, 10) == 1e-4          # the product's top maps to the profile's
    assert costs.ciphertext_bytes(2, 3) == pytest.approx(1e6 * 3 / 4)
    measured_low = dataclasses.replace(costs, rotate_low_s=7e-4)
    assert measured_low.op_s("rotate", 2, 3) == 7e-4
    assert measured_low.op_s("rotate", 1, 3) == pytest.approx(7e-4 * 2 / 3)


def test_profile_missing_rotation_cost(tmp_path) -> None:
    p = tmp_path / "p.toml"
    p.write_text('[meta]\nname = "p"\nkind = "measured"\ndescription = "d"\n'
                 '[ops]\npmul_s = { value = 1e-4, source = "x" }\nadd_s = { value = 1e-5, source = "x" }\n'
                 '[ciphertext]\nbytes = { value = 1e6, source = "x" }\n'
                 '[link]\nbandwidth_Bps = { value = 1e9, source = "x" }\nlatency_s = { value = 0, source = "x" }\n')
    with pytest.raises(ProfileError, match=r"'ops.rotate_s' \(the rotation \(key switching\) cost\) is missing"):
        DagCosts.from_profile(str(p))


def test_bad_costs() -> None:
    with pytest.raises(ConfigError, match="rotate_s must be > 0"):
        dataclasses.replace(COSTS, rotate_s=0.0)
    with pytest.raises(ConfigError, match="latency_s must be >= 0"):
        dataclasses.replace(COSTS, latency_s=-1.0)


def test_u280_profile_loads_with_sources() -> None:
    c = DagCosts.from_profile("bsgs_u280")
    assert c.kind == "derived" and c.bandwidth_Bps == 12.5e9


def test_rescale_once_moves_the_work_up_a_level() -> None:
    """OpenFHE's stages rescale the finished sum once: giant rotations and the reduction then run
    at the input level (bigger ciphertexts on the wire) and one rescale ends the product."""
    per_giant = BsgsShape(64, 8, slots=64, level=3)
    once = dataclasses.replace(per_giant, rescale_each_giant=False)
    costs = dataclasses.replace(COSTS, limbs=4, rotate_low_s=None, add_low_s=None)
    a = schedule(build_dag(split(once, 1)), costs).makespan
    want = 7 * 1e-3 + 64 * 1e-4 + (64 - 8) * 2e-5 + 7 * 1e-3 + 7 * 2e-5 + 3e-4
    assert a == pytest.approx(want, rel=1e-12)
    two = schedule(build_dag(split(once, 2)), costs)
    assert two.bytes_moved == 1e6                       # at the top level, not 3/4 of it
    assert build_dag(split(once, 2)).counts()["rescale"] == 1


def test_receiving_overlaps_sending() -> None:
    """Broadcast on 2 devices: each device serialises its baby steps as it makes them and
    deserialises the other's when they arrive; the two directions run at once, not in turn."""
    costs = dataclasses.replace(COSTS, serialize_s=2e-3, deserialize_s=2e-3)
    shape = BsgsShape(64, 16, slots=64, level=3)
    sch = schedule(build_dag(split(shape, 2, "broadcast"), granularity="chain"), costs)
    own = 8 * (1e-3 + 2e-3)                 # 8 (or 7) rotations, each serialised once
    received = 8 * 2e-3
    assert sch.makespan < own + received + 0.02 + 0.01
    one_way = schedule(build_dag(split(shape, 2, "split-giant"), granularity="chain"), costs)
    assert one_way.transfers == 15 + 1 and sch.transfers == 15 + 1


def test_concurrent_slowdown_stretches_multi_device_compute_only() -> None:
    shape = BsgsShape(64, 8, slots=64, level=3)
    slow = dataclasses.replace(COSTS, concurrent_slowdown=1.5)
    one = schedule(build_dag(split(shape, 1)), COSTS).makespan
    assert schedule(build_dag(split(shape, 1)), slow).makespan == pytest.approx(one)
    two = schedule(build_dag(split(shape, 2)), COSTS)
    two_slow = schedule(build_dag(split(shape, 2)), slow)
    wire = 1e6 / 1e9 + 1e-5
    assert two_slow.makespan - wire == pytest.approx(1.5 * (two.makespan - wire), rel=1e-9)
    with pytest.raises(ConfigError, match="concurrent_slowdown must be >= 1"):
        dataclasses.replace(COSTS, concurrent_slowdown=0.5)
