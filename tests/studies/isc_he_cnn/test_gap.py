"""The gap decomposition's building blocks: key sizes and FPGA times scaled exactly as stated,
and the explanation adds up to the paper's value."""

from __future__ import annotations

import pytest

from cryptoffload.sim.isc.fpga_cost import FpgaCostModel
from cryptoffload.studies.isc_he_cnn import gap as isc_gap
from cryptoffload.workloads.he_cnn_eva import CnnShape, eva_cnn, eva_params


def test_keys_and_compute_scaled_exactly() -> None:
    prog = eva_cnn(eva_params(), CnnShape(channels=2, hidden=4))
    scaled = isc_gap.with_key_bytes(prog, 0.5e9)
    assert scaled.key_total_bytes == pytest.approx(0.5e9, rel=1e-6)
    assert scaled.weight_bytes == prog.weight_bytes and len(scaled.ops) == len(prog.ops)
    cost = FpgaCostModel.from_profile()
    assert prog.compute_s(isc_gap.scaled_cost(cost, 1.25)) == pytest.approx(1.25 * prog.compute_s(cost), rel=1e-12)


def _row(step: str | None, ms: float, keys: float, compute: float) -> isc_gap.GapRow:
    return isc_gap.GapRow(f"{step}. x", "simulated", (0.0, ms), 3.3, keys, compute, step)


def test_explain_adds_up_to_the_paper() -> None:
    rows = [_row("3", 900.0, 0.3, 0.9), _row("4", 940.0, 0.5, 0.9), _row("5", 1090.0, 0.5, 1.05),
            _row("6", 1100.0, 0.5, 1.05), _row(None, 5000.0, 9.9, 9.9)]  # the sensitivity row is no step
    assert isc_gap.explain(rows, 1, 1105.0) == (
        "gap by input: the paper's larger keys (0.50 vs 0.30 GB) +40 ms, its slower FPGA ops (1.05 vs 0.90 s of "
        "compute) +150 ms, when its program needs the data (fitted phases) +10 ms, unexplained +5 ms")
    # without the fitted program (step 6) the rest is unexplained from step 5
    assert isc_gap.explain(rows[:3], 1, 1105.0).endswith("+150 ms, unexplained +15 ms")


def test_a_gap_row_flattens_in_column_order() -> None:
    r = isc_gap.GapRow("3. ours", "simulated", (1.0, 2.0, 3.0), 3.3, 0.34, 0.88, "3")
    assert r.cells() == ["3. ours", "simulated", 1.0, 2.0, 3.0, 3.3, 0.34, 0.88]
