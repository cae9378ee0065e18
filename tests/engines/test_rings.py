"""Request/response rings: bounds, order, back-pressure, in-order release, close."""

from __future__ import annotations

import threading
import time

import pytest

from cryptoffload.engines.rings import Ring, RingClosed, RingEmpty, RingFull, RingPair, share_of
from cryptoffload.errors import ConfigError


def test_fifo_order_and_batches() -> None:
    ring: Ring[int] = Ring(16)
    for i in range(10):
        ring.put(i)
    assert ring.get_many(4) == [0, 1, 2, 3]
    assert ring.get_many() == [4, 5, 6, 7, 8, 9]
    assert ring.get_many(timeout=0) == []
    with pytest.raises(RingEmpty):
        ring.get(timeout=0.01)


def test_capacity_never_exceeded_under_concurrent_producers() -> None:
    cap = 5
    ring: Ring[tuple[int, int]] = Ring(cap)
    producers = 4
    per = 200
    seen_max = 0
    got: list[tuple[int, int]] = []

    def produce(p: int) -> None:
        for i in range(per):
            ring.put((p, i))

    threads = [threading.Thread(target=produce, args=(p,)) for p in range(producers)]
    for t in threads:
        t.start()
    while len(got) < producers * per:
        seen_max = max(seen_max, len(ring))
        got.extend(ring.get_many(3, timeout=1.0))
    for t in threads:
        t.join()
    assert ring.high_water <= cap and seen_max <= cap
    assert ring.full_waits > 0
    # per producer, FIFO order is kept
    for p in range(producers):
        assert [i for q, i in got if q == p] == list(range(per))


def test_non_blocking_put_raises_ring_full_and_timeout() -> None:
    ring: Ring[int] = Ring(2)
    ring.put(1)
    assert ring.put(2) is False          # no wait needed
    with pytest.raises(RingFull):
        ring.put(3, block=False)
    with pytest.raises(RingFull):
        ring.put(3, timeout=0.01)
    assert ring.put_many([7, 8], block=False) == 0
    ring.get()
    assert ring.put_many([7, 8], block=False) == 1


def test_blocking_put_waits_for_room() -> None:
    ring: Ring[int] = Ring(1)
    ring.put(0)
    result: list[bool] = []
    t = threading.Thread(target=lambda: result.append(ring.put(1)))
    t.start()
    time.sleep(0.02)
    assert ring.get() == 0
    t.join(2)
    assert result == [True] and ring.get() == 1 and ring.full_waits == 1


def test_in_order_release_holds_later_response() -> None:
    ring: Ring[str] = Ring(4, ordered=True)
    ring.put("job1", seq=1)              # the later job finished first
    assert ring.get_many(timeout=0) == []
    assert len(ring) == 1 and ring.ready == 0
    ring.put("job2", seq=2)
    assert ring.get_many(timeout=0) == []
    ring.put("job0", seq=0)              # the earlier one completes: all three are released
    assert ring.get_many() == ["job0", "job1", "job2"]


def test_ordered_ring_keeps_a_slot_for_the_next_in_order() -> None:
    ring: Ring[int] = Ring(3, ordered=True)
    ring.put(2, seq=2)
    ring.put(1, seq=1)
    with pytest.raises(RingFull):        # a third out-of-order response would block seq 0
        ring.put(3, seq=3, block=False)
    ring.put(0, seq=0)
    assert len(ring) == 3 and ring.high_water == 3
    assert ring.get_many() == [0, 1, 2]
    with pytest.raises(ConfigError):
        ring.put(1, seq=1)               # reused sequence number


def test_close_wakes_getters_and_putters() -> None:
    empty: Ring[int] = Ring(2)
    full: Ring[int] = Ring(1)
    full.put(0)
    errors: list[type] = []

    def getter() -> None:
        try:
            empty.get_many(timeout=5)
        except RingClosed:
            errors.append(RingClosed)

    def putter() -> None:
        try:
            full.put(1, timeout=5)
        except RingClosed:
            errors.append(RingClosed)

    threads = [threading.Thread(target=getter), threading.Thread(target=putter)]
    for t in threads:
        t.start()
    time.sleep(0.05)
    empty.close()
    full.close()
    for t in threads:
        t.join(2)
    assert errors == [RingClosed, RingClosed]
    assert full.get_many() == [0]        # what was in stays gettable
    with pytest.raises(RingClosed):
        full.get_many(timeout=0)
    with pytest.raises(RingClosed):
        full.put(5)


def test_share_policy_and_ring_pair() -> None:
    take = share_of(workers=2, max_batch=64, lanes=8)
    assert take(100) == 48 and take(20) == 8 and take(5) == 3
    assert share_of(workers=1, max_batch=64, lanes=8)(20) == 16
    assert share_of(workers=4, max_batch=10)(100) == 10
    pair: RingPair[int] = RingPair(4, in_order=True)
    assert pair.responses.ordered and not pair.requests.ordered
    pair.close()
    assert pair.requests.closed and pair.responses.closed
    with pytest.raises(ConfigError):
        Ring(0)
    with pytest.raises(ConfigError):
        Ring(1, ordered=True)
