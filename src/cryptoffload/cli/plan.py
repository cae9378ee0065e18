"""``cryptoffload plan``: capacity planners built on the simulators (the planning itself lives
in the layers below; these commands parse options and print the table)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import typer

from cryptoffload.checks import (CLIENT_RATE, CLIENTS, DEVICES, DIAGONALS, LEVEL, LINK_GBPS, LINK_LATENCY_US, RING_DEGREE,
                                 SIZE_TB, SLOTS, parse_ints)
from cryptoffload.cli.root import console, json_option, number_option, print_tables_json
from cryptoffload.papers import PAPERS

if TYPE_CHECKING:
    from cryptoffload.policies.bootstrap_plan import PlanChoice
    from cryptoffload.policies.isc_plan import IscPlan
    from cryptoffload.report.result import Table

app = typer.Typer(no_args_is_help=True, help="Capacity planners built on the simulators.")

#: Ceilings of the planners' sizes: the tuner's search grows with both (the paper plans up to 16
#: devices and C = 32768; 65536 slots is CKKS at N = 2^17), and without them a typo hangs.
MAX_DEVICES = 1024
MAX_DIAGONALS = 65536


@app.command("bsgs")
def plan_bsgs_cmd(
    devices: str = typer.Option("1,2,4,8,16", "--devices", help="Device counts N to plan for."),
    profile: str = typer.Option("bsgs_u280", "--profile", help="Cost profile (name or TOML; `calibrate ckks` writes one)."),
    diagonals: Optional[int] = number_option(None, "--diagonals", bound=DIAGONALS, maximum=MAX_DIAGONALS,
                                             help="Diagonals C (default: the profile's, else 32768)."),
    strategy: Optional[str] = typer.Option(None, "--strategy", help="replicate, broadcast or split-giant (default: all)."),
    space: str = typer.Option("all", "--space", help="Baby-step sizes searched: all, pow2 or divisors."),
    naive_baby: Optional[int] = number_option(None, "--naive-bs", bound=DIAGONALS, maximum=MAX_DIAGONALS,
                                              help="Single-device bs to compare with (default: the best for N = 1)."),
    exhaustive: bool = typer.Option(False, "--exhaustive", help="Also run the exhaustive search and print the tuner's gap."),
    as_json: bool = json_option("the plan's table and the notes on its baseline"),
) -> None:
    """Choose the BSGS strategy and baby-step size per device count, and print the predicted time."""
    from cryptoffload.errors import ConfigError
    from cryptoffload.policies.bsgs_tuner import SPACES
    from cryptoffload.workloads.bsgs import STRATEGIES

    counts = [DEVICES.check("--devices", n, maximum=MAX_DEVICES) for n in parse_ints("--devices", devices)]
    if naive_baby is not None and diagonals is not None:
        DIAGONALS.check("--naive-bs", naive_baby, maximum=diagonals)
    if strategy is not None and strategy not in STRATEGIES:
        raise ConfigError(f"--strategy: unknown BSGS strategy {strategy!r} (known: {', '.join(STRATEGIES)})")
    if space not in SPACES:
        raise ConfigError(f"--space: unknown baby-step space {space!r} (known: {', '.join(SPACES)})")
    from cryptoffload.policies.bsgs_plan import plan_bsgs
    from cryptoffload.report.tables import render_table

    table = plan_bsgs(profile, counts, diagonals=diagonals, strategy=strategy, space=space,
                      naive_baby=naive_baby, exhaustive=exhaustive)
    notes = _naive_baselines(table, profile, diagonals, strategy, space, naive_baby)
    if as_json:
        print_tables_json([table], notes)
        return
    render_table(table, console)
    for line in notes:
        console.print(line, markup=False, highlight=False)


def _speedup_at_largest_n(table: Table) -> tuple[int, float]:
    n, speedup = table.columns.index("N"), table.columns.index("speedup")
    row = max(table.rows, key=lambda r: r[n])
    return row[n], row[speedup]


def _naive_baselines(table: Table, profile: str, diagonals: Optional[int], strategy: Optional[str], space: str,
                     naive_baby: Optional[int]) -> list[str]:
    """Which naive baseline the speed-ups are against, and how it differs from the one of the
    bsgs-multidevice study's Table 1 (the profile's ``shape.naive_baby``, 256 for the paper's
    U280s): the two commands otherwise give two speed-ups for one question.

    The planner's naive column is named by its label (``plan_bsgs`` returns a table: the bs
    is not a field of it)."""
    from cryptoffload.policies.bsgs_plan import plan_bsgs
    from cryptoffload.profiles.loader import load_profile
    from cryptoffload.studies.bsgs_multidevice.paper import paper_inputs

    label = next(c for c in table.columns if c.startswith("naive (")).removesuffix(" ms")
    how = (f"--naive-bs {naive_baby}" if naive_baby is not None else
           "the fastest baby-step size on one device for this profile" + ("" if space == "all" else f" ({space} sizes)"))
    n, speedup = _speedup_at_largest_n(table)
    lines = [f"{label}: {how}, kept as is on N devices with replicated baby steps; "
             f"speed-up at N = {n}: {speedup:.2f}x"]
    study = paper_inputs(load_profile(profile), [n])
    study_bs = study.naive_baby
    if label == f"naive (bs={study_bs})" or diagonals not in (None, study.diagonals):
        return lines  # the same baseline, or another product than the study's (C = its diagonals)
    other = plan_bsgs(profile, [n], diagonals=diagonals, strategy=strategy, space=space, naive_baby=study_bs)
    speedup_study = _speedup_at_largest_n(other)[1]
    lines += [f"the study's Table 1 (bsgs-multidevice) keeps bs = {study_bs} instead (the profile's shape.naive_baby, "
              f"else the paper's 256): against it, speed-up at N = {n}: {speedup_study:.2f}x here",
              f"the study also tunes only powers of two with replicated baby steps: --naive-bs {study_bs} --space pow2 "
              "--strategy replicate plans as it does"]
    return lines


@app.command("isc", help="How many CSDs and how much NAND for N clients of a model (the reasoning of "
                          f"{PAPERS['in-storage-he'].cite()}).")
def plan_isc_cmd(
    clients: int = number_option(..., "--clients", bound=CLIENTS, help="Clients whose evaluation keys the service holds."),
    model: Optional[str] = typer.Option(None, "--model", help="paper (default: the paper's stated inputs), fitted, generated, or a trace JSON."),
    requests_per_client: Optional[float] = number_option(None, "--requests-per-client", bound=CLIENT_RATE,
                                                         help="Inferences per client per second (sizes for load too)."),
    nand_tb: Optional[float] = number_option(None, "--nand-tb", bound=SIZE_TB,
                                             help="NAND per CSD in TB (default: the preset's)."),
    partition: bool = typer.Option(False, "--partition", help="Split clients over CSDs instead of keys on every CSD."),
    as_json: bool = json_option("the plan's table, the recommendation and the bounds it took"),
) -> None:
    from cryptoffload.policies.isc_plan import plan_isc
    from cryptoffload.report.tables import render_table
    from cryptoffload.sim.isc.world import load_isc_world
    from cryptoffload.studies.isc_he_cnn.plan_table import plan_table

    plan = plan_isc(clients, load_isc_world(model), requests_per_client_per_s=requests_per_client, nand_tb=nand_tb,
                    keys_on_every_csd=not partition)
    notes = [_isc_bounds(plan)] if plan.csds is not None else []
    if as_json:
        from dataclasses import asdict

        print_tables_json([plan_table(plan)], notes, plan=asdict(plan))
        return
    render_table(plan_table(plan), console)
    for line in notes:
        console.print(line, markup=False, highlight=False)


def _isc_bounds(plan: IscPlan) -> str:
    """The recommendation and the bounds it took: without a request rate the count is sized by
    capacity alone, which the reader must know before buying that many CSDs."""
    csds = f"{plan.csds:,} CSD{'s' if plan.csds != 1 else ''} recommended"
    per_csd = plan.throughput_per_s * plan.max_utilisation
    if plan.csds_for_load is None:
        return (f"{csds}, sized by capacity only: no --requests-per-client given, so load is not sized "
                f"(one CSD carries {per_csd:.3g} inferences/s at {plan.max_utilisation:.0%} busy)")
    return (f"{csds}: the larger of {plan.csds_for_capacity:,} for capacity and {plan.csds_for_load:,} for the load "
            f"({plan.offered_per_s:g} inferences/s, {per_csd:.3g} per CSD at {plan.max_utilisation:.0%} busy)")



#: Ceilings of `plan bootstrap` (the API's, where they are checked): rings 2^10 .. 2^17
#: (checks.RING_DEGREE), a chain of at most 120 levels, 64 devices
MAX_BOOT_DEPTH = 120
MAX_BOOT_DEVICES = 64


@app.command("bootstrap")
def plan_bootstrap_cmd(
    ring: int = number_option(65536, "--ring", bound=RING_DEGREE, help="Ring degree N (a power of two, 1024 to 131072)."),
    slots: int = number_option(0, "--slots", bound=SLOTS,
                               help="Slots to bootstrap (0: full packing, N/2; else a power of two)."),
    levels_after: int = number_option(2, "--levels-after", bound=LEVEL, maximum=MAX_BOOT_DEPTH - 16,
                                      help="Levels the application needs after bootstrapping."),
    depth: Optional[int] = number_option(None, "--depth", bound=LEVEL, maximum=MAX_BOOT_DEPTH, allow_zero=False,
                                         help="Levels of the modulus chain (default: what OpenFHE's default plan "
                                              "needs, levels-after + 23)."),
    devices: int = number_option(1, "--devices", bound=DEVICES, maximum=MAX_BOOT_DEVICES,
                                 help="Devices to split the stages over (1 to 64)."),
    profile: Optional[str] = typer.Option(None, "--profile", help="Per-level op-cost profile (name or TOML; default: "
                                                                  "the shipped OpenFHE profile nearest the ring)."),
    link_gbps: float = number_option(100.0, "--link-gbps", bound=LINK_GBPS,
                                     help="Link bandwidth between devices in Gb/s (N > 1)."),
    link_latency_us: float = number_option(1.0, "--link-latency-us", bound=LINK_LATENCY_US,
                                           help="Link latency in us (N > 1)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (for scripts) instead of tables."),
) -> None:
    """Choose a CKKS bootstrap's level budget and baby steps (OpenFHE's EvalBootstrapSetup knobs) from per-op costs, beside OpenFHE's default; times are predicted (simulated)."""
    from cryptoffload.api import plan as api_plan

    choice = api_plan.bootstrap(ring, slots=slots, levels_after=levels_after, depth=depth, devices=devices,
                                profile=profile, link_gbps=link_gbps, link_latency_us=link_latency_us)
    _print_bootstrap(choice, as_json)


def _print_bootstrap(choice: PlanChoice, as_json: bool) -> None:
    """Tables on a terminal, or one JSON object (values one per line, never wrapped)."""
    from cryptoffload.cli.root import print_json
    from cryptoffload.policies.bootstrap_plan_report import choice_data, stages_table, summary_table
    from cryptoffload.report.tables import render_table

    if as_json:
        print_json(choice_data(choice))
        return
    render_table(summary_table(choice), console)
    render_table(stages_table(choice.chosen), console)
