"""Profile fits: the fitted values of a profile, named ``profile:field`` with their target."""

from __future__ import annotations

from pathlib import Path

from cryptoffload.profiles.fits import profile_fits


def test_builtin_profile_fits_by_name_and_by_the_path_results_list() -> None:
    fits = profile_fits("he_cnn_paper")
    assert fits and set(fits.values()) == {"table 2"}
    assert all(k.startswith("he_cnn_paper:phases.") for k in fits if k != "he_cnn_paper:totals.compute_s")
    assert "he_cnn_paper:totals.compute_s" in fits  # the 16 GB/s plateau read off Table 2
    assert profile_fits("profiles/he_cnn_paper.toml") == fits


def test_a_profile_without_fits_has_none(tmp_path: Path) -> None:
    p = tmp_path / "m.toml"
    p.write_text('[meta]\nname = "m"\nkind = "measured"\ndescription = "d"\n\n'
                 '[ops]\nadd_s = { value = 1e-6, source = "measured on this machine" }\n'
                 'mul_s = { value = 2e-6, source = "fitted: to the run" }\n', encoding="utf-8")
    assert profile_fits(p) == {"m:ops.mul_s": ""}
