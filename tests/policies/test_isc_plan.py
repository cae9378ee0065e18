"""The in-storage capacity planner: the paper's key reasoning (every client's keys on every CSD)
on the real program, then exact capacity and load sizing on a program of round sizes, and refusals."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest

from cryptoffload.errors import ConfigError
from cryptoffload.policies.isc_plan import plan_isc
from cryptoffload.sim.isc.platform import load_platforms
from cryptoffload.sim.isc.world import IscWorld, load_isc_world


def test_planner_follows_the_papers_key_reasoning() -> None:
    world = load_isc_world()
    plan = plan_isc(10_000, world)
    # section 4.5.1: weights once + keys x clients on one CSD (our program: 0.34 GB of keys)
    assert plan.weights_bytes == world.program.weight_bytes
    assert plan.keys_per_client_bytes == world.program.key_total_bytes
    assert plan.replicated_bytes == plan.weights_bytes + 10_000 * plan.keys_per_client_bytes
    assert (plan.layout, plan.csds_for_capacity, plan.csds) == ("keys-on-every-csd", 1, 1)
    assert plan.provision_bytes == plan.replicated_bytes and plan.clients_per_csd is None
    assert plan.throughput_per_s == 1 / plan.latency_s
    # fit check: with the program fitted to the paper (0.49 GB of keys) it is the paper's 5,000 GB
    fitted = plan_isc(10_000, load_isc_world("fitted"))
    assert fitted.replicated_bytes / 1e9 == pytest.approx(5000 + 3.3, rel=0.05)


def _world(weights: float = 1e9, keys: float = 1e9) -> IscWorld:
    """A program of round sizes on the preset CSD (7.68 TB of NAND, 8 GB/s); the planner reads
    only its sizes when it is given the latency."""
    program = SimpleNamespace(name="round", source="test", weight_bytes=weights, key_total_bytes=keys)
    return IscWorld(cost=None, platforms={"csd": load_platforms()["csd"]}, program=program,  # type: ignore[arg-type]
                    compiled=None, profiles=[])  # type: ignore[arg-type]


def test_keys_on_every_csd_and_the_load() -> None:
    plan = plan_isc(10, _world(), requests_per_client_per_s=0.5, latency_s=1.0)
    assert plan.capacity_bytes == 7.68e12 and plan.replicated_bytes == 11e9
    assert (plan.layout, plan.csds_for_capacity) == ("keys-on-every-csd", 1)
    # 5 inferences/s offered, 1 per second per CSD, each at most 80 % busy: ceil(5 / 0.8) = 7
    assert (plan.offered_per_s, plan.csds_for_load, plan.csds) == (5.0, 7, 7)
    assert (plan.provision_bytes, plan.clients_per_csd) == (11e9, None)


def test_partitioned_when_asked_or_when_the_keys_do_not_fit() -> None:
    asked = plan_isc(10, _world(), requests_per_client_per_s=0.5, latency_s=1.0, keys_on_every_csd=False)
    # capacity: one CSD holds them all; the load needs 7, so ceil(10 / 7) = 2 clients on each
    assert (asked.layout, asked.csds_for_capacity, asked.csds, asked.clients_per_csd) == ("partitioned", 1, 7, 2)
    assert asked.provision_bytes == 3e9
    full = plan_isc(10, _world(), nand_tb=0.005, latency_s=1.0)
    # 5 GB per CSD: 4 GB for keys, 10 GB of keys -> 3 CSDs of ceil(10 / 3) = 4 clients
    assert (full.layout, full.csds_for_capacity, full.csds, full.clients_per_csd) == ("partitioned", 3, 3, 4)
    assert full.provision_bytes == 5e9 and full.csds_for_load is None and full.offered_per_s is None


def test_no_layout_when_a_csd_cannot_hold_the_weights_and_one_clients_keys() -> None:
    plan = plan_isc(10, _world(), nand_tb=0.002, latency_s=1.0)  # 2 GB = weights + one client's keys
    assert (plan.layout, plan.csds_for_capacity, plan.csds, plan.provision_bytes) == ("does-not-fit", None, None, None)


def test_refusals() -> None:
    w = _world()
    for bad in (0, -3, True, 2.0):
        with pytest.raises(ConfigError, match="clients must be a positive integer"):
            plan_isc(bad, w, latency_s=1.0)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="requests per client per second"):
        plan_isc(10, w, requests_per_client_per_s=-1.0, latency_s=1.0)
    with pytest.raises(ConfigError, match="max utilisation"):
        plan_isc(10, w, max_utilisation=1.5, latency_s=1.0)
    empty = replace(w, platforms={"csd": replace(w.platforms["csd"], storage_bytes=0.0)})
    with pytest.raises(ConfigError, match="NAND capacity per CSD must be positive"):
        plan_isc(10, empty, latency_s=1.0)
