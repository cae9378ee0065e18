"""A program compiled into steps: merging keeps the totals exact and the latency close, and a
platform whose DRAM cannot hold an op or the live data is refused naming the op."""

from __future__ import annotations

import math

import pytest

from cryptoffload.errors import ConfigError
from cryptoffload.sim.isc.simulation import simulate
from cryptoffload.sim.isc.program_steps import check_fits, compile_steps
from cryptoffload.workloads.he_cnn_generated import generate_cnn


def test_merged_steps_keep_totals_and_stay_close(presets, cost) -> None:
    prog = generate_cnn()
    exact = compile_steps(prog, cost)
    merged = compile_steps(prog, cost, 2e-3, 16e6)
    assert len(merged.steps) < len(exact.steps) / 5
    for f in ("compute_s", "fetch_bytes", "out_bytes", "free_bytes"):
        assert math.fsum(getattr(s, f) for s in merged.steps) == pytest.approx(
            math.fsum(getattr(s, f) for s in exact.steps), rel=1e-12)
    a = simulate(exact, presets["csd"], 1).mean_latency_s
    b = simulate(merged, presets["csd"], 1).mean_latency_s
    assert b == pytest.approx(a, rel=0.01)


def test_platform_whose_dram_cannot_hold_an_op_is_refused(cost) -> None:
    prog = generate_cnn()
    comp = compile_steps(prog, cost)
    op, ws = prog.largest_working_set()
    with pytest.raises(ConfigError) as exc:
        check_fits(comp, prog, ws - 1, "platform CSD")
    msg = str(exc.value)
    assert "platform CSD" in msg and f"op #{op.index}" in msg and op.op in msg
    with pytest.raises(ConfigError, match="live data"):
        check_fits(comp, prog, (ws + comp.min_dram_bytes) / 2, "platform CSD")
    check_fits(comp, prog, comp.min_dram_bytes, "platform CSD")
