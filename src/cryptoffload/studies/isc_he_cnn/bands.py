"""The isc-he-cnn study's predicted figures with their bands (issue 26).

Why these three inputs: the audit found Table 2's agreement resting on them. ``keyswitch_s``
(``heax_set_c.toml``) is an assumed HEAX rate (the paper quotes none); ``network.hidden``
(``he_cnn_paper_inputs.toml``) an assumed CryptoNets width (the paper lists no layer sizes); and
the ``(L/8)^2`` growth of key switching with the data primes is our rule, where the paper says
key switching is constant over levels (exponent 0). Each moves over its profile range (the
rule between 2, ours, and 0, the paper's); the program is rebuilt when ``hidden`` moves and
recompiled when a cost moves, then simulated as the study does.

Figures: Table 2's latency at every bandwidth, the headline ratios of 16 CSDs against 16
FPGA&SSD (latency reduction, throughput ratio), every cell of Table 3 and the workload's
predicted sizes and compute (issue 35: every cell beside a paper value is judged). A full run finds the joint band at the corners;
a quick run stops at the tornado's ends (a lower bound of the joint band; the note says so).
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Callable, Mapping

from cryptoffload.profiles.loader import load_profile
from cryptoffload.profiles.sensitivity import Input, band, profile_input, written_with_values
from cryptoffload.report.provenance import of_fit
from cryptoffload.sim.isc.simulation import simulate
from cryptoffload.sim.isc.program_steps import CompiledProgram, compile_steps
from cryptoffload.studies import frame
from cryptoffload.studies.bands import Banded, Memo
from cryptoffload.studies.isc_he_cnn.paper import GB, TABLE3_COLUMNS
from cryptoffload.studies.isc_he_cnn.tables import IscSetting, table3
from cryptoffload.workloads.he_cnn_eva import paper_inputs_program
from cryptoffload.workloads.he_program import HEProgram

KEYSWITCH, HIDDEN, RULE = "keyswitch_s", "hidden", "key switching (L/8)^x rule"
HEADLINE_DEVICES = 16
REDUCTION, THROUGHPUT = "16 CSDs vs 16 FPGA&SSD: latency reduction (%)", "16 CSDs vs 16 FPGA&SSD: throughput ratio"


def table2_label(gbps: float) -> str:
    return f"Table 2 at {gbps:g} GB/s (ms)"


def inputs(setting: IscSetting, fpga_profile: str) -> list[Input]:
    """The three inputs over their ranges (the rule: 0, the paper's, to 2, ours)."""
    return [profile_input(load_profile(fpga_profile), "ops.keyswitch_s", KEYSWITCH),
            profile_input(load_profile(setting.inputs_profile), "network.hidden", HIDDEN),
            Input(RULE, setting.world.cost.keyswitch_exponent, 0.0, 2.0,
                  "x = 2: ours (key switching does ~L(L+1) limb transforms); x = 0: the paper's (constant over "
                  "levels, section 4.3)", of_fit(None))]


def _program(setting: IscSetting, folder: Path) -> Callable[[int], HEProgram]:
    """The paper-inputs program with ``hidden`` moved (one build per value)."""
    built: dict[int, HEProgram] = {}
    prof = load_profile(setting.inputs_profile)

    def program(hidden: int) -> HEProgram:
        if hidden == int(prof.value("network.hidden")):
            return setting.program
        if hidden not in built:
            built[hidden] = paper_inputs_program(str(written_with_values(prof, {"network.hidden": hidden}, folder)))
        return built[hidden]
    return program


def table3_label(k: int, column: str) -> str:
    return f"Table 3, {k} device(s): {column}"


def workload_label(quantity: str) -> str:
    return f"workload: {quantity}"


#: the workload's quantities a band moves, and how each is read from the program's summary
WORKLOAD = {"evaluation keys per client (GB)": lambda s: s["key_bytes"] / GB,
            "memory touched per inference (GB)": lambda s: s["touched_bytes"] / GB,
            "FPGA compute per inference (s)": lambda s: s["compute_s"]}


def _table3_figures(setting: IscSetting, compiled: CompiledProgram) -> dict[str, float]:
    """Table 3's cells, simulated as the study's table is (quietly: no progress ticks)."""
    with frame.quiet():
        t3 = table3(setting, compiled, "band")
    return {table3_label(r.devices, col): v for r in t3.rows for col in TABLE3_COLUMNS[1:]
            if (v := getattr(r, col)) is not None}


def _runner(setting: IscSetting, folder: Path, names: set[str]) -> Callable[[Mapping[str, float]], dict[str, float]]:
    """One simulation of every figure in ``names`` at the given overrides."""
    program = _program(setting, folder)
    presets = setting.world.platforms

    def run(ov: Mapping[str, float]) -> dict[str, float]:
        cost = replace(setting.world.cost, keyswitch_s=ov.get(KEYSWITCH, setting.world.cost.keyswitch_s),
                       keyswitch_exponent=ov.get(RULE, setting.world.cost.keyswitch_exponent))
        hidden = int(ov.get(HIDDEN, load_profile(setting.inputs_profile).value("network.hidden")))
        compiled = compile_steps(program(hidden), cost, *setting.step_limits)
        out = {table2_label(b): simulate(compiled, setting.csd, 1, setting.queries, source_gbps=b,
                                         seed=setting.seed).mean_latency_s * 1e3 for b in setting.bandwidths}
        if REDUCTION in names:
            csd = simulate(compiled, presets["csd"], 1, setting.queries, seed=setting.seed)
            ssd = simulate(compiled, presets["fpga_ssd"], HEADLINE_DEVICES, setting.queries, seed=setting.seed)
            out[REDUCTION] = (1 - csd.mean_latency_s / ssd.mean_latency_s) * 100
            out[THROUGHPUT] = HEADLINE_DEVICES * csd.throughput_per_s / ssd.throughput_per_s
        if any(n.startswith("Table 3") for n in names):
            out |= _table3_figures(setting, compiled)
        summary = program(hidden).summary(cost)
        out |= {workload_label(q): read(summary) for q, read in WORKLOAD.items()}
        return out
    return run


def isc_bands(setting: IscSetting, ours: Mapping[str, float], paper: Mapping[str, float | None],
              fpga_profile: str) -> dict[str, Banded]:
    """Bands of ``ours`` (figures named as above: Table 2's points, the headline ratios, Table
    3's cells and the workload's quantities), each the study's own number at the nominal inputs;
    ``paper``: the paper's value of each."""
    moving = inputs(setting, fpga_profile)
    with tempfile.TemporaryDirectory(prefix="isc-bands-") as tmp:
        run = _runner(setting, Path(tmp), set(ours))
        memo = Memo(lambda ov: run(ov) if ov else dict(ours))
        return {name: Banded(name, band(memo.figure(name), moving, joint=not setting.quick), paper.get(name), moving)
                for name in ours}


def note(quick: bool) -> str:
    return ("Each figure over keyswitch_s (heax_set_c.toml, assumed: +-20 %), network.hidden (he_cnn_paper_inputs.toml, "
            "assumed: 80 .. 120) and the exponent of our (L/8)^x key-switching rule (2, ours, to 0, the paper's "
            "constant), the program rebuilt and simulated as above at each point; "
            + ("a quick run stops at the tornado's ends (6 runs; the corners can only widen the band)."
               if quick else "all 8 corners."))


__all__ = ["HEADLINE_DEVICES", "HIDDEN", "KEYSWITCH", "REDUCTION", "RULE", "THROUGHPUT", "WORKLOAD", "inputs", "isc_bands",
           "note", "table2_label", "table3_label", "workload_label"]
