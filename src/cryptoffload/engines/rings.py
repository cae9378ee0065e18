"""Bounded rings between clients and a compute engine, shaped after QAT's ring pairs.

Why rings and not ``queue.Queue``: the study needs the properties a QAT instance has and a
plain queue hides. A request ring is *bounded*, and a full ring is either back-pressure (the
submitter waits) or an immediate ``RingFull`` (QAT's ``CPA_STATUS_RETRY``), chosen per call.
A response ring may *preserve order*: QAT can deliver responses in submission order even when
the hardware finished a later request first; an ordered ring holds such a response back until
every earlier one is delivered. Consumers take *batches* (``get_many``), because the engines
behind the rings amortise one native call over many requests.

Ordered mode and capacity: held-back responses occupy slots (the capacity is never exceeded),
and one slot is kept for the next response in order, so a ring full of held responses can
always take the one that releases them (no deadlock).
"""

from __future__ import annotations

import collections
import math
import threading
import time
from typing import Callable, Generic, Iterable, TypeVar

from cryptoffload.errors import ConfigError

T = TypeVar("T")


class RingFull(Exception):
    """A non-blocking put found the ring full (retry later, as with QAT's RETRY status).

    The ring signals (full, empty, closed) are flow control between our own threads, not user
    errors: one that reaches the command line is a bug, and keeps its traceback."""


class RingEmpty(Exception):
    """A get timed out with nothing to take."""


class RingClosed(Exception):
    """The ring was closed: puts are refused, gets fail once it is drained."""


def _deadline(timeout: float | None) -> float | None:
    return None if timeout is None else time.monotonic() + max(0.0, timeout)


def _remaining(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - time.monotonic())


class Ring(Generic[T]):
    """A thread-safe bounded FIFO with batch gets, optional in-order release and statistics.

    ``ordered=True`` makes it a reorder ring: every put names a sequence number (0, 1, 2, ...,
    each used once) and gets return items strictly in that order.
    """

    def __init__(self, capacity: int, *, ordered: bool = False, name: str = "ring") -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ConfigError(f"ring capacity must be a positive integer, got {capacity!r}")
        if ordered and capacity < 2:
            raise ConfigError("an ordered ring needs capacity >= 2 (one slot is kept for the next in order)")
        self.capacity = capacity
        self.ordered = ordered
        self.name = name
        self._items: collections.deque[T] = collections.deque()
        self._held: dict[int, T] = {}
        self._next_seq = 0
        self._lock = threading.Lock()
        self._not_empty = threading.Condition(self._lock)
        self._not_full = threading.Condition(self._lock)
        self._closed = False
        # statistics (read without the lock: a snapshot, not a transaction)
        self.puts = 0
        self.gets = 0
        self.full_waits = 0
        self.high_water = 0

    # -- state --------------------------------------------------------------------------------
    def __len__(self) -> int:
        """Occupied slots, held-back responses included."""
        return len(self._items) + len(self._held)

    @property
    def ready(self) -> int:
        """Items a get would return now."""
        return len(self._items)

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Refuse further puts and wake every waiter; items already in stay gettable."""
        with self._lock:
            self._closed = True
            self._not_empty.notify_all()
            self._not_full.notify_all()

    # -- put ----------------------------------------------------------------------------------
    def _has_room(self, seq: int | None) -> bool:
        used = len(self._items) + len(self._held)
        if not self.ordered:
            return used < self.capacity
        # keep the last slot for the response that is next in order
        return used < self.capacity if seq == self._next_seq else used < self.capacity - 1

    def _insert(self, item: T, seq: int | None) -> None:
        if not self.ordered:
            self._items.append(item)
        else:
            if seq is None or seq < self._next_seq or seq in self._held:
                raise ConfigError(f"ordered ring {self.name!r}: sequence number {seq!r} missing or reused")
            self._held[seq] = item
            while self._next_seq in self._held:
                self._items.append(self._held.pop(self._next_seq))
                self._next_seq += 1
        self.puts += 1
        self.high_water = max(self.high_water, len(self._items) + len(self._held))
        if self._items:
            self._not_empty.notify_all()

    def put(self, item: T, *, block: bool = True, timeout: float | None = None, seq: int | None = None) -> bool:
        """Add one item; returns True when it had to wait for room (a ring-full wait).

        ``block=False`` raises :class:`RingFull` at once; a ``timeout`` that expires raises it
        too. Raises :class:`RingClosed` after :meth:`close`.
        """
        deadline = _deadline(timeout)
        waited = False
        with self._lock:
            while True:
                if self._closed:
                    raise RingClosed(f"ring {self.name!r} is closed")
                if self._has_room(seq):
                    break
                if not block:
                    raise RingFull(f"ring {self.name!r} is full ({self.capacity} slots)")
                if not waited:
                    waited = True
                    self.full_waits += 1
                left = _remaining(deadline)
                if left == 0.0:
                    raise RingFull(f"ring {self.name!r} stayed full for {timeout} s")
                self._not_full.wait(left)
            self._insert(item, seq)
        return waited

    def put_many(self, items: Iterable[T], *, block: bool = True, seqs: Iterable[int] | None = None) -> int:
        """Add items in order, taking the lock once per run of free slots; returns how many
        were added (all of them when ``block``; those that fit otherwise)."""
        batch = list(items)
        seq_list = list(seqs) if seqs is not None else [None] * len(batch)
        if self.ordered and len(seq_list) != len(batch):
            raise ConfigError("put_many on an ordered ring needs one sequence number per item")
        done = 0
        waited = False
        with self._lock:
            while done < len(batch):
                if self._closed:
                    raise RingClosed(f"ring {self.name!r} is closed")
                while done < len(batch) and self._has_room(seq_list[done]):
                    self._insert(batch[done], seq_list[done])
                    done += 1
                if done == len(batch) or not block:
                    break
                if not waited:
                    waited = True
                    self.full_waits += 1
                self._not_full.wait()
        return done

    def wait_not_full(self, timeout: float | None = None, *, seq: int | None = None) -> bool:
        """Wait until a put (of sequence number ``seq`` on an ordered ring) could succeed, or
        the ring closes; False on timeout."""
        with self._lock:
            return self._not_full.wait_for(lambda: self._closed or self._has_room(seq), timeout)

    # -- get ----------------------------------------------------------------------------------
    def get_many(self, max_items: int | None = None, *, timeout: float | None = None,
                 take: Callable[[int], int] | None = None) -> list[T]:
        """Up to ``max_items`` items, waiting up to ``timeout`` (None: forever, 0: not at all)
        for the first one. Returns ``[]`` on timeout; raises :class:`RingClosed` once the ring
        is closed and drained.

        ``take`` maps the number of ready items to how many to take (at least 1), which is how
        an engine shares a burst among its workers or rounds a batch to whole SIMD lanes.
        """
        deadline = _deadline(timeout)
        with self._lock:
            while not self._items:
                if self._closed:
                    raise RingClosed(f"ring {self.name!r} is closed")
                left = _remaining(deadline)
                if left == 0.0:
                    return []
                self._not_empty.wait(left)
            ready = len(self._items)
            count = ready if max_items is None else min(ready, max(1, max_items))
            if take is not None:
                count = min(count, max(1, take(ready)))
            out = [self._items.popleft() for _ in range(count)]
            self.gets += count
            self._not_full.notify_all()
        return out

    def get(self, *, timeout: float | None = None) -> T:
        """One item; :class:`RingEmpty` when ``timeout`` expires first."""
        got = self.get_many(1, timeout=timeout)
        if not got:
            raise RingEmpty(f"ring {self.name!r} stayed empty for {timeout} s")
        return got[0]

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait until a get would return something without taking it (False on timeout)."""
        with self._lock:
            return self._not_empty.wait_for(lambda: bool(self._items) or self._closed, timeout)


class RingPair(Generic[T]):
    """A request ring and a response ring, as a QAT instance has (``requests`` FIFO;
    ``responses`` optionally in submission order)."""

    def __init__(self, capacity: int, *, response_capacity: int | None = None, in_order: bool = False) -> None:
        self.requests: Ring[T] = Ring(capacity, name="requests")
        self.responses: Ring[T] = Ring(response_capacity or capacity, ordered=in_order, name="responses")

    def close(self) -> None:
        self.requests.close()
        self.responses.close()


def share_of(workers: int, max_batch: int, lanes: int = 1) -> Callable[[int], int]:
    """A ``take`` policy: an even share of a burst per worker, capped at ``max_batch`` and
    rounded to whole groups of ``lanes`` when at least one full group is there."""

    def take(ready: int) -> int:
        n = min(max_batch, max(1, math.ceil(ready / max(1, workers))))
        if lanes > 1 and ready >= lanes:
            n = max(lanes, (n // lanes) * lanes)
            n = min(n, (min(ready, max_batch) // lanes) * lanes or lanes)
        return n

    return take
