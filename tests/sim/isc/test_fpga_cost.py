"""FPGA op costs against the paper's rules: per level, per op kind, and carried to another ring."""

from __future__ import annotations

import pytest

from cryptoffload.crypto.ckks import CkksParams
from cryptoffload.errors import ConfigError
from cryptoffload.workloads import he_program as hp

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


def test_uniform_cost_and_unknown_ops(cost) -> None:
    flat = type(cost).uniform(3e-3)
    assert flat(_op("rotate", 7), P) == flat(_op("add", 0), P) == 3e-3 and flat(_op("encrypt", 7), P) == 0.0
    with pytest.raises(ConfigError, match="no cost for op 'bootstrap'"):
        cost.op_time(_op("bootstrap", 3), P)
