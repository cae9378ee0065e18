"""Capacity planning for homomorphic CNN inference on computational storage: how many CSDs, and
how much NAND on each, for ``M`` clients of a model -- the reasoning of Suzuki and Yamana's
section 4.5.1 (every CSD holds every client's evaluation keys, so any idle CSD serves any
client), with the single-CSD latency simulated.

Why a policy: it is a decision rule on a loaded world (``sim/isc/world.py``): it returns the
plan as numbers (:class:`IscPlan`); who shows it (``cryptoffload plan isc``, the isc-he-cnn
study) turns it into a table (``studies/isc_he_cnn/plan_table.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from cryptoffload.errors import ConfigError
from cryptoffload.sim.isc.simulation import simulate
from cryptoffload.sim.isc.world import IscWorld

#: How clients' keys lie on the CSDs: every client's on every CSD (the paper's rule), clients
#: partitioned over CSDs, or no layout at all (a CSD cannot hold the weights and one client's keys).
Layout = Literal["keys-on-every-csd", "partitioned", "does-not-fit"]


@dataclass(frozen=True)
class IscPlan:
    """A capacity plan, in SI units (bytes, seconds). Sizes are the program's (derived), latency
    and throughput are one simulated CSD's, counts are computed; ``None`` where a count does not
    apply (no load given, or no layout fits)."""

    program_name: str
    program_source: str
    clients: int
    weights_bytes: float
    keys_per_client_bytes: float
    latency_s: float
    throughput_per_s: float
    nand_read_bps: float
    dram_bytes: float
    replicated_bytes: float  # the weights and every client's keys, on one CSD
    capacity_bytes: float  # NAND available per CSD
    keys_on_every_csd: bool
    max_utilisation: float
    requests_per_client_per_s: float | None
    offered_per_s: float | None
    csds_for_load: int | None
    layout: Layout
    csds_for_capacity: int | None
    csds: int | None  # recommended: the larger of capacity and load
    provision_bytes: float | None  # NAND per CSD to provision
    clients_per_csd: int | None  # partitioned layouts only


def _check_request(clients: int, requests_per_client_per_s: float | None, max_utilisation: float) -> None:
    if isinstance(clients, bool) or not isinstance(clients, int) or clients < 1:
        raise ConfigError(f"clients must be a positive integer, got {clients!r}")
    if requests_per_client_per_s is not None and not (math.isfinite(requests_per_client_per_s)
                                                      and requests_per_client_per_s > 0):
        raise ConfigError("requests per client per second must be a positive number")
    if not 0 < max_utilisation <= 1:
        raise ConfigError(f"max utilisation must be in (0, 1], got {max_utilisation!r}")


def _capacity(clients: int, weights: float, keys: float, cap: float,
              keys_on_every_csd: bool) -> tuple[Layout, int | None]:
    """The layout of clients' keys and the CSDs it needs: one CSD when every client's keys fit
    on it (and the paper's rule is asked for), else as many as the keys fill."""
    per_csd_keys = cap - weights
    if per_csd_keys <= keys:
        return "does-not-fit", None
    if keys_on_every_csd and weights + clients * keys <= cap:
        return "keys-on-every-csd", 1
    return "partitioned", math.ceil(clients * keys / per_csd_keys)


def _provision(layout: Layout, clients: int, csds: int, weights: float, keys: float) -> tuple[float, int | None]:
    """NAND per CSD to provision for ``csds`` CSDs, and the clients per CSD when partitioned."""
    if layout == "keys-on-every-csd":
        return weights + clients * keys, None
    per = math.ceil(clients / csds)
    return weights + per * keys, per


def plan_isc(clients: int, world: IscWorld, *, requests_per_client_per_s: float | None = None,
             nand_tb: float | None = None, keys_on_every_csd: bool = True, max_utilisation: float = 0.8,
             latency_s: float | None = None) -> IscPlan:
    """How many CSDs, and how much NAND on each, for ``clients`` clients of ``world``'s program.

    * ``clients`` -- clients whose evaluation keys the service must hold (each client's keys
      are the program's key bytes: 0.34 GB for the CNN of the paper's inputs, the paper states 0.5 GB);
    * ``world`` -- the program and platforms (``sim.isc.world.load_isc_world``);
    * ``requests_per_client_per_s`` -- mean inference requests per client per second; with it
      the plan also sizes the CSD count for load (otherwise only for capacity);
    * ``nand_tb`` -- NAND per CSD in TB (default: the preset's, an assumed 7.68 TB);
    * ``keys_on_every_csd`` -- the paper's rule (section 4.5.1): every CSD holds every client's
      keys, so any idle CSD can serve any client (no doubled latency when two clients of one
      CSD collide, no CSD-to-CSD traffic); ``False`` partitions clients over CSDs instead;
    * ``max_utilisation`` -- the load a CSD may carry (fraction of its throughput, default 0.8);
    * ``latency_s`` -- a known single-CSD latency (skips the simulation).
    """
    _check_request(clients, requests_per_client_per_s, max_utilisation)
    csd = world.platforms["csd"]
    cap = (nand_tb * 1e12) if nand_tb is not None else csd.storage_bytes
    if not cap > 0:
        raise ConfigError("NAND capacity per CSD must be positive")
    weights, keys = float(world.program.weight_bytes), float(world.program.key_total_bytes)
    if latency_s is None:
        latency_s = simulate(world.compiled, csd, 1).mean_latency_s
    thr = 1.0 / latency_s
    offered = None if requests_per_client_per_s is None else clients * requests_per_client_per_s
    n_load = None if offered is None else max(1, math.ceil(offered / (thr * max_utilisation)))
    layout, n_cap = _capacity(clients, weights, keys, cap, keys_on_every_csd)
    n = None if n_cap is None else max(n_cap, n_load or 1)
    provision, per_csd = (None, None) if n is None else _provision(layout, clients, n, weights, keys)
    return IscPlan(
        program_name=world.program.name, program_source=world.program.source, clients=clients,
        weights_bytes=weights, keys_per_client_bytes=keys, latency_s=latency_s, throughput_per_s=thr,
        nand_read_bps=csd.nand_read_bps, dram_bytes=csd.dram_bytes, replicated_bytes=weights + clients * keys,
        capacity_bytes=cap, keys_on_every_csd=keys_on_every_csd, max_utilisation=max_utilisation,
        requests_per_client_per_s=requests_per_client_per_s, offered_per_s=offered, csds_for_load=n_load,
        layout=layout, csds_for_capacity=n_cap, csds=n, provision_bytes=provision, clients_per_csd=per_csd)


__all__ = ["IscPlan", "Layout", "plan_isc"]
