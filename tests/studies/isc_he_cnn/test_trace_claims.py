"""isc-he-cnn on a program that is not the paper's (a trace): its headline figures are claims,
banded over the FPGA op times' profile ranges, our key-switching rule and the CPU time's noise
computed from the trace's own wall times; each judged against the paper's figure by its band."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import pytest

from cryptoffload.profiles import load_profile
from cryptoffload.profiles.sensitivity import Band, Swing, t_multiplier
from cryptoffload.studies.isc_he_cnn import claims
from cryptoffload.studies.isc_he_cnn import tables
from cryptoffload.studies.isc_he_cnn import trace_claims as tc
from cryptoffload.studies.isc_he_cnn import study as st
from cryptoffload.studies.bands import Banded
from cryptoffload.studies.isc_he_cnn.bands import RULE
from cryptoffload.studies.isc_he_cnn.tables import CpuReference
from cryptoffload.workloads.he_cnn_generated import generate_cnn

SPEEDUP, REDUCTION, THROUGHPUT = ("CSD at 8 GB/s vs CPU: speedup", "16 CSDs vs 16 FPGA&SSD: latency reduction (%)",
                                  "16 CSDs vs 16 FPGA&SSD: throughput ratio")


def _op(op: str, level: int, wall_s: float | None, on_device: bool = True) -> SimpleNamespace:
    return SimpleNamespace(op=op, level=level, wall_s=wall_s, on_device=on_device)


def test_wall_noise_is_the_scatter_of_same_kind_ops_summed() -> None:
    program = SimpleNamespace(ops=[_op("rotate", 3, 0.010), _op("rotate", 3, 0.014),  # n s^2 = 2 * 8e-6
                                   _op("add", 1, 0.001), _op("add", 1, 0.002), _op("add", 1, 0.003),  # 3 * 1e-6
                                   _op("rotate", 2, 0.5),  # alone: no spread known
                                   _op("encode", 3, 9.0, on_device=False)])  # host op: not in the CPU time
    assert tc.wall_noise(program) == pytest.approx(math.sqrt(19e-6), rel=1e-12)  # type: ignore[arg-type]


def test_the_cpu_time_moves_over_a_t_interval_when_measured_and_not_when_cited() -> None:
    walls = [0.001, 0.003, 0.002, 0.004, 0.002, 0.003]  # one group of six: five degrees of freedom
    program = SimpleNamespace(ops=[_op("add", 1, w) for w in walls])
    se, t5 = tc.wall_noise(program), 2.5705818366147395  # type: ignore[arg-type]
    assert tc.wall_degrees(program) == 5  # type: ignore[arg-type]
    got = tc.cpu_input(program, CpuReference(0.015, "measured", "sum"))  # type: ignore[arg-type]
    assert (got.name, got.nominal, got.provenance) == (tc.CPU, 0.015, "measured")
    assert (got.low, got.high) == (pytest.approx(0.015 - t5 * se), pytest.approx(0.015 + t5 * se))
    # two repeats: no interval is claimed from them (issue 35), the CPU time is not moved
    few = SimpleNamespace(ops=[_op("add", 1, 0.001), _op("add", 1, 0.003)])
    fixed = tc.cpu_input(few, CpuReference(0.004, "measured", "sum"))  # type: ignore[arg-type]
    assert (fixed.low, fixed.high) == (0.004, 0.004) and "fewer than the 5" in fixed.why
    cited = tc.cpu_input(program, CpuReference(11.359, "cited", "the paper's"))  # type: ignore[arg-type]
    assert (cited.low, cited.nominal, cited.high, cited.provenance) == (11.359, 11.359, 11.359, "cited")


def _banded(name: str, low: float, nominal: float, high: float) -> Banded:
    swing = Swing(RULE, 0.0, 2.0, low, high)
    return Banded(name, Band(nominal, low, high, (swing,), "16 corners"), None, [])


def test_each_figure_is_stated_with_its_band_beside_the_papers_for_scale() -> None:
    prog = SimpleNamespace(name="trace-x", summary=lambda cost: {"compute_s": 0.031, "weight_bytes": 0.09e9,
                                                                 "key_bytes": 0.32e9})
    setting = SimpleNamespace(program=prog, world=SimpleNamespace(cost=None))
    head = claims.Headline(16, [])
    bands = {SPEEDUP: _banded(SPEEDUP, 9.0, 16.3, 17.0), REDUCTION: _banded(REDUCTION, 85.0, 86.8, 87.0),
             THROUGHPUT: _banded(THROUGHPUT, 3.0, 7.5, 7.6)}
    sp, red, thr = tc.trace_claims(setting, head, CpuReference(0.93, "measured", "sum"), bands)  # type: ignore[arg-type]
    # another program than the paper's: the paper's figure is for scale, never judged (issue 35)
    assert (sp.kind, sp.provenance, sp.paper_value, sp.band) == ("claim", "derived", 10.6, [9.0, 17.0])
    assert sp.ours == "trace-x: one CSD at 8 GB/s is 16.3x the measured CPU time (930 ms)"
    assert (red.kind, red.provenance, red.paper_value) == ("claim", "simulated", 72.2)
    assert red.why.startswith("not judged: not the paper's program: 0.031 s of FPGA compute against 0.41 GB")
    assert (thr.kind, thr.paper_value, thr.effect) == ("claim", 3.6, pytest.approx(6.5))
    # an effect is the distance from no effect: a speedup of 1, a reduction of 0
    assert (sp.effect, red.effect) == (pytest.approx(15.3), 86.8)
    assert not thr.within_noise and _within(THROUGHPUT, 1.0, 1.2, 9.0, bands, setting, head)


def _within(name, low, nominal, high, bands, setting, head) -> bool:
    """A figure whose band is wider than its effect is within noise."""
    bands = dict(bands) | {name: _banded(name, low, nominal, high)}
    found = tc.trace_claims(setting, head, CpuReference(0.93, "measured", "sum"), bands)
    return next(c for c in found if c.key == [name]).within_noise


@pytest.fixture(scope="module")
def trace_run(tmp_path_factory):
    """A small generated CNN's trace with wall times that scatter (2 and 4 ms by turns)."""
    trace = generate_cnn(channels=2, hidden=8, classes=4).to_trace()
    for i, op in enumerate(trace["ops"]):
        op["wall_s"] = 0.002 if i % 2 else 0.004
    path = tmp_path_factory.mktemp("trace") / "trace.json"
    path.write_text(json.dumps(trace))
    cfg = st.IscHeCnnConfig(model=str(path), bandwidths=[8.0], devices=[1, 16], quick=False)
    setting = st._setting(cfg)
    t2 = tables.table2(setting)
    head = claims.headline(setting, t2, tables.table3(setting, setting.world.compiled, "trace"))
    return setting, t2, head, tc.trace_bands(setting, head, t2.cpu, cfg.fpga_profile)


def test_the_bands_move_the_profiles_ranges_and_the_measured_noise(trace_run) -> None:
    setting, t2, head, bands = trace_run
    assert set(bands) == {SPEEDUP, REDUCTION, THROUGHPUT}
    prof = load_profile(st.FPGA_PROFILE)
    for name, b in bands.items():
        assert b.band.nominal == head.value(name)
        ends = {s.input: (s.low_input, s.high_input) for s in b.band.tornado}
        for f in ("keyswitch_s", "hmult_top_s", "ntt_limb_s"):
            assert ends[f] == prof.range(f"ops.{f}")
        assert ends[RULE] == (0.0, 2.0)
        assert (tc.CPU in ends) == (name == SPEEDUP)
        assert b.band.method == ("32 corners" if name == SPEEDUP else "16 corners")
    # the CPU time alone moves the speedup by its own noise over the nominal latency
    lat = t2.runs[8.0].mean_latency_s
    cpu = tc.cpu_input(setting.program, t2.cpu)
    k = t_multiplier(tc.wall_degrees(setting.program) + 1)
    assert k is not None and cpu.high - cpu.low == pytest.approx(2 * k * tc.wall_noise(setting.program))
    assert cpu.high > cpu.low
    (swing,) = [s for s in bands[SPEEDUP].band.tornado if s.input == tc.CPU]
    assert (swing.at_low, swing.at_high) == (pytest.approx(cpu.low / lat), pytest.approx(cpu.high / lat))
