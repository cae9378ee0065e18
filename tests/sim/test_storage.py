"""Storage devices of the in-storage study: PCIe lanes as one fairly shared link of
``lanes x lane bandwidth``, NAND flash and SSDs as links with a capacity."""

from __future__ import annotations

import pytest

from cryptoffload.errors import ConfigError
from cryptoffload.sim.core import Simulation
from cryptoffload.sim.storage import NandFlash, Ssd, pcie_link


def test_pcie_lanes_add_up_and_are_checked() -> None:
    sim = Simulation(0)
    link = pcie_link(sim, "x16", 16, 1e9)
    assert link.bandwidth == 16e9
    for lanes in (0, 2.5, True):
        with pytest.raises(ConfigError, match="x4: lanes must be a positive integer"):
            pcie_link(sim, "x4", lanes, 1e9)


def test_nand_and_ssd_report_their_capacity() -> None:
    sim = Simulation(0)
    nand, ssd = NandFlash(sim, "nand", 8e9, 1e12), Ssd(sim, "ssd", 3e9, 4e12)
    assert nand.report(None)["capacity"] == 1e12 and ssd.report(None)["capacity"] == 4e12
    assert (nand.resource_type, ssd.resource_type) == ("nand", "ssd")
    with pytest.raises(ConfigError):
        NandFlash(sim, "nand2", 8e9, 0)
