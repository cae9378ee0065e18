"""bsgs-multidevice's measured claims and their bands from the run's own noise: each
prediction's band is a t-interval (95 %, from at least five rounds) of the per-round predictions
and of the wall times (4 corners), judged against this run's measured time (not the paper's);
the count within 20 % is banded over the same noise and judged by the one rule (issue 35): a
band from none to every configuration admits every outcome and is inconclusive, and fewer than
five rounds give no band at all."""

from __future__ import annotations

import math
import statistics

import pytest

from cryptoffload.studies.bsgs_multidevice import measured_claims as mc
from cryptoffload.studies.bsgs_multidevice.measured import MeasuredRow

T4 = 2.7764451051977934  # Student's t, 97.5 %, four degrees of freedom: five rounds


def _se_ms(xs: tuple[float, ...]) -> float:
    return statistics.stdev(xs) / math.sqrt(len(xs)) * 1e3


def _row(devices: int, strategy: str, predicted: float, measured: float, walls: tuple[float, ...],
         per_round: tuple[float, ...]) -> MeasuredRow:
    return MeasuredRow(devices, strategy, 4, predicted, measured, 0.1, 0.0, min(walls), max(walls), walls, per_round)


# 1 worker: inside its band and within 20 % whatever the noise
R1 = _row(1, "replicate", 0.100, 0.105, (0.100, 0.103, 0.105, 0.107, 0.110), (0.099, 0.100, 0.100, 0.100, 0.101))
# -22 %: outside its band, but the noise could bring it within 20 %
R2 = _row(2, "replicate", 0.078, 0.100, (0.095, 0.098, 0.100, 0.102, 0.105), (0.078, 0.078, 0.078, 0.078, 0.078))
# -33 % over five noisy rounds: inside its band
R3 = _row(2, "broadcast", 0.100, 0.150, (0.100, 0.120, 0.150, 0.180, 0.200), (0.080, 0.090, 0.100, 0.110, 0.120))
# -40 % with little noise: outside 20 % whatever the noise
R4 = _row(2, "split-giant", 0.060, 0.100, (0.099, 0.100, 0.100, 0.100, 0.101), (0.060,) * 5)
# three rounds (a quick run): no noise band is claimed
FEW = _row(2, "broadcast", 0.100, 0.150, (0.100, 0.150, 0.200), (0.080, 0.100, 0.120))


def test_a_configurations_band_is_a_t_interval_of_each_noise() -> None:
    b = mc.config_band(R1)
    half = T4 * (_se_ms(R1.walls_s) + _se_ms(R1.round_predicted_s))
    assert (b.band.nominal, b.paper, b.band.method) == (100.0, 105.0, "4 corners")
    assert (b.band.low, b.band.high) == (pytest.approx(100 - half), pytest.approx(100 + half))
    assert b.band.most_sensitive == mc.MEASURED_NOISE and b.band.contains(105.0)
    assert mc.error_band(b) == (pytest.approx((100 - half) / 105 - 1), pytest.approx((100 + half) / 105 - 1))
    inputs = mc.noise_inputs(R1)
    assert inputs is not None
    predicted, measured = inputs
    assert (measured.high, measured.provenance) == (pytest.approx(T4 * _se_ms(R1.walls_s)), "measured")
    assert "5 rounds' re-timed costs" in predicted.why and "4 degrees of freedom" in predicted.why
    # a t-interval of five loaded rounds can exceed the time: the band stops at 0 ms
    loaded = _row(1, "replicate", 0.020, 0.150, (0.050, 0.100, 0.150, 0.200, 0.250), (0.020,) * 5)
    assert mc.config_band(loaded).band.low == 0.0
    # three rounds: the band is the prediction alone, and says why
    few = mc.config_band(FEW)
    assert (few.band.low, few.band.high, few.inputs) == (100.0, 100.0, [])
    assert few.band.method.startswith("no noise band: 3 repeat(s), fewer than the 5")


def test_the_count_within_target_is_judged_by_the_one_rule() -> None:
    rows = [R1, R2, R3]
    bands = mc.measured_bands(rows)
    count = mc.target_count(rows, bands)
    assert (count.within, count.sure, count.total) == (1, 1, 3) and count.possible >= 2
    (claim,) = mc.measured_claims(rows, bands)
    assert claim.band == [count.sure, count.possible] and claim.paper_value == 3.0 and claim.alternative == 0.0
    # [1, 3] holds every configuration but is 2 wide, more than a quarter of 3 either side: inconclusive
    assert claim.kind == "inconclusive" and claim.why.startswith("the band [1, 3] is too wide to judge")
    assert "paper's" not in claim.why.split(";")[0] or "the paper's 3" in claim.why
    assert claim.key == [1, "replicate", 4] and claim.table == "model_vs_measured"
    # a configuration that cannot be within 20 % whatever the noise: the band [1, 1] misses 2, a divergence
    tight = [R1, R4]
    (two,) = mc.measured_claims(tight, mc.measured_bands(tight))
    assert two.band == [1.0, 1.0] and two.kind == "divergence"
    assert two.why.startswith("the target of all configurations within 20% (2) lies outside our band [1, 1]")


def test_fewer_rounds_than_a_band_needs_leave_the_count_unjudged() -> None:
    rows = [R1, FEW]
    (full,) = mc.measured_claims(rows, mc.measured_bands(rows))
    assert (full.kind, full.band) == ("inconclusive", None) and "fewer than the 5" in full.why
    (quick,) = mc.measured_claims(rows, mc.measured_bands(rows), quick_basis="sample")
    assert quick.kind == "not judged in quick mode"


def test_the_largest_error_is_a_headline_line_with_its_band_and_cause() -> None:
    rows = [R1, R2, R3]
    line = mc.worst_line(rows, [(1.0, 0.97), (0.6, 0.4)], mc.measured_bands(rows))
    assert line.startswith("Largest |error| of the model against this run's Dask runs: 33.3 % at 2 worker(s), "
                           "broadcast, bs = 4 (predicted 100 ms, measured 150 ms, inside the prediction's band")
    assert "other processes took the cores" in line and "0.40" in line


def test_the_band_table_says_per_configuration_whether_the_measured_time_is_inside() -> None:
    rows = [R1, R2]
    t = mc.measured_bands_table(rows, mc.measured_bands(rows))
    assert t.id == "model_vs_measured_bands" and t.key_columns == 3 and t.provenance == "mixed"
    half = T4 * _se_ms(R2.walls_s)
    assert mc.band_row(R2, mc.config_band(R2)) == mc.MeasuredBandRow(
        2, "replicate", 4, pytest.approx(78.0), pytest.approx(0.0), pytest.approx(100.0), pytest.approx(_se_ms(R2.walls_s)),
        pytest.approx(78 - half), pytest.approx(78 + half), False, pytest.approx((78 - half) - 100),
        pytest.approx((78 + half) - 100), mc.MEASURED_NOISE)
    assert [r[t.columns.index("measured_inside")] for r in t.rows] == [True, False]


def test_the_largest_error_without_a_noise_band_says_so() -> None:
    rows = [R1, FEW]
    line = mc.worst_line(rows, [(1.0, 0.97)], mc.measured_bands(rows))
    assert "measured 150 ms, no noise band: 3 repeat(s), fewer than the 5" in line and "outside" not in line
