"""Device DRAM: FIFO reservations wait for room in order, frees wake them, impossible sizes are refused."""

from __future__ import annotations

import pytest

from cryptoffload.errors import ConfigError
from cryptoffload.sim.core import Simulation
from cryptoffload.sim.device_dram import DeviceDRAM


def test_device_dram_fifo_reservations() -> None:
    sim = Simulation(0)
    dram = DeviceDRAM(sim, "dram", 100.0, record=True)
    got = []

    def taker(name, n, delay=0.0):
        if delay:
            yield sim.env.timeout(delay)
        yield from dram.reserve(n)
        got.append((name, sim.now))

    def releaser():
        yield sim.env.timeout(2.0)
        dram.free(60)
        yield sim.env.timeout(1.0)
        dram.free(40)

    sim.process(taker("a", 60))
    sim.process(taker("b", 40))
    sim.process(taker("c", 70, 0.5))
    sim.process(taker("d", 10, 0.6))  # fits at once by size, but waits behind c (FIFO)
    sim.process(releaser())
    sim.run()
    assert got == [("a", 0.0), ("b", 0.0), ("c", 3.0), ("d", 3.0)]
    assert dram.peak == 100.0 and dram.used == 80.0
    with pytest.raises(ConfigError):
        list(dram.reserve(101))
    with pytest.raises(ConfigError):
        dram.free(1000)
