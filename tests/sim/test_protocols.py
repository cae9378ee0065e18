"""Every model of a Device or a Link is one: SimPy resources structurally, the models that are
not resources through the accounts they give of their devices (a type checker verifies both:
``as_device``, ``device_account`` and ``scheduled_devices`` are annotated to return Device)."""

import numpy as np
import pytest

from cryptoffload.sim import op_dag
from cryptoffload.sim.reconfig import fast as reconfig_fast
from cryptoffload.sim.core import Simulation
from cryptoffload.sim.devices import FifoDevice, ReconfigurableDevice
from cryptoffload.sim.gpu import GpuDevice, GpuOpCost, GpuParams, as_device
from cryptoffload.sim.links import SharedLink
from cryptoffload.sim.protocols import Device, DeviceAccount, Link, device_account
from cryptoffload.sim.qat.card import QatDevice
from cryptoffload.sim.storage import NandFlash
from cryptoffload.workloads.bsgs import BsgsShape, build_dag, split


def test_simpy_devices_are_devices_and_links_are_links() -> None:
    sim = Simulation(0)
    devices = [FifoDevice(sim, "cpu", servers=2), ReconfigurableDevice(sim, "fpga", slots=2, reconfig_time=0.055),
               QatDevice(sim, "qat", engines=2, ring_capacity=4)]
    links = [SharedLink(sim, "pcie", bandwidth=1e9, latency=1e-6), NandFlash(sim, "nand", bandwidth=8e9, capacity=1e12)]
    for dev in devices:
        assert isinstance(dev, Device) and not isinstance(dev, Link), dev.name
    for link in links:
        assert isinstance(link, Link), link.name


def test_a_device_account_reports_its_busy_time() -> None:
    acc = device_account("fpga", "fpga", 3)
    assert isinstance(acc, Device) and not isinstance(acc, Link)
    assert acc == DeviceAccount("fpga", "fpga", 3.0)
    assert acc.utilisation(4.0) == 0.75
    assert acc.report(4.0) == {"type": "fpga", "busy_time": 3.0, "utilisation": 0.75}
    assert acc.report(None)["utilisation"] is None


def test_the_fast_path_accounts_for_the_host_and_the_fpga() -> None:
    """Three 1000-byte requests, 1 s apart, the first and third on the FPGA (FIXED mode)."""
    res = reconfig_fast.run_kernel(np.array([0.0, 1.0, 2.0]), np.array([0, 1, 0]), np.full(3, 1000.0),
                                   np.array([1e-6, 2e-6]), np.array([1e-7, 1e-7]), 0.0, 0.055,
                                   reconfig_fast.FIXED, fixed=np.array([True, False]))
    host, fpga = res.devices()
    assert (host.name, host.resource_type, host.busy_time) == ("host", "cpu", 2e-3)
    assert (fpga.name, fpga.resource_type, fpga.busy_time) == ("fpga", "fpga", 2 * (1000 * 1e-7))


def test_the_scheduler_accounts_for_each_device() -> None:
    costs = op_dag.DagCosts(rotate_s=1e-3, pmul_s=1e-4, add_s=2e-5, bytes=1e6, bandwidth_Bps=1e9, latency_s=1e-5)
    sch = op_dag.schedule(build_dag(split(BsgsShape(64, 8, slots=64, level=3), 2)), costs)
    devs = op_dag.scheduled_devices(sch)
    assert [d.name for d in devs] == ["device0", "device1"]
    assert [d.busy_time for d in devs] == sch.busy and all(isinstance(d, Device) for d in devs)


def test_the_gpu_is_a_device_through_its_compute() -> None:
    sim = Simulation(0)
    params = GpuParams({"encrypt": GpuOpCost(1e-4, 1e-6, 1000, 0.0, 0.0)}, 1e9, 1e9, 0.0)
    g = GpuDevice(sim, "gpu", params)
    sim.process(g.run_batch("encrypt", 2000))
    sim.run()
    dev = as_device(g)
    assert isinstance(dev, Device) and not isinstance(dev, Link)
    assert dev.busy_time == pytest.approx(1e-4 + 2e-3, rel=1e-12) and dev.busy_time == g.compute.busy_time
    assert dev.report(None)["type"] == "gpu"

