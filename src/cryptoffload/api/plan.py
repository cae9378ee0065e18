"""The planners for Python users: decisions computed from the simulators' cost models.

    >>> from cryptoffload import plan
    >>> table = plan.bsgs([1, 2, 4, 8, 16])              # BSGS strategy and baby-step size per device count
    >>> table.columns
    ['N', 'strategy', 'bs', 'gs', 'predicted ms', 'naive (bs=169) ms', 'speedup']
    >>> p = plan.isc(10_000, requests_per_client=0.01)  # computational storage for 10,000 clients
    >>> p.csds, p.csds_for_capacity, p.csds_for_load

Each planner is the command of the same name (``cryptoffload plan bsgs``, ``plan isc``), with
the same inputs, bounds and refusals; what it returns is a value, not a printed table:
:func:`bsgs` a :class:`~cryptoffload.report.result.Table` (``columns``, ``rows``),
:func:`isc` an :class:`~cryptoffload.policies.isc_plan.IscPlan` (the recommended CSD count,
the bounds behind it, NAND per CSD). :data:`PLANNERS` lists them by name.

    >>> choice = plan.bootstrap(1 << 16)                # a CKKS bootstrap's level budget and baby steps
    >>> choice.chosen.plan                              # a BootstrapPlan: what bootstrap_setup takes

:func:`bootstrap` a :class:`~cryptoffload.policies.bootstrap_plan.PlanChoice` (the chosen
:class:`~cryptoffload.crypto.ckks.bootstrap.BootstrapPlan` and OpenFHE's default, each with
its predicted, *simulated*, stage times). A new planner is one function here, calling its
policy, and one entry in :data:`PLANNERS`; the command of the same name calls that function.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

from cryptoffload.checks import (CLIENT_RATE, CLIENTS, DEVICES, DIAGONALS, LEVEL, LINK_GBPS, LINK_LATENCY_US, RING_DEGREE,
                                 SIZE_TB, SLOTS)
from cryptoffload.errors import ConfigError
from cryptoffload.policies.bootstrap_plan import PlanChoice
from cryptoffload.policies.isc_plan import IscPlan
from cryptoffload.report.result import Table

__all__ = ["PLANNERS", "IscPlan", "PlanChoice", "Table", "bootstrap", "bsgs", "isc"]

#: Ceilings of the planners' sizes, as ``plan bsgs`` has them: the tuner's search grows with
#: both (the paper plans up to 16 devices and C = 32768), and without them a typo hangs.
MAX_DEVICES = 1024
MAX_DIAGONALS = 65536
#: Ceilings of ``plan bootstrap``: a modulus chain of at most 120 levels, and 64 devices (a
#: bootstrap stage has at most 2^(k+1) - 1 diagonals; the multi-device paper plans up to 16)
MAX_BOOT_DEPTH = 120
MAX_BOOT_DEVICES = 64


def bsgs(devices: Sequence[int] = (1, 2, 4, 8, 16), *, profile: str = "bsgs_u280", diagonals: Optional[int] = None,
         strategy: Optional[str] = None, space: str = "all", naive_baby: Optional[int] = None,
         exhaustive: bool = False) -> Table:
    """For each device count N: the BSGS strategy and baby-step size the tuner picks, its
    predicted time, and the speed-up over a single-device baby-step size kept as is.
    ``profile``: a cost profile name or TOML path (``cryptoffload calibrate ckks`` writes one);
    ``diagonals``: C (default: the profile's, else 32768); ``strategy``: replicate, broadcast or
    split-giant (default: all); ``space``: all, pow2 or divisors; ``exhaustive``: add the
    tuner's gap to the exhaustive search."""
    from cryptoffload.policies.bsgs_plan import plan_bsgs
    from cryptoffload.policies.bsgs_tuner import SPACES
    from cryptoffload.workloads.bsgs import STRATEGIES

    if isinstance(devices, (int, str)) or not devices:
        raise ConfigError(f"plan.bsgs: devices must be a list of device counts, e.g. [1, 2, 4], got {devices!r}")
    counts = [DEVICES.check("devices", n, maximum=MAX_DEVICES) for n in devices]
    if diagonals is not None:
        DIAGONALS.check("diagonals", diagonals, maximum=MAX_DIAGONALS)
    if naive_baby is not None:
        DIAGONALS.check("naive_baby", naive_baby, maximum=diagonals or MAX_DIAGONALS)
    if strategy is not None and strategy not in STRATEGIES:
        raise ConfigError(f"plan.bsgs: unknown strategy {strategy!r} (known: {', '.join(STRATEGIES)})")
    if space not in SPACES:
        raise ConfigError(f"plan.bsgs: unknown baby-step space {space!r} (known: {', '.join(SPACES)})")
    return plan_bsgs(profile, counts, diagonals=diagonals, strategy=strategy, space=space, naive_baby=naive_baby,
                     exhaustive=exhaustive)


def isc(clients: int, *, model: Optional[str] = None, requests_per_client: Optional[float] = None,
        nand_tb: Optional[float] = None, partition: bool = False) -> IscPlan:
    """How many computational storage devices (CSDs), and how much NAND on each, for
    ``clients`` clients of encrypted CNN inference (the reasoning of the in-storage HE paper).
    ``model``: ``paper`` (default: the paper's stated inputs), ``fitted``, ``generated`` or a
    trace JSON (``he-cnn infer --trace``); ``requests_per_client``: inferences per client per
    second (sizes for load too; without it, for capacity only); ``nand_tb``: NAND per CSD;
    ``partition``: split clients over CSDs instead of every CSD holding every client's keys."""
    from cryptoffload.policies.isc_plan import plan_isc
    from cryptoffload.sim.isc_world import load_isc_world

    CLIENTS.check("clients", clients)
    if requests_per_client is not None:
        CLIENT_RATE.check("requests_per_client", requests_per_client)
    if nand_tb is not None:
        SIZE_TB.check("nand_tb", nand_tb)
    return plan_isc(clients, load_isc_world(model), requests_per_client_per_s=requests_per_client, nand_tb=nand_tb,
                    keys_on_every_csd=not partition)


def bootstrap(ring: int = 1 << 16, *, slots: int = 0, levels_after: int = 2, depth: Optional[int] = None,
              devices: int = 1, profile: Optional[str] = None, link_gbps: float = 100.0,
              link_latency_us: float = 1.0) -> PlanChoice:
    """A CKKS bootstrap's level budget and baby steps (OpenFHE's ``EvalBootstrapSetup`` knobs)
    for ring degree ``ring`` and ``slots`` (0: full packing), leaving ``levels_after`` levels on a
    chain of ``depth`` (default: what OpenFHE's default plan needs, ``levels_after + 23``), split
    over ``devices`` joined by a link of ``link_gbps`` and ``link_latency_us``, priced with the
    per-level op costs of ``profile`` (default: the shipped OpenFHE profile nearest the ring);
    OpenFHE's default beside it. Predicted times are simulated."""
    from cryptoffload.policies.bootstrap_costs import load_costs
    from cryptoffload.policies.bootstrap_model import OPENFHE_DEFAULT, BootstrapSetting, bootstrap_depth
    from cryptoffload.policies.bootstrap_plan import check_fits, plan_bootstrap

    RING_DEGREE.check("--ring", ring)
    if ring & (ring - 1):
        raise ConfigError(f"--ring must be a power of two from {RING_DEGREE.floor:,.0f} to {RING_DEGREE.ceiling:,.0f}, "
                          f"got {ring}")
    SLOTS.check("--slots", slots)
    if slots > ring // 2 or (slots and (slots < 2 or slots & (slots - 1))):
        raise ConfigError(f"--slots must be 0 (full packing) or a power of two from 2 to {ring // 2}, got {slots}")
    LEVEL.check("--levels-after", levels_after, maximum=MAX_BOOT_DEPTH - 16)   # (1, 1) takes 16 levels
    if depth is not None:
        LEVEL.check("--depth", depth, maximum=MAX_BOOT_DEPTH, allow_zero=False)
    DEVICES.check("--devices", devices, maximum=MAX_BOOT_DEVICES)
    gbps, latency = LINK_GBPS.check("--link-gbps", link_gbps), LINK_LATENCY_US.check("--link-latency-us", link_latency_us)
    need = bootstrap_depth(OPENFHE_DEFAULT.level_budget) + levels_after
    if depth is None and need > MAX_BOOT_DEPTH:
        raise ConfigError(f"--levels-after {levels_after} makes the default --depth {need}, above {MAX_BOOT_DEPTH}; "
                          "give --depth (at most 120) or fewer levels after")
    setting = BootstrapSetting(ring, need if depth is None else depth, levels_after, slots, devices,
                               bandwidth_Bps=gbps * 1e9 / 8, latency_s=latency * 1e-6)
    check_fits(setting)
    return plan_bootstrap(setting, load_costs(profile, ring))


#: every planner, by the name ``cryptoffload plan NAME`` gives it
PLANNERS: dict[str, Callable[..., object]] = {"bsgs": bsgs, "isc": isc, "bootstrap": bootstrap}
