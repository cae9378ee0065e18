"""Every model of a Device or a Link is one: SimPy resources structurally, the others by
declaration (closed forms, the numba fast path, the op-DAG scheduler)."""

import pytest

from cryptoffload.sim import gpu, op_dag, reconfig_fast, smartnic
from cryptoffload.sim.core import Simulation
from cryptoffload.sim.devices import FifoDevice, ReconfigurableDevice
from cryptoffload.sim.links import SharedLink
from cryptoffload.sim.protocols import Device, Link, implemented_by, implements
from cryptoffload.sim.qat_card import QatDevice
from cryptoffload.sim.storage import NandFlash


def test_simpy_devices_are_devices_and_links_are_links() -> None:
    sim = Simulation(0)
    devices = [FifoDevice(sim, "cpu", servers=2), ReconfigurableDevice(sim, "fpga", slots=2, reconfig_time=0.055),
               QatDevice(sim, "qat", engines=2, ring_capacity=4)]
    links = [SharedLink(sim, "pcie", bandwidth=1e9, latency=1e-6), NandFlash(sim, "nand", bandwidth=8e9, capacity=1e12)]
    for dev in devices:
        assert isinstance(dev, Device) and not isinstance(dev, Link), dev.name
    for link in links:
        assert isinstance(link, Link), link.name


@pytest.mark.parametrize("model, expected", [
    (reconfig_fast.run_kernel, (Device,)),
    (smartnic.TlsCostModel, (Device, Link)),
    (op_dag.schedule, (Device, Link)),
    (gpu.GpuDevice, (Device,)),
])
def test_models_that_are_not_simpy_resources_say_what_they_stand_for(model, expected) -> None:
    assert implemented_by(model) == expected


def test_implements_takes_only_the_vocabulary() -> None:
    with pytest.raises(TypeError, match="Device or Link"):
        implements(int)
    assert implemented_by(object()) == ()
