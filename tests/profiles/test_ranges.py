"""Every range end says where it comes from, and the fit checker follows the ends (issue 35)."""

from __future__ import annotations

import pytest

from cryptoffload.profiles.fits import profile_fits
from cryptoffload.profiles.loader import builtin_profile_path, load_profile, write_profile
from cryptoffload.profiles.ranges import fitted_ends, range_ends, unsourced_ends

BUILTINS = sorted(p.stem for p in builtin_profile_path("heax_set_c").parent.glob("*.toml"))


@pytest.mark.parametrize("name", BUILTINS)
def test_every_builtin_range_end_is_sourced(name: str) -> None:
    assert unsourced_ends(load_profile(name)) == []


def test_the_ends_of_a_range_come_from_its_siblings_its_own_words_or_one_reason() -> None:
    tls = load_profile("tls_offload")
    low, high = range_ends(tls, "nic.retransmit_rate")  # "retransmit_rate_min .. _max": the siblings' sources
    assert (low.value, low.provenance, high.value, high.provenance) == (0.0, "assumed", 0.02, "assumed")
    assert high.source.startswith("assumption: 2 %")
    low, high = range_ends(tls, "ktls.cpu_fraction")  # "low: ...; high: ...": each end its own
    assert (low.provenance, high.value, high.provenance) == ("derived", 1.0, "assumed")
    low, high = range_ends(load_profile("heax_set_c"), "ops.keyswitch_s")  # one reason for both ends
    assert low.source == high.source and low.provenance == high.provenance == "assumed"


def test_a_range_end_fitted_to_the_paper_makes_the_value_a_fit(tmp_path) -> None:
    """The issue's case: ktls.cpu_fraction's pessimistic end was the paper's own 64 MB ratio while
    its claims said nothing was calibrated; a fitted end now makes the value a fit."""
    assert "tls_offload:ktls.cpu_fraction" not in profile_fits("tls_offload")
    prof = load_profile("tls_offload")
    pv = prof.values["ktls.cpu_fraction"]
    from dataclasses import replace
    prof.values["ktls.cpu_fraction"] = replace(pv, range=(0.333, 0.974), range_why="cpu_fraction_min .. cpu_fraction_max")
    path = write_profile(tmp_path / "tls_offload.toml", prof.meta, prof.values)
    assert fitted_ends(load_profile(str(path))) == {"tls_offload:ktls.cpu_fraction": ""}
    assert profile_fits(str(path))["tls_offload:ktls.cpu_fraction"] == ""
    # a sibling that is not there leaves its end unsourced
    prof.values["ktls.cpu_fraction"] = replace(pv, range=(0.333, 0.974), range_why="nope_min .. nope_max")
    bad = write_profile(tmp_path / "bad.toml", prof.meta, prof.values)
    assert unsourced_ends(load_profile(str(bad))) == ["tls_offload:ktls.cpu_fraction low",
                                                      "tls_offload:ktls.cpu_fraction high"]
