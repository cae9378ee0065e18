"""The gap decomposition's building blocks: key sizes and FPGA times scaled exactly as stated,
and the explanation adds up to the paper's value."""

from __future__ import annotations

import pytest

from cryptoffload.sim.fpga_cost import FpgaCostModel
from cryptoffload.studies import isc_gap
from cryptoffload.workloads.he_cnn_eva import CnnShape, eva_cnn, eva_params


def test_keys_and_compute_scaled_exactly() -> None:
    prog = eva_cnn(eva_params(), CnnShape(channels=2, hidden=4))
    scaled = isc_gap.with_key_bytes(prog, 0.5e9)
    assert scaled.key_total_bytes == pytest.approx(0.5e9, rel=1e-6)
    assert scaled.weight_bytes == prog.weight_bytes and len(scaled.ops) == len(prog.ops)
    cost = FpgaCostModel.from_profile()
    assert prog.compute_s(isc_gap.scaled_cost(cost, 1.25)) == pytest.approx(1.25 * prog.compute_s(cost), rel=1e-12)


def test_explain_adds_up_to_the_paper() -> None:
    rows = [["3. ours", "simulated", 900.0, 0.3, 0.9], ["4. keys", "simulated", 940.0, 0.5, 0.9],
            ["5. compute", "fitted", 1090.0, 0.5, 1.05], ["6. fitted", "fitted", 1100.0, 0.5, 1.05]]
    text = isc_gap.explain(rows, 2, 1105.0)
    assert "keys (0.50 vs 0.30 GB) +40 ms" in text and "(1.05 vs 0.90 s of compute) +150 ms" in text
    assert "+10 ms" in text and "unexplained +5 ms" in text
