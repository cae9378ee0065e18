"""The isc-he-cnn study's claims on a program that is not the paper's (a recorded trace, the
report's ``isc-he-cnn-trace`` run), with their bands (issue 26).

Why its own module: the paper's program is judged against the paper's numbers point by point
(``claims.py``, ``bands.py``); a trace is another program on the paper's platforms, so
its headline is what the platforms make of it -- one CSD at 8 GB/s against this run's CPU time,
and 16 CSDs against 16 FPGA&SSD -- each beside the paper's figure for scale, judged by the band
its own inputs allow.

What moves: the FPGA op times no source gives (``heax_set_c.toml``: ``keyswitch_s``,
``hmult_top_s``, ``ntt_limb_s``, each over its profile range) and our ``(L/8)^x`` key-switching
rule (2, ours, to 0, the paper's), the trace recompiled and simulated at each point; and, for
the speedup, the CPU time, measured here as the sum of the trace's per-op wall times, over its
noise computed from the same numbers (:func:`cpu_input`). A full run takes every corner; a quick
run stops at the tornado's ends (a lower bound of the joint band), as the paper's run does.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import replace
from typing import Callable, Mapping, Sequence

from cryptoffload.profiles.loader import load_profile
from cryptoffload.profiles.sensitivity import CONFIDENCE, Input, band, interval_text, profile_input, t_multiplier
from cryptoffload.report.result import Claim
from cryptoffload.sim.isc.fpga_cost import FpgaCostModel
from cryptoffload.sim.isc.simulation import simulate
from cryptoffload.sim.isc.program_steps import compile_steps
from cryptoffload.studies.bands import Banded, Memo
from cryptoffload.studies.isc_he_cnn.bands import RULE
from cryptoffload.studies.isc_he_cnn.bands import inputs as paper_inputs
from cryptoffload.studies.isc_he_cnn.claims import CPU_SPEEDUP, HEADLINE_ID, Headline, device_ratio_labels
from cryptoffload.studies.isc_he_cnn.paper import GB, PAPER_CPU_MS, PAPER_HEADLINE, PAPER_SIZES
from cryptoffload.studies.isc_he_cnn.tables import CpuReference, IscSetting
from cryptoffload.workloads.he_program import HEProgram

CPU = "CPU time (s)"
#: the inputs that move the FPGA cost model (``_cost_at``): three op times and our key-switching rule
COST_FIELDS = ("keyswitch_s", "hmult_top_s", "ntt_limb_s", RULE)
SPEEDUP_GBPS = 8.0
LATENCY = "latency at 8 GB/s (s)"  # an internal figure the speedup divides by


def _groups(program: HEProgram) -> list[list[float]]:
    """The trace's device-op wall times, grouped by op kind and level (repeats of one measurement)."""
    groups: dict[tuple[str, int], list[float]] = defaultdict(list)
    for op in program.ops:
        if op.on_device and op.wall_s is not None:
            groups[(op.op, op.level)].append(op.wall_s)
    return list(groups.values())


def wall_noise(program: HEProgram) -> float:
    """The standard error of the trace's summed device-op wall times, from its own scatter: ops
    of one kind at one level are repeats of one measurement, so a group of ``n`` with standard
    deviation ``s`` adds ``n s^2`` to the sum's variance (a group of one shows no spread and adds
    none)."""
    return math.sqrt(math.fsum(len(w) * statistics.variance(w) for w in _groups(program) if len(w) > 1))


def wall_degrees(program: HEProgram) -> int:
    """The degrees of freedom behind :func:`wall_noise`: each group's repeats less one, pooled."""
    return sum(len(w) - 1 for w in _groups(program) if len(w) > 1)


def cpu_input(program: HEProgram, cpu: CpuReference) -> Input:
    """The CPU time the speedup divides: measured, +- a t-interval at the stated confidence of
    its sum (:func:`wall_noise`, on :func:`wall_degrees` degrees of freedom; fixed, and said so,
    with fewer than the minimum repeats); cited (the paper's), fixed."""
    if cpu.provenance != "measured":
        return Input(CPU, cpu.seconds, cpu.seconds, cpu.seconds, cpu.what, cpu.provenance)
    se, df = wall_noise(program), wall_degrees(program)
    k = t_multiplier(df + 1)
    if k is None:
        return Input(CPU, cpu.seconds, cpu.seconds, cpu.seconds, f"measured: {interval_text(df + 1)}", cpu.provenance)
    return Input(CPU, cpu.seconds, cpu.seconds - k * se, cpu.seconds + k * se,
                 f"measured: the sum of this trace's device-op wall times, {interval_text(df + 1)} x its standard "
                 f"error ({se * 1e3:.3g} ms), from the scatter of its ops of one kind at one level", cpu.provenance)


def model_inputs(setting: IscSetting, fpga_profile: str) -> list[Input]:
    """The FPGA op times over their profile ranges and our key-switching rule (as the paper's run moves it)."""
    prof = load_profile(fpga_profile)
    rule = next(i for i in paper_inputs(setting, fpga_profile) if i.name == RULE)
    return [profile_input(prof, f"ops.{f}", f) for f in ("keyswitch_s", "hmult_top_s", "ntt_limb_s")] + [rule]


def _cost_at(cost: FpgaCostModel, ov: Mapping[str, float]) -> FpgaCostModel:
    """The FPGA cost model with the moved op times and rule."""
    return replace(cost, keyswitch_s=ov.get("keyswitch_s", cost.keyswitch_s),
                   hmult_top_s=ov.get("hmult_top_s", cost.hmult_top_s), ntt_limb_s=ov.get("ntt_limb_s", cost.ntt_limb_s),
                   keyswitch_exponent=ov.get(RULE, cost.keyswitch_exponent))


def _runner(setting: IscSetting, head: Headline, cpu_s: float) -> Callable[[Mapping[str, float]], dict[str, float]]:
    """The headline figures at the given overrides: the trace recompiled and simulated once per
    set of FPGA costs; the speedup then divides the CPU time (``cpu_s`` unless moved) by the latency."""
    sims: dict[tuple[tuple[str, float], ...], dict[str, float]] = {}
    presets, k, q, seed = setting.world.platforms, head.devices, setting.queries, setting.seed
    reduction, throughput = device_ratio_labels(k)

    def simulated(key: tuple[tuple[str, float], ...]) -> dict[str, float]:
        comp = compile_steps(setting.program, _cost_at(setting.world.cost, dict(key)), *setting.step_limits)
        out = {}
        if head.value(CPU_SPEEDUP) is not None:
            out[LATENCY] = simulate(comp, setting.csd, 1, q, source_gbps=SPEEDUP_GBPS, seed=seed).mean_latency_s
        if head.value(reduction) is not None:
            csd = simulate(comp, presets["csd"], 1, q, seed=seed)
            ssd = simulate(comp, presets["fpga_ssd"], k, q, seed=seed)
            out[reduction] = (1 - csd.mean_latency_s / ssd.mean_latency_s) * 100
            out[throughput] = k * csd.throughput_per_s / ssd.throughput_per_s
        return out

    def run(ov: Mapping[str, float]) -> dict[str, float]:
        key = tuple(sorted((n, v) for n, v in ov.items() if n in COST_FIELDS))
        if key not in sims:
            sims[key] = simulated(key)
        out = dict(sims[key])
        if LATENCY in out:
            out[CPU_SPEEDUP] = ov.get(CPU, cpu_s) / out[LATENCY]
        return out
    return run


def trace_bands(setting: IscSetting, head: Headline, cpu: CpuReference, fpga_profile: str) -> dict[str, Banded]:
    """Each headline figure of the run (its own value the nominal), banded over its inputs (every
    corner in a full run, the tornado's ends in a quick one): the ratios over the FPGA model's,
    the speedup over those and the CPU time."""
    model = model_inputs(setting, fpga_profile)
    cpu_in = cpu_input(setting.program, cpu)
    paper = {CPU_SPEEDUP: PAPER_HEADLINE["csd_vs_cpu"]}
    if head.devices == 16:  # the paper's ratios are 16 devices' (another count stays a headline row)
        reduction, throughput = device_ratio_labels(16)
        paper |= {reduction: PAPER_HEADLINE["latency_reduction_pct"], throughput: PAPER_HEADLINE["throughput_ratio"]}
    ours = {r.claim: r.value for r in head.rows if r.claim in paper and r.value is not None}
    run = _runner(setting, head, cpu.seconds)
    memo = Memo(lambda ov: run(ov) if ov else dict(ours))
    out = {}
    for name in ours:
        moving = model + [cpu_in] if name == CPU_SPEEDUP else model
        out[name] = Banded(name, band(memo.figure(name), moving, joint=not setting.quick), paper[name], moving)
    return out


def _why(setting: IscSetting) -> str:
    """What makes the trace another program than the paper's, in its own numbers."""
    summ = setting.program.summary(setting.world.cost)
    fetch_gb = (summ["weight_bytes"] + summ["key_bytes"]) / GB
    paper_gb = PAPER_SIZES["weights_gb"] + PAPER_SIZES["keys_gb"]
    return (f"not the paper's program: {summ['compute_s']:.3f} s of FPGA compute against {fetch_gb:.2f} GB to fetch "
            f"(the paper's: {PAPER_SIZES['compute_s']:g} s, {paper_gb:g} GB), so the paper's figure is for scale")


def _judged(b: Banded, pv: float, paper: str, ours: str, provenance: str, effect: float, why: str) -> Claim:
    """The figure's claim with its band, beside the paper's value ``pv`` for scale: stated, not
    judged (issue 35: the rule judges a prediction of the paper's value, and this program is not
    the paper's, so its tables say so in ``unjudged`` and its claims are kind ``claim``)."""
    return Claim(paper=paper, ours=ours, provenance=provenance, band=[b.band.low, b.band.high], paper_value=pv,
                 most_sensitive=b.band.most_sensitive, effect=effect,
                 why=f"not judged: {why}; the paper's {pv:g} is its own program's", table=HEADLINE_ID, key=[b.figure],
                 band_method=b.band.method)


def trace_claims(setting: IscSetting, head: Headline, cpu: CpuReference, bands: Mapping[str, Banded]) -> list[Claim]:
    """The speedup over this run's CPU time (*derived*: a CPU time over a simulated latency) and
    the k-device ratios (*simulated*), each judged by its band; its effect is the figure's
    distance from no effect (a speedup or ratio of 1, a reduction of 0)."""
    why, name = _why(setting), setting.program.name
    out = []
    sp = bands.get(CPU_SPEEDUP)
    if sp is not None:
        pv = PAPER_HEADLINE["csd_vs_cpu"]
        out.append(_judged(sp, pv, f"one CSD at 8 GB/s is {pv:g}x faster than one CPU thread (its own program, "
                                   f"{PAPER_CPU_MS:,.0f} ms)",
                           f"{name}: one CSD at 8 GB/s is {sp.band.nominal:.1f}x the {cpu.provenance} CPU time "
                           f"({cpu.seconds * 1e3:,.0f} ms)", "derived", sp.band.nominal - 1, why))
    k = head.devices
    for label, pv in zip(device_ratio_labels(k), (PAPER_HEADLINE["latency_reduction_pct"],
                                                   PAPER_HEADLINE["throughput_ratio"])):
        b = bands.get(label)
        if b is None:
            continue
        reduction = label.endswith("(%)")
        paper = (f"16 CSDs vs 16 FPGA&SSD: latency -{pv:g} %" if reduction
                 else f"16 CSDs vs 16 FPGA&SSD: throughput x{pv:.2f}")
        ours = (f"{name}: {k} CSDs vs {k} FPGA&SSD: latency -{b.band.nominal:.1f} %" if reduction
                else f"{name}: {k} CSDs vs {k} FPGA&SSD: throughput x{b.band.nominal:.2f}")
        out.append(_judged(b, pv, paper, ours, "simulated", b.band.nominal if reduction else b.band.nominal - 1, why))
    return out


def note(inputs: Sequence[Input], quick: bool) -> str:
    return ("A program that is not the paper's: each headline figure over "
            + ", ".join(i.name for i in inputs)
            + " (heax_set_c.toml ranges; the rule from 2, ours, to 0, the paper's), the trace recompiled and "
              f"simulated at each point; the speedup also over {CPU} (measured: a {CONFIDENCE * 100:g} % t-interval of the "
              "trace's summed wall times, from its own scatter). The paper's values are its "
              "own program's, for scale. "
            + ("A quick run stops at the tornado's ends (the corners can only widen the band)." if quick
               else "All corners."))


__all__ = ["COST_FIELDS", "CPU", "cpu_input", "wall_degrees", "model_inputs", "note", "trace_bands", "trace_claims", "wall_noise"]
