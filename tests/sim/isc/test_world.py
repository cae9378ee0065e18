"""The in-storage world: the program of the paper's inputs on the three presets, the profiles
it names, and DRAM that cannot hold the program refused (naming the platform)."""

from __future__ import annotations

import pytest

from cryptoffload.errors import ConfigError
from cryptoffload.sim.isc.world import load_isc_world, profile_path


def test_the_default_world_is_the_papers_inputs_on_the_three_presets() -> None:
    w = load_isc_world()
    assert w.program.source == "paper-inputs" and w.program.name == "eva-cnn-c43-k5-h100"
    assert list(w.platforms) == ["fpga_only", "fpga_ssd", "csd"]
    assert w.profiles == ["profiles/heax_set_c.toml", "profiles/isc_platforms.toml", "profiles/he_cnn_paper_inputs.toml"]
    assert w.platforms["csd"].dram_bytes == 8e9


def test_the_fitted_world_names_its_fitted_profile_and_dram_is_overridden() -> None:
    w = load_isc_world("fitted", dram_gb=16.0)
    assert w.program.source == "paper-calibrated"
    assert w.profiles[-1] == "profiles/he_cnn_paper.toml"
    assert {p.dram_bytes for p in w.platforms.values()} == {16e9}


def test_dram_that_cannot_hold_the_program_is_refused() -> None:
    with pytest.raises(ConfigError, match="platform .*: DRAM of 0.001 GB cannot hold"):
        load_isc_world(dram_gb=0.001)


def test_profile_path() -> None:
    assert profile_path("heax_set_c") == "profiles/heax_set_c.toml"
    assert profile_path("my/own.toml") == "my/own.toml"
    assert profile_path("own.toml") == "own.toml"
