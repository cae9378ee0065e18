"""Which core each worker gets: none when pinning is off, the allowed cores in order, and no
pin for a core this process may not use."""

from __future__ import annotations

import os

import pytest

from cryptoffload.engines.pinning import choose_cores, pin

needs_affinity = pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="no sched_getaffinity here")


def test_pin_off_or_no_core_pins_nothing() -> None:
    assert choose_cores(3, pin=False) == [None, None, None]
    assert pin(0, None) is None


@needs_affinity
def test_cores_in_order_and_unusable_ones_left_unpinned() -> None:
    allowed = sorted(os.sched_getaffinity(0))
    got = choose_cores(len(allowed) + 1, pin=True)
    assert got == [*allowed, None]
    assert choose_cores(2, pin=True, cores=[allowed[-1], max(allowed) + 1000]) == [allowed[-1], None]
