"""Fixtures of the in-storage computing model's tests (test_fpga_cost, test_program_steps, test_isc_platform, test_isc_simulation)."""

from __future__ import annotations

import pytest

from cryptoffload.sim.isc.platform import load_platforms
from cryptoffload.sim.isc.fpga_cost import FpgaCostModel


@pytest.fixture(scope="module")
def presets():
    """The FPGA-only, FPGA&SSD and CSD presets of the built-in profile."""
    return load_platforms()


@pytest.fixture(scope="module")
def cost():
    """FPGA op costs from the HEAX Set-C profile."""
    return FpgaCostModel.from_profile()
