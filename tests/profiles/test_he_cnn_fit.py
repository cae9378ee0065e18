"""The fit of he_cnn_paper.toml's phase shares to Table 2, and the ranges Table 2's printed
precision gives them: the profile holds exactly what the fit computes, so neither can drift."""

from __future__ import annotations

import pytest

from cryptoffload.profiles import load_profile
from cryptoffload.profiles.he_cnn_fit import (SHARES, VALUE_DIGITS, corners, first_phase_ranges, fit_profile,
                                              fit_shares, outward, share_ranges)
from cryptoffload.studies.isc_he_cnn.paper import PAPER_TABLE2

KEYS = [0.23, 0.0, 0.77, 0.0, 0.0]


def test_corners_are_the_lines_through_adjacent_table2_points_and_the_last_pinned_at_all_data() -> None:
    got = [(round(c.data_gb, 9), round(c.compute_left_s, 9)) for c in corners(PAPER_TABLE2, 3.8)]
    assert got == [(0.256, 1.039), (2.0, 0.821), (2.52, 0.691), (3.8, 0.05)]


def test_fit_gives_each_phase_the_compute_and_data_between_its_corners() -> None:
    fit = fit_shares(PAPER_TABLE2, 3.3, 0.5, 1.05, 0.0176, KEYS)
    assert [round(f["compute_share"], 6) for f in fit] == [0.010476, 0.207619, 0.12381, 0.610476, 0.047619]
    # p1 as assumed; p2 the 1.744 GB between the first two corners; p3 up to the 2.52 GB corner
    # beside its 0.385 GB of keys; p4 the rest; p5 nothing
    assert [round(f["weights_share"], 6) for f in fit] == [0.0176, 0.528485, 0.066036, 0.387879, 0.0]
    assert [f["keys_share"] for f in fit] == KEYS
    for share in SHARES:
        assert sum(f[share] for f in fit) == pytest.approx(1.0, abs=1e-12)


def test_ranges_are_table2s_half_ms_propagated_linearly() -> None:
    rng = share_ranges(PAPER_TABLE2, 3.3, 0.5, 1.05, 0.0176, KEYS)
    # p1's compute share is 1 - (2 L16 - L8) / 1.05 s: +-1.5 ms
    assert rng[0]["compute_share"] == outward(1 - 1.0405 / 1.05, 1 - 1.0375 / 1.05)
    # p2's weights are 8 L4 - 24 L8 + 16 L16 (GB, L in s): +-0.024 GB of 3.3
    assert rng[1]["weights_share"] == outward((1.744 - 0.024) / 3.3, (1.744 + 0.024) / 3.3)
    # assumed shares do not move with Table 2; p5's weights are pinned at 0
    assert rng[0]["weights_share"] == (0.0176, 0.0176)
    assert rng[2]["keys_share"] == (0.77, 0.77) and rng[4]["weights_share"] == (0.0, 0.0)


def test_a_coarser_table2_widens_every_fitted_range() -> None:
    fine = share_ranges(PAPER_TABLE2, 3.3, 0.5, 1.05, 0.0176, KEYS)
    coarse = share_ranges(PAPER_TABLE2, 3.3, 0.5, 1.05, 0.0176, KEYS, half_ms=5.0)
    for i in range(5):
        assert coarse[i]["compute_share"][0] < fine[i]["compute_share"][0]
        assert coarse[i]["compute_share"][1] > fine[i]["compute_share"][1]


def test_first_phase_ranges_run_from_none_to_what_the_first_corner_at_its_most_leaves() -> None:
    # the first corner is 16 (L8 - L16): 0.256 +- 0.016 GB
    assert first_phase_ranges(PAPER_TABLE2, 3.3, 0.5, 0.0176, 0.23) == {
        "weights_share": outward(0.0, (0.272 - 0.115) / 3.3), "keys_share": outward(0.0, (0.272 - 0.05808) / 0.5)}


def test_the_profile_stores_what_the_fit_computes() -> None:
    prof = load_profile("he_cnn_paper")
    fit = fit_profile(prof, PAPER_TABLE2)
    assert fit.phases == ["p1_conv", "p2_fc1_products", "p3_fc1_reduce", "p4_fc2", "p5_output"]
    for ph, shares, ranges in zip(fit.phases, fit.shares, fit.ranges):
        for share in SHARES:
            dotted = f"phases.{ph}.{share}"
            if prof.provenance(dotted) != "fitted":
                continue
            assert prof.value(dotted) == round(shares[share], VALUE_DIGITS), dotted
            assert prof.range(dotted) == ranges[share], dotted
            assert "profiles/he_cnn_fit.py" in prof.values[dotted].range_why, dotted


def test_the_profiles_assumed_shares_carry_the_first_phases_computed_ranges() -> None:
    prof = load_profile("he_cnn_paper")
    first = fit_profile(prof, PAPER_TABLE2).first_ranges
    assert prof.range("phases.p1_conv.weights_share") == first["weights_share"]
    assert prof.range("phases.p1_conv.keys_share") == first["keys_share"]
    low, high = first["keys_share"]
    assert prof.range("phases.p3_fc1_reduce.keys_share") == pytest.approx((1 - high, 1 - low), abs=1e-12)
    assumed = {f"phases.{ph}.keys_share" for ph in fit_profile(prof, PAPER_TABLE2).phases}
    assumed.add("phases.p1_conv.weights_share")
    assert {d for d, v in prof.values.items() if d.endswith("_share") and v.provenance == "assumed"} == assumed
    for ph in ("p2_fc1_products", "p4_fc2", "p5_output"):
        assert prof.range(f"phases.{ph}.keys_share") == (0.0, 0.0)
