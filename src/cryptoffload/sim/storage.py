"""Storage devices for the in-storage computing study (Suzuki and Yamana): NAND flash on a
computational storage device, SSDs, and PCIe lanes as links.

Why these pieces: the paper compares three ways of feeding an FPGA with CKKS weights and keys
that do not fit in its DRAM -- from host memory, from an SSD through the host, or from NAND
flash on the same board (a computational storage device). What differs is only the path the
bytes take and which links are shared, so the model is: an FPGA (:class:`~.devices.Device`,
one op at a time, op times from :class:`~.fpga_cost.FpgaCostModel`), a
:class:`~.device_dram.DeviceDRAM` with a capacity from which dead data is evicted at once, and
links (:class:`~.links.Link`, exact processor sharing) for NAND, SSD and PCIe lanes -- this
module. :func:`~.program_steps.compile_steps` turns a program into the steps the simulation
executes; ``sim/isc_platform.py`` and ``sim/isc_simulation.py`` wire them into platforms.

Every byte that leaves storage is counted once; intermediate ciphertexts never leave DRAM.
"""

from __future__ import annotations

from cryptoffload.checks import JsonDict
from cryptoffload.errors import ConfigError
from cryptoffload.sim.core import Simulation, check_positive
from cryptoffload.sim.links import SharedLink


class NandFlash(SharedLink):
    """NAND flash on a CSD: sequential read at ``bandwidth`` into the board's DRAM (the data
    is laid out in program order, the paper's section 3), and a capacity for weights and keys."""

    resource_type = "nand"

    def __init__(self, sim: Simulation, name: str, bandwidth: float, capacity: float) -> None:
        super().__init__(sim, name, bandwidth)
        self.capacity = check_positive("NAND capacity", capacity)

    def report(self, span: float | None) -> JsonDict:
        return {**super().report(span), "capacity": self.capacity}


class Ssd(NandFlash):
    """An SSD (or an array of them): read bandwidth and capacity; it reaches an FPGA only
    through host memory, over PCIe lanes modelled as further links."""

    resource_type = "ssd"


def pcie_link(sim: Simulation, name: str, lanes: int, lane_bandwidth: float) -> SharedLink:
    """PCIe lanes as one link: ``lanes * lane_bandwidth``, fairly shared by every transfer on
    it (devices behind one switch, or a group of devices given a pool of lanes)."""
    if isinstance(lanes, bool) or not isinstance(lanes, int) or lanes < 1:
        raise ConfigError(f"{name}: lanes must be a positive integer, got {lanes!r}")
    return SharedLink(sim, name, lanes * check_positive("lane bandwidth", lane_bandwidth))


__all__ = ["NandFlash", "Ssd", "pcie_link"]
