"""Capacity planning for homomorphic CNN inference on computational storage: how many CSDs, and
how much NAND on each, for ``M`` clients of a model -- the reasoning of Suzuki and Yamana's
section 4.5.1 (every CSD holds every client's evaluation keys, so any idle CSD serves any
client), with the single-CSD latency simulated.

Why a policy: it is a decision rule (``cryptoffload plan isc`` prints it; the isc-he-cnn study
shows one plan beside its tables), built on the simulator below it. :func:`setup` -- the cost
model, the platform presets and the program, refused where DRAM cannot hold it -- is what the
planner and the study both start from.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from cryptoffload.errors import ConfigError
from cryptoffload.report.result import Table
from cryptoffload.sim.fpga_cost import FPGA_PROFILE, FpgaCostModel
from cryptoffload.sim.isc_platform import PLATFORM_PROFILE, PlatformPreset, load_platforms
from cryptoffload.sim.isc_simulation import simulate
from cryptoffload.sim.program_steps import CompiledProgram, check_fits, compile_steps
from cryptoffload.workloads.he_cnn_eva import PAPER_INPUTS_PROFILE
from cryptoffload.workloads.he_cnn_fitted import PAPER_PROFILE
from cryptoffload.workloads.he_models import load_model
from cryptoffload.workloads.he_program import HEProgram

GB = 1e9


@dataclass
class Setup:
    """What a simulation of the in-storage platforms starts from: the FPGA cost model, the
    platform presets, the program compiled into steps, and the profiles they came from."""

    cost: FpgaCostModel
    platforms: dict[str, PlatformPreset]
    program: HEProgram
    compiled: CompiledProgram
    profiles: list[str]


def profile_path(name: str) -> str:
    """A profile name as the path shown in results (``profiles/NAME.toml``); a path as given."""
    return f"profiles/{name}.toml" if "/" not in name and not name.endswith(".toml") else name


def setup(model: str | None = None, *, fpga_profile: str = FPGA_PROFILE, platform_profile: str = PLATFORM_PROFILE,
          inputs_profile: str = PAPER_INPUTS_PROFILE, fitted_profile: str = PAPER_PROFILE,
          dram_gb: float | None = None, step_limits: tuple[float, float] = (2e-3, 16e6)) -> Setup:
    """Load the cost model, the presets and the program; refuse a platform whose DRAM cannot
    hold the program (the message names the platform and the op)."""
    cost = FpgaCostModel.from_profile(fpga_profile)
    platforms = load_platforms(platform_profile)
    if dram_gb is not None:
        platforms = {k: p.with_dram(dram_gb * GB) for k, p in platforms.items()}
    program = load_model(model, cost, fitted_profile, inputs_profile)
    compiled = compile_steps(program, cost, *step_limits)
    for p in platforms.values():
        check_fits(compiled, program, p.dram_bytes, f"platform {p.label}")
    profiles = [cost.profile, next(iter(platforms.values())).profile]
    if program.source == "paper-calibrated":
        profiles.append(profile_path(fitted_profile))
    elif program.source == "paper-inputs":
        profiles.append(profile_path(inputs_profile))
    return Setup(cost, platforms, program, compiled, profiles)


def plan_isc(clients: int, model: str | None = None, *, requests_per_client_per_s: float | None = None,
             nand_tb: float | None = None, keys_on_every_csd: bool = True, max_utilisation: float = 0.8,
             fpga_profile: str = FPGA_PROFILE, platform_profile: str = PLATFORM_PROFILE,
             latency_s: float | None = None,
             prepared: Setup | None = None) -> Table:
    """How many CSDs, and how much NAND on each, for ``clients`` clients of ``model``.

    Inputs:

    * ``clients`` -- clients whose evaluation keys the service must hold (each client's keys
      are the program's key bytes: 0.34 GB for the CNN of the paper's inputs, the paper states 0.5 GB);
    * ``model`` -- ``None``/``"paper"`` (the CNN of the paper's stated inputs), ``"fitted"`` (the
      program fitted to Table 2), ``"generated"`` (the CNN generator) or the path of a
      ``cryptoffload-he-trace/1`` JSON trace;
    * ``requests_per_client_per_s`` -- mean inference requests per client per second; with it
      the plan also sizes the CSD count for load (otherwise only for capacity);
    * ``nand_tb`` -- NAND per CSD in TB (default: the preset's, an assumed 7.68 TB);
    * ``keys_on_every_csd`` -- the paper's rule (section 4.5.1): every CSD holds every client's
      keys, so any idle CSD can serve any client (no doubled latency when two clients of one
      CSD collide, no CSD-to-CSD traffic); ``False`` partitions clients over CSDs instead;
    * ``max_utilisation`` -- the load a CSD may carry (fraction of its throughput, default 0.8);
    * ``latency_s`` -- a known single-CSD latency (skips the simulation).

    Returns a table (provenance ``mixed``): sizes are the program's (derived), latency and
    throughput per CSD are simulated (one CSD, the preset's NAND bandwidth), counts computed.
    """
    if isinstance(clients, bool) or not isinstance(clients, int) or clients < 1:
        raise ConfigError(f"clients must be a positive integer, got {clients!r}")
    if requests_per_client_per_s is not None and not (math.isfinite(requests_per_client_per_s)
                                                      and requests_per_client_per_s > 0):
        raise ConfigError("requests per client per second must be a positive number")
    if not 0 < max_utilisation <= 1:
        raise ConfigError(f"max utilisation must be in (0, 1], got {max_utilisation!r}")
    s = prepared or setup(model, fpga_profile=fpga_profile, platform_profile=platform_profile)
    csd = s.platforms["csd"]
    cap = (nand_tb * 1e12) if nand_tb is not None else csd.storage_bytes
    if not cap > 0:
        raise ConfigError("NAND capacity per CSD must be positive")
    weights = float(s.program.weight_bytes)
    keys = float(s.program.key_total_bytes)
    if latency_s is None:
        latency_s = simulate(s.compiled, csd, 1).mean_latency_s
    thr = 1.0 / latency_s
    rows: list[list[Any]] = [
        ["model", s.program.name, "", "derived", f"{s.program.source} program"],
        ["clients", clients, "", "input", ""],
        ["weights per model", weights / GB, "GB", "derived", "plaintexts the program reads (stored once per CSD)"],
        ["evaluation keys per client", keys / GB, "GB", "derived", "relinearisation and Galois keys the program reads"],
        ["latency of one inference on a CSD", latency_s * 1e3, "ms", "simulated",
         f"one CSD, NAND at {csd.nand_read_bps / GB:g} GB/s, DRAM {csd.dram_bytes / GB:g} GB"],
        ["throughput of one CSD", thr, "inferences/s", "simulated", "one inference at a time"],
    ]
    replicated = weights + clients * keys
    rows.append(["NAND per CSD with every client's keys on it", replicated / GB, "GB", "derived",
                 "the paper, section 4.5.1: 0.5 GB x 10,000 clients = 5,000 GB on one CSD"])
    rows.append(["NAND per CSD available", cap / GB, "GB", "derived", "preset (assumed) unless --nand-tb"])
    n_load = None
    if requests_per_client_per_s is not None:
        demand = clients * requests_per_client_per_s
        n_load = max(1, math.ceil(demand / (thr * max_utilisation)))
        rows.append(["offered load", demand, "inferences/s", "input", f"{requests_per_client_per_s:g} per client"])
        rows.append(["CSDs for the load", n_load, "CSDs", "derived", f"at most {max_utilisation:.0%} busy each"])
    per_csd_keys = cap - weights
    if per_csd_keys <= keys:
        rows.append(["CSDs for capacity", None, "CSDs", "derived",
                     f"a CSD cannot hold the weights and one client's keys ({(weights + keys) / GB:.3g} GB)"])
        n_cap = None
    elif keys_on_every_csd and replicated <= cap:
        n_cap = 1
        rows.append(["CSDs for capacity", 1, "CSDs", "derived", "every CSD holds every client's keys"])
    else:
        n_cap = math.ceil(clients * keys / per_csd_keys)
        why = ("every client's keys do not fit on one CSD: clients partitioned over CSDs (two requests of one "
               "CSD's clients then queue, or keys move between CSDs)") if keys_on_every_csd else "clients partitioned"
        rows.append(["CSDs for capacity", n_cap, "CSDs", "derived", why])
    if n_cap is not None:
        n = max(n_cap, n_load or 1)
        rows.append(["CSDs recommended", n, "CSDs", "derived", "max of capacity and load"])
        if keys_on_every_csd and replicated <= cap:
            rows.append(["NAND per CSD to provision", replicated / GB, "GB", "derived", "every client's keys on every CSD"])
        else:
            per = weights + math.ceil(clients / n) * keys
            rows.append(["NAND per CSD to provision", per / GB, "GB", "derived", f"{math.ceil(clients / n):,} clients per CSD"])
    title = f"CSD capacity plan for {clients:,} clients ({s.program.name})"
    return Table("plan_isc", title, ["quantity", "value", "unit", "provenance", "how"], rows, "mixed",
                 note="Sizes from the program; latency simulated on one CSD. The paper's rule keeps every client's "
                      "keys on every CSD (section 4.5.1).")


__all__ = ["GB", "Setup", "plan_isc", "profile_path", "setup"]
