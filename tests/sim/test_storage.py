"""Storage-side model (Suzuki and Yamana) against closed forms: FPGA op costs, merged steps,
the DRAM a platform needs, and the DRAM's FIFO reservations."""

from __future__ import annotations

import math

import pytest

from cryptoffload.crypto.ckks import CkksParams
from cryptoffload.errors import ConfigError
from cryptoffload.sim.core import Simulation
from cryptoffload.sim.isc_platform import simulate
from cryptoffload.sim.storage import DeviceDRAM, check_fits, compile_steps
from cryptoffload.workloads import he_program as hp
from cryptoffload.workloads.he_cnn_generated import generate_cnn

N = 16384
P = CkksParams(N, (48,) * 9, 30)


def _op(name: str, level: int) -> hp.HEOp:
    return hp.HEOp(0, "o", name, level, (), "", 0, 0)


def test_fpga_costs_follow_the_papers_rules(cost) -> None:
    t = lambda name, lv: cost.op_time(_op(name, lv), P)  # noqa: E731
    assert t("add", 0) == pytest.approx(10e-6)  # the paper: HAdd 10 us at level 0 ...
    assert t("add", 7) == pytest.approx(80e-6)  # ... scaled by complexity (limbs)
    assert t("add_plain", 7) == pytest.approx(0.5 * t("add", 7))
    assert t("rotate", 0) == t("rotate", 7) == t("relinearize", 3) == cost.keyswitch_s  # constant over levels
    assert t("mul", 7) == pytest.approx(cost.hmult_top_s)  # HMult latency = 1 / throughput at the top level
    assert t("mul", 3) == pytest.approx(cost.hmult_top_s * 4 / 8)
    assert t("mul_plain", 7) == pytest.approx(0.5 * t("mul", 7))
    assert t("rescale", 7) == pytest.approx(2 * 8 * cost.ntt_limb_s)  # 2 polys x (1 INTT + 7 NTT)
    assert t("encode", 7) == t("encrypt", 7) == t("decrypt", 0) == 0.0
    # another ring: element-wise ops scale with N, key switching with N (L/L_ref)^2
    small = CkksParams(8192, (48,) * 5, 30)
    assert cost.op_time(_op("add", 1), small) == pytest.approx(20e-6 / 2)
    assert cost.op_time(_op("rotate", 1), small) == pytest.approx(cost.keyswitch_s / 2 * (4 / 8) ** 2)


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


def test_device_dram_fifo_reservations() -> None:
    sim = Simulation(0)
    dram = DeviceDRAM(sim, "dram", 100.0, record=True)
    got = []

    def taker(name, n, delay=0.0):
        if delay:
            yield sim.env.timeout(delay)
        yield from dram.reserve(n)
        got.append((name, sim.now))

    def releaser():
        yield sim.env.timeout(2.0)
        dram.free(60)
        yield sim.env.timeout(1.0)
        dram.free(40)

    sim.process(taker("a", 60))
    sim.process(taker("b", 40))
    sim.process(taker("c", 70, 0.5))
    sim.process(taker("d", 10, 0.6))  # fits at once by size, but waits behind c (FIFO)
    sim.process(releaser())
    sim.run()
    assert got == [("a", 0.0), ("b", 0.0), ("c", 3.0), ("d", 3.0)]
    assert dram.peak == 100.0 and dram.used == 80.0
    with pytest.raises(ConfigError):
        list(dram.reserve(101))
    with pytest.raises(ConfigError):
        dram.free(1000)


