"""Bands and tornado tables against closed forms: a linear prediction's swings are its
coefficients times the ranges, and its corner band is exact."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from cryptoffload.profiles import load_profile
from cryptoffload.profiles import sensitivity as sens

A = sens.Input("a", 2.0, 1.0, 4.0)
B = sens.Input("b", 10.0, 9.0, 12.0)
C = sens.Input("c", 0.5, 0.5, 0.5)  # fixed: no range


def linear(o):  # 3a - 2b + 7c + 1
    a, b, c = o.get("a", 2.0), o.get("b", 10.0), o.get("c", 0.5)
    return 3 * a - 2 * b + 7 * c + 1


def test_a_linear_prediction_has_exact_swings_largest_first() -> None:
    t = sens.tornado(linear, [B, A, C])
    assert [s.input for s in t] == ["a", "b", "c"]
    assert [s.swing for s in t] == [9.0, 6.0, 0.0]  # |3| x 3, |-2| x 3, 0
    assert (t[0].at_low, t[0].at_high) == (-12.5, -3.5)  # nominal 3x2-20+3.5+1 = -9.5; a moves it -3 / +6
    assert (t[1].at_low, t[1].at_high) == (-7.5, -13.5)  # b: +2 / -4


def test_the_corner_band_of_a_linear_prediction_is_exact() -> None:
    b = sens.band(linear, [A, B, C])
    assert b.nominal == -9.5
    assert (b.low, b.high) == (3 * 1 - 2 * 12 + 3.5 + 1, 3 * 4 - 2 * 9 + 3.5 + 1)  # (-16.5, -1.5)
    assert b.method == "4 corners" and b.most_sensitive == "a" and b.width == 15.0
    assert b.contains(-16.5) and not b.contains(-1.4)


def test_a_quick_band_stops_at_the_tornado_ends() -> None:
    b = sens.band(linear, [A, B, C], joint=False)
    assert (b.low, b.high) == (-13.5, -3.5)  # a and b alone; the corners -16.5 / -1.5 are not run
    assert b.method == "tornado ends only (4 runs; corners skipped)"


def test_no_moving_input_gives_the_nominal_value_only() -> None:
    b = sens.band(linear, [C])
    assert (b.low, b.nominal, b.high, b.method, b.most_sensitive) == (-9.5, -9.5, -9.5, "nominal", "")


def test_many_inputs_are_sampled_with_a_fixed_seed_inside_the_corners() -> None:
    inputs = [sens.Input(f"x{i}", 1.0, 0.0, 2.0) for i in range(8)]
    pred = lambda o: sum(o.get(f"x{i}", 1.0) * (i + 1) for i in range(8))  # noqa: E731
    b1, b2 = sens.band(pred, inputs, samples=16), sens.band(pred, inputs, samples=16)
    assert b1 == b2 and b1.method == "Latin hypercube, 16 points, seed 1"
    # the tornado ends are always seen: 36 -+ 8 (x7 alone); the sample cannot pass the corners 0 .. 72
    assert b1.low <= 28.0 and b1.high >= 44.0 and b1.low >= 0.0 and b1.high <= 72.0


def test_a_latin_hypercube_puts_one_point_in_each_stratum() -> None:
    pts = sens.latin_hypercube([sens.Input("x", 0.5, 0.0, 1.0), sens.Input("n", 2, 1, 5, integer=True)], 10, seed=3)
    assert sorted(int(p["x"] * 10) for p in pts) == list(range(10))
    assert all(p["n"] == int(p["n"]) and 1 <= p["n"] <= 5 for p in pts)


def test_closer_names_the_input_that_moves_towards_the_target() -> None:
    b = sens.band(linear, [A, B])
    # downwards b (-4) beats a (-3) though a swings more; upwards a (+6) beats b (+2)
    assert sens.closer(b, -20.0) == "b"
    assert sens.closer(b, 5.0) == "a"
    flat = sens.band(lambda o: 1.0, [A])
    assert sens.closer(flat, 2.0) == ""


def test_a_measured_input_is_its_mean_within_a_t_interval_from_five_samples_or_none() -> None:
    m = sens.measured_input("fetch", [1.0, 2.0, 3.0, 4.0, 5.0])
    se = math.sqrt(2.5) / math.sqrt(5)
    t4 = 2.7764451051977934  # Student's t, 97.5 %, 4 degrees of freedom
    assert m is not None and m.nominal == 3.0
    assert math.isclose(m.low, 3.0 - t4 * se, rel_tol=1e-9) and math.isclose(m.high, 3.0 + t4 * se, rel_tol=1e-9)
    assert m.provenance == "measured" and "5 runs" in m.why and "95 %" in m.why
    # two samples give a standard error on one degree of freedom: no band is claimed from them (issue 35)
    assert sens.measured_input("two", [3.0, 4.0]) is None and sens.measured_input("four", [1.0, 2.0, 3.0, 4.0]) is None
    with pytest.raises(ValueError, match="no samples"):
        sens.measured_input("none", [])


@pytest.mark.parametrize(("df", "t"), [(1, 12.706204736174694), (2, 4.302652729749462), (4, 2.7764451051977934),
                                       (9, 2.262157162798205), (30, 2.0422724563012373), (1000, 1.9623390808264083)])
def test_the_t_quantile_matches_the_tables(df: int, t: float) -> None:
    assert math.isclose(sens.t_quantile(0.975, df), t, rel_tol=1e-9)


def test_the_t_quantile_against_an_independent_reference() -> None:
    stats = pytest.importorskip("scipy.stats")
    for df in (1, 3, 5, 7, 12, 24, 60):
        for p in (0.6, 0.9, 0.95, 0.975, 0.995):
            assert math.isclose(sens.t_quantile(p, df), float(stats.t.ppf(p, df)), rel_tol=1e-8)
    assert sens.t_multiplier(4) is None and sens.t_multiplier(5) == pytest.approx(2.7764451051977934)
    with pytest.raises(ValueError):
        sens.t_quantile(0.4, 3)


def test_a_profile_value_becomes_an_input_over_its_range() -> None:
    prof = load_profile("bsgs_u280")
    i = sens.profile_input(prof, "shape.naive_baby", "naive_baby")
    assert (i.name, i.nominal, i.low, i.high, i.provenance, i.integer) == ("naive_baby", 256, 128, 512, "assumed", True)
    fixed = sens.profile_input(prof, "link.bandwidth_Bps")
    assert (fixed.low, fixed.high) == (1.25e10, 1.25e10)
    with pytest.raises(ValueError, match="outside"):
        sens.Input("x", 5.0, 1.0, 4.0)


def test_with_values_copies_a_profile_with_fields_moved() -> None:
    prof = load_profile("qat_dh8970")
    moved = sens.with_values(prof, {"cpu.request_s": 2.3e-5})
    assert moved.value("cpu.request_s") == 2.3e-5 and prof.value("cpu.request_s") == 2.2291e-5
    assert moved.provenance("cpu.request_s") == "fitted" and moved.value("workload.encryptions") == 30000
    with pytest.raises(Exception, match="'cpu.nothing' is missing"):
        sens.with_values(prof, {"cpu.nothing": 1.0})


def test_written_with_values_reads_back_moved(tmp_path: Path) -> None:
    prof = load_profile("he_cnn_paper_inputs")
    path = sens.written_with_values(prof, {"network.hidden": 80}, tmp_path)
    back = load_profile(path)
    assert back.value("network.hidden") == 80 and back.range("network.hidden") == (80, 120)
    assert back.value("network.kernel") == 5 and back.name == prof.name
