"""The QAT card's two rules: responses in submission order, a bounded ring that refuses."""

from __future__ import annotations

from cryptoffload.sim.core import Simulation
from cryptoffload.sim.qat.card import QatDevice


# -- the card's rules -------------------------------------------------------------------------
def test_responses_are_delivered_in_submission_order():
    sim = Simulation(0)
    dev = QatDevice(sim, "qat", engines=2, ring_capacity=8)
    slow = dev.try_submit(0.0, 10.0)
    fast = dev.try_submit(0.0, 1.0)
    assert slow is not None and fast is not None
    assert fast.finish == 1.0 and fast.visible == 10.0  # done early, seen only after slow
    assert dev.next_visible == 10.0
    assert dev.poll(5.0) == []
    assert dev.poll(10.0) == [slow, fast]
    assert dev.outstanding == 0


def test_engines_serve_in_fifo_order():
    sim = Simulation(0)
    dev = QatDevice(sim, "qat", engines=2, ring_capacity=8)
    reqs = [dev.try_submit(0.0, 1.0) for _ in range(5)]
    assert [r.start for r in reqs] == [0.0, 0.0, 1.0, 1.0, 2.0]
    assert [r.finish for r in reqs] == [1.0, 1.0, 2.0, 2.0, 3.0]


def test_full_ring_refuses_until_a_poll_frees_a_slot():
    sim = Simulation(0)
    dev = QatDevice(sim, "qat", engines=4, ring_capacity=2)
    assert dev.try_submit(0.0, 1.0) is not None
    assert dev.try_submit(0.0, 1.0) is not None
    assert dev.try_submit(0.5, 1.0) is None and dev.refused == 1
    assert dev.try_submit(1.5, 1.0) is None  # finished but not yet polled: still in the ring
    assert len(dev.poll(1.5)) == 2
    assert dev.try_submit(1.5, 1.0) is not None
    assert dev.max_outstanding == 2
