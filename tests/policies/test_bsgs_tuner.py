"""The tuner: exhaustive search is exact (pruning never drops the optimum), and the fast
tuner lands within 5 % of it."""

from __future__ import annotations

import dataclasses
import random

import pytest

from cryptoffload.errors import ConfigError
from cryptoffload.policies import bsgs_tuner as tuner
from cryptoffload.sim.op_dag import DagCosts
from cryptoffload.workloads.bsgs import STRATEGIES, BsgsShape

CPU = DagCosts(rotate_s=4e-3, pmul_s=3e-4, add_s=1e-4, bytes=5e5, bandwidth_Bps=1e9, latency_s=2e-4,
               rescale_s=1e-3, serialize_s=2e-4, deserialize_s=3e-4, task_s=1e-3)
FPGA = DagCosts.from_profile("bsgs_u280")


def brute_force(base: BsgsShape, n: int, costs: DagCosts, space: str = "all") -> tuner.Config:
    """No pruning at all: every strategy, every bs."""
    return min((tuner.evaluate(base, n, s, b, costs)[0] for s in STRATEGIES
                for b in tuner.baby_space(base.diagonals, space)), key=lambda c: c.predicted_s)


@pytest.mark.parametrize("costs", [CPU, FPGA], ids=["cpu", "u280"])
@pytest.mark.parametrize("n", [1, 2, 3, 4, 8])
def test_exhaustive_is_exact(costs: DagCosts, n: int) -> None:
    base = BsgsShape(48, 1, level=2)
    assert tuner.exhaustive(base, n, costs)[0].predicted_s == pytest.approx(brute_force(base, n, costs).predicted_s)


def test_tuner_within_five_percent_of_exhaustive_random_profiles() -> None:
    rnd = random.Random(3)
    worst = 0.0
    for _ in range(40):
        costs = DagCosts(rotate_s=rnd.uniform(1e-4, 1e-2), pmul_s=rnd.uniform(1e-6, 1e-3), add_s=rnd.uniform(1e-7, 1e-4),
                         bytes=rnd.uniform(1e4, 1e7), bandwidth_Bps=rnd.uniform(1e8, 1e11), latency_s=rnd.uniform(0, 1e-3),
                         rescale_s=rnd.uniform(0, 1e-3))
        base = BsgsShape(rnd.randint(8, 200), 1, level=2)
        n = rnd.choice([1, 2, 4, 5, 8, 16])
        best = tuner.exhaustive(base, n, costs)[0].predicted_s
        got = tuner.tune(base, n, costs).predicted_s
        assert got >= best * (1 - 1e-12)
        worst = max(worst, got / best - 1)
    assert worst <= 0.05


@pytest.mark.parametrize("n", [1, 2, 4, 8, 16])
def test_tuner_on_the_paper_setup(n: int) -> None:
    base = BsgsShape(32768, 1, level=1)
    best = tuner.exhaustive(base, n, FPGA)[0]
    got = tuner.tune(base, n, FPGA)
    assert got.predicted_s <= best.predicted_s * 1.05


def test_paper_setup_speedup_rises_with_devices() -> None:
    base = BsgsShape(32768, 1, level=1)
    speedups = [tuner.naive(base, n, FPGA, baby=256).predicted_s
                / tuner.exhaustive(base, n, FPGA, strategies=("replicate",), space="pow2")[0].predicted_s
                for n in (1, 2, 4, 8, 16)]
    assert speedups[0] == pytest.approx(1.0)
    assert all(b > a for a, b in zip(speedups, speedups[1:]))


def test_fewer_devices_for_a_small_stage() -> None:
    """A 63-diagonal stage does not pay for 100 us reduction rounds: the tuner leaves devices idle."""
    stage = BsgsShape(63, 16, slots=2**15, stride=32, offset=-31 * 32, level=20)
    got = tuner.tune_up_to(stage, 16, FPGA)
    assert got.devices == 1
    slow_fpga = dataclasses.replace(FPGA, rotate_s=FPGA.rotate_s * 1000, pmul_s=FPGA.pmul_s * 1000)
    assert tuner.tune_up_to(stage, 16, slow_fpga).devices > 1


def test_spaces() -> None:
    assert tuner.baby_space(12, "pow2") == [1, 2, 4, 8]
    assert tuner.baby_space(12, "divisors") == [1, 2, 3, 4, 6, 12]
    assert len(tuner.baby_space(12)) == 12
    with pytest.raises(ConfigError, match="unknown baby-step space 'odd'"):
        tuner.baby_space(12, "odd")
    with pytest.raises(ConfigError, match="unknown BSGS strategy"):
        tuner.tune(BsgsShape(8, 1), 2, CPU, strategies=("nope",))
    with pytest.raises(ConfigError, match="number of devices N must be a positive integer"):
        tuner.tune(BsgsShape(8, 1), 0, CPU)
    with pytest.raises(ConfigError, match="between 1 and C = 8"):
        tuner.naive(BsgsShape(8, 1), 2, CPU, baby=9)
