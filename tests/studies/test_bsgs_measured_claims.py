"""bsgs-multidevice's measured claims and their bands from the run's own noise: each
prediction's band is +- 2 standard errors of the per-round predictions and of the wall times
(4 corners), judged against this run's measured time (not the paper's); the count within 20 %
is banded over the same noise and is an agreement only when every configuration can be within
it."""

from __future__ import annotations

import math

import pytest

from cryptoffload.studies import _bsgs_measured_claims as mc
from cryptoffload.studies._bsgs_measured import MeasuredRow

SE = 1 / math.sqrt(3)   # the standard error of three samples with a standard deviation of 1

# 1 worker: inside its band and within 20 % whatever the noise
R1 = MeasuredRow(1, "replicate", 4, 0.100, 0.105, 0.1, 0.0, 0.100, 0.110, (0.100, 0.105, 0.110), (0.098, 0.100, 0.102))
# -22 %: outside its band, but the noise could bring it within 20 %
R2 = MeasuredRow(2, "replicate", 4, 0.078, 0.100, 0.1, 0.0, 0.090, 0.110, (0.090, 0.100, 0.110), (0.080, 0.080, 0.080))
# -33 %, one round: no spread known, none claimed
R3 = MeasuredRow(2, "broadcast", 16, 0.100, 0.150, 0.1, 0.0, 0.150, 0.150, (0.150,), (0.100,))
# the same -33 % over three noisy rounds: inside its band
R3_NOISY = MeasuredRow(2, "broadcast", 16, 0.100, 0.150, 0.1, 0.0, 0.100, 0.200, (0.100, 0.150, 0.200),
                       (0.080, 0.100, 0.120))


def test_a_configurations_band_is_two_standard_errors_of_each_noise() -> None:
    b = mc.config_band(R1)
    half = 2 * (5 * SE + 2 * SE)      # wall times: sd 5 ms; predictions per round: sd 2 ms
    assert (b.band.nominal, b.paper, b.band.method) == (100.0, 105.0, "4 corners")
    assert (b.band.low, b.band.high) == (pytest.approx(100 - half), pytest.approx(100 + half))
    assert b.band.most_sensitive == mc.MEASURED_NOISE and b.band.contains(105.0)
    assert mc.error_band(b) == (pytest.approx((100 - half) / 105 - 1), pytest.approx((100 + half) / 105 - 1))
    measured, predicted = mc.noise_inputs(R1)[1], mc.noise_inputs(R1)[0]
    assert (measured.low, measured.high, measured.provenance) == (pytest.approx(-10 * SE), pytest.approx(10 * SE),
                                                                  "measured")
    assert predicted.high == pytest.approx(4 * SE) and "3 rounds' re-timed costs" in predicted.why
    # two standard errors of three loaded rounds can exceed the time: the band stops at 0 ms
    loaded = MeasuredRow(1, "replicate", 2, 0.020, 0.150, 0.1, 0.0, 0.100, 0.200, (0.100, 0.150, 0.200),
                         (0.020, 0.020, 0.020))
    assert (mc.config_band(loaded).band.low, mc.config_band(loaded).band.high) == (0.0, pytest.approx(20 + 100 * SE))
    one = mc.config_band(R3)
    assert (one.band.low, one.band.high, one.band.method, one.band.most_sensitive) == (100.0, 100.0, "nominal", "")


def test_the_count_within_target_over_the_noise() -> None:
    rows = [R1, R2, R3]
    bands = mc.measured_bands(rows)
    assert list(bands) == [(1, "replicate", 4), (2, "replicate", 4), (2, "broadcast", 16)]
    assert mc.target_count(rows, bands) == mc.TargetCount(within=1, sure=1, possible=2, inside=1, total=3)
    assert mc.dominant_noise(bands) == mc.MEASURED_NOISE
    agree, worst = mc.measured_claims(rows, [(1.0, 0.97), (1.0, 0.95)])
    assert agree.kind == "divergence" and agree.band == [1.0, 2.0] and agree.paper_value == 3.0
    assert agree.ours == ("model within 20% of 1 of 3 measured Dask configurations (1 .. 2 over this run's noise; "
                          "median |error| 22.0 %); the measured time inside the prediction's noise band in 1 of 3")
    assert agree.why.startswith("the target of all configurations within 20% (3) lies outside our band [1, 2]")
    assert "paper's" not in agree.why and agree.key == [1, "replicate", 4] and agree.table == "model_vs_measured"
    assert agree.effect == 2.0 and not agree.within_noise    # the shortfall: 2 configurations outside 20 %
    # the noisy third configuration could be within 20 %: every one can, so an agreement, the target inside
    noisy = [R1, R2, R3_NOISY]
    assert mc.target_count(noisy, mc.measured_bands(noisy)) == mc.TargetCount(1, 1, 3, 2, 3)
    agree, _ = mc.measured_claims(noisy, [(1.0, 0.97)])
    assert agree.kind == "agreement" and agree.band == [1.0, 3.0] and agree.inside and agree.effect == 2.0


def test_the_worst_configuration_is_judged_against_the_measured_time() -> None:
    _, worst = mc.measured_claims([R1, R2, R3], [(1.0, 0.97), (1.0, 0.95)])
    assert worst.kind == "divergence" and worst.key == [2, "broadcast", 16]
    assert (worst.band, worst.paper_value, worst.effect) == ([100.0, 100.0], 150.0, pytest.approx(-50.0))
    assert "33.3 %" in worst.ours and "not a paper figure" in worst.paper
    assert worst.why.startswith("this run's measured time (150) lies outside our band [100, 100]; no noise was "
                                "measured (one round)") and "GIL" in worst.why
    _, loaded = mc.measured_claims([R1, R2, R3_NOISY], [(1.0, 0.97), (0.6, 0.4)])
    half = 2 * (50 * SE + 20 * SE)
    assert loaded.kind == "agreement" and loaded.band == [pytest.approx(100 - half), pytest.approx(100 + half)]
    assert loaded.why.startswith("this run's measured time (150) lies inside our band, within this run's noise; "
                                 "other processes took the cores") and "0.40" in loaded.why
    assert loaded.within_noise and loaded.most_sensitive == mc.MEASURED_NOISE


def test_the_band_table_says_per_configuration_whether_the_measured_time_is_inside() -> None:
    rows = [R1, R2]
    t = mc.measured_bands_table(rows, mc.measured_bands(rows))
    assert t.id == "model_vs_measured_bands" and t.key_columns == 3 and t.provenance == "mixed"
    half = 2 * 10 * SE
    assert mc.band_row(R2, mc.config_band(R2)) == mc.MeasuredBandRow(
        2, "replicate", 4, pytest.approx(78.0), 0.0, pytest.approx(100.0), pytest.approx(10 * SE),
        pytest.approx(78 - half), pytest.approx(78 + half), False, pytest.approx((78 - half) - 100),
        pytest.approx((78 + half) - 100), mc.MEASURED_NOISE)
    assert [r[t.columns.index("measured_inside")] for r in t.rows] == [True, False]
