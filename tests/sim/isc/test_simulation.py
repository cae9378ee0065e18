"""The in-storage platforms simulated (Suzuki and Yamana) against closed forms: pure-transfer
and pure-compute programs, k boards sharing lanes, the prefetch envelope, back-to-back queries,
the DRAM bound, and too many boards for the lanes."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from cryptoffload.crypto.ckks import CkksParams
from cryptoffload.errors import ConfigError
from cryptoffload.sim.isc.fpga_cost import FpgaCostModel
from cryptoffload.sim.isc.simulation import simulate
from cryptoffload.sim.isc.program_steps import compile_steps, prefetch_gates
from cryptoffload.workloads import he_program as hp
from cryptoffload.workloads.he_cnn_generated import generate_cnn
from cryptoffload.workloads.he_trace import program_from_trace

N = 16384
P = CkksParams(N, (48,) * 9, 30)
GB = 1e9


def _program(ops) -> hp.HEProgram:
    return program_from_trace({"schema": hp.SCHEMA, "params": P.to_dict(), "ops": ops})


def _mul_plain_chain(n: int, pt_bytes: int, level: int = 7) -> hp.HEProgram:
    """n ops, each reading a new stored plaintext of ``pt_bytes``: a pure-transfer program
    when op times are zero."""
    ct = P.ciphertext_bytes(level)
    ops, prev = [], "x"
    for i in range(n):
        ops.append({"id": i, "op": "mul_plain", "level": level, "inputs": [prev], "output": i, "bytes_in": ct,
                    "bytes_out": ct, "plaintext": f"w{i}", "plaintext_bytes": pt_bytes})
        prev = i
    return _program(ops)


def _add_chain(n: int, level: int = 7) -> hp.HEProgram:
    """n adds on the input: no stored data at all, a pure-compute program."""
    ct = P.ciphertext_bytes(level)
    ops, prev = [], "x"
    for i in range(n):
        ops.append({"id": i, "op": "add", "level": level, "inputs": [prev, "x"], "output": i,
                    "bytes_in": 2 * ct, "bytes_out": ct})
        prev = i
    return _program(ops)


@pytest.mark.parametrize("gbps", [1.0, 8.0])
def test_pure_transfer_program_takes_bytes_over_bandwidth(presets, gbps) -> None:
    prog = _mul_plain_chain(20, 50_000_000)
    comp = compile_steps(prog, FpgaCostModel.uniform(0.0))
    run = simulate(comp, presets["csd"], 1, source_gbps=gbps)
    assert comp.compute_s == 0
    assert run.mean_latency_s == pytest.approx(20 * 50e6 / (gbps * GB), rel=1e-9)


def test_pure_compute_program_takes_the_sum_of_op_times(presets, cost) -> None:
    prog = _add_chain(300)
    comp = compile_steps(prog, cost)
    assert comp.fetched_bytes == 0
    expected = math.fsum(cost.op_time(op, P) for op in prog.ops)
    assert expected == pytest.approx(300 * 80e-6)
    for name in ("csd", "fpga_only", "fpga_ssd"):
        run = simulate(comp, presets[name], 2)
        assert run.mean_latency_s == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("k", [1, 2, 4, 8])
def test_k_devices_sharing_lanes_each_get_one_kth(presets, k) -> None:
    # one stored plaintext per inference, no compute: the host's lane pool is shared fairly,
    # then the board's own (much faster) link carries it on
    nbytes = 400_000_000
    comp = compile_steps(_mul_plain_chain(1, nbytes), FpgaCostModel.uniform(0.0))
    preset = replace(presets["fpga_only"], host_lanes=8, device_lanes=16, lane_bps=1 * GB)
    run = simulate(comp, preset, k)
    pool, dev = 8 * GB, 16 * GB
    assert run.latencies_s == pytest.approx([k * nbytes / pool + nbytes / dev] * k, rel=1e-9)
    assert run.throughput_per_s == pytest.approx(k / run.latencies_s[0], rel=1e-9)
    # the CSD's NAND is its own: k CSDs take as long as one
    csd = simulate(comp, presets["csd"], k)
    assert csd.latencies_s == pytest.approx([nbytes / (8 * GB)] * k, rel=1e-9)


def test_unbounded_prefetch_matches_the_latency_envelope(presets, cost) -> None:
    # with DRAM to spare, latency at bandwidth B = max over ops of (bytes needed up to the op / B
    # + compute from the op on): transfers run back to back, compute waits only for its data
    prog = generate_cnn()
    comp = compile_steps(prog, cost)
    D = np.cumsum([s.fetch_bytes for s in comp.steps])
    R = np.cumsum([s.compute_s for s in comp.steps][::-1])[::-1]
    for gbps in (1.0, 4.0, 16.0):
        run = simulate(comp, presets["csd"], 1, source_gbps=gbps)
        assert run.mean_latency_s == pytest.approx(float(np.max(D / (gbps * GB) + R)), rel=1e-9)



def test_back_to_back_queries(presets, cost) -> None:
    comp = compile_steps(generate_cnn(), cost, 2e-3, 16e6)
    one = simulate(comp, presets["fpga_ssd"], 4, 1)
    two = simulate(comp, presets["fpga_ssd"], 4, 2)
    assert len(two.latencies_s) == 8
    assert two.mean_latency_s == pytest.approx(one.mean_latency_s, rel=1e-9)
    assert two.throughput_per_s == pytest.approx(4 / one.mean_latency_s, rel=1e-9)


def test_dram_bound_is_respected_and_costs_latency(presets, cost) -> None:
    prog = generate_cnn()
    comp = compile_steps(prog, cost)
    roomy = simulate(comp, presets["csd"], 1, source_gbps=16, record=True)
    tight_cap = comp.min_dram_bytes * 1.05
    tight = simulate(comp, presets["csd"].with_dram(tight_cap), 1, source_gbps=16, record=True)
    assert roomy.dram_peak_bytes > tight_cap  # prefetching would have used more
    assert tight.dram_peak_bytes <= tight_cap * (1 + 1e-9)
    assert max(u for _, u in tight.occupancy) <= tight_cap * (1 + 1e-9)
    assert tight.mean_latency_s >= roomy.mean_latency_s
    assert all(g < m for m, g in enumerate(prefetch_gates(comp, tight_cap)))
    assert tight.occupancy[-1][1] == 0  # everything released at the end



def test_too_many_boards_for_the_lanes(presets, cost) -> None:
    comp = compile_steps(_add_chain(3), cost)
    with pytest.raises(ConfigError, match="do not fit on its lanes"):
        simulate(comp, presets["fpga_ssd"], 32)
