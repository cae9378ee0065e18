"""What a simulation of the in-storage platforms starts from: the FPGA cost model, the
platform presets and the HE program compiled into steps -- the *world* the isc-he-cnn study
simulates and the capacity planner sizes.

Why here, in ``sim/``: loading it joins the simulator's own pieces (cost model, presets, step
compiler) to a program from ``workloads/``, and refuses a platform whose DRAM cannot hold the
program -- a simulation concern. The planner (``policies/isc_plan.py``) receives a loaded world
instead of loading one, so it stays a decision rule; the study and ``cryptoffload plan isc``
load it here.
"""

from __future__ import annotations

from dataclasses import dataclass

from cryptoffload.sim.isc.fpga_cost import FPGA_PROFILE, FpgaCostModel
from cryptoffload.sim.isc.platform import GB, PLATFORM_PROFILE, PlatformPreset, load_platforms
from cryptoffload.sim.isc.program_steps import CompiledProgram, check_fits, compile_steps
from cryptoffload.workloads.he_cnn_eva import PAPER_INPUTS_PROFILE
from cryptoffload.workloads.he_cnn_fitted import PAPER_PROFILE
from cryptoffload.workloads.he_models import load_model
from cryptoffload.workloads.he_program import HEProgram

#: Steps of at most this much compute (s) and fetched data (bytes) unless told otherwise.
DEFAULT_STEP_LIMITS = (2e-3, 16e6)


@dataclass
class IscWorld:
    """The FPGA cost model, the platform presets, the program compiled into steps, and the
    profiles they came from (as results name them)."""

    cost: FpgaCostModel
    platforms: dict[str, PlatformPreset]
    program: HEProgram
    compiled: CompiledProgram
    profiles: list[str]


def profile_path(name: str) -> str:
    """A profile name as the path shown in results (``profiles/NAME.toml``); a path as given."""
    return f"profiles/{name}.toml" if "/" not in name and not name.endswith(".toml") else name


def load_isc_world(model: str | None = None, *, fpga_profile: str = FPGA_PROFILE,
                   platform_profile: str = PLATFORM_PROFILE, inputs_profile: str = PAPER_INPUTS_PROFILE,
                   fitted_profile: str = PAPER_PROFILE, dram_gb: float | None = None,
                   step_limits: tuple[float, float] = DEFAULT_STEP_LIMITS) -> IscWorld:
    """Load the cost model, the presets and the program (``model`` as ``--model`` names it:
    see ``workloads/he_models.py``); refuse a platform whose DRAM cannot hold the program (the
    message names the platform and the op)."""
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
    return IscWorld(cost, platforms, program, compiled, profiles)


__all__ = ["DEFAULT_STEP_LIMITS", "IscWorld", "load_isc_world", "profile_path"]
