"""The timer of CKKS work (cryptoffload.crypto.ckks.timing.timed) on a device whose work finishes
only when waited for (tests/late_device.py): it counts the block's work and nothing before it."""

from __future__ import annotations

import math

import pytest

from cryptoffload.crypto.ckks import CkksBackend, make_backend, timed
from late_device import LateDevice, fake_clock

from .ckks_helpers import PARAMS


def test_timed_waits_before_starting_and_before_stopping(monkeypatch):
    clock = fake_clock(monkeypatch)
    dev = LateDevice(PARAMS, clock, {"keygen": 5.0, "encrypt": 3.0, "decrypt": 0.5})
    dev.keygen([])                                  # 5 s queued, not waited for
    with timed(dev) as t:
        assert math.isnan(t.seconds)
        ct = dev.encrypt([1.0, 2.0])
    assert t.seconds == 3.0 and clock.now == 8.0    # keygen's 5 s before the start, not in the time
    with timed(dev) as t:
        dev.decrypt(ct)
    assert t.seconds == 0.5
    with pytest.raises(ValueError), timed(dev) as t:
        dev.encrypt([1.0])
        raise ValueError("inside")
    assert math.isnan(t.seconds)                    # a block that raised has no time


def test_synchronize_is_part_of_the_interface():
    """A no-op default on the CPU backends (they finish each op before returning)."""
    assert "synchronize" in vars(CkksBackend)
    emu = make_backend("emulator", PARAMS)
    assert type(emu).synchronize is CkksBackend.synchronize and emu.synchronize() is None
