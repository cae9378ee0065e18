"""A fake asynchronous device and a fake clock, for the tests that prove a timer WAITS for it.

:class:`LateDevice` is the exact emulator backend whose ops behave like a GPU's: each op named
in ``work`` queues that many seconds of "device work" on a :class:`FakeClock` and returns at
once, without moving the clock; only :meth:`LateDevice.synchronize` moves it, by the work
queued so far. The first call of each such op queues ``first_call`` seconds more (a GPU
compiles or loads its kernels then). :func:`fake_clock` puts the clock in place of the
``time.perf_counter`` of :mod:`cryptoffload.crypto.ckks.timing`, the timer every CKKS timer
uses. A timer that waits before starting and before stopping then records exactly the work
of what it timed; one that misses the first wait counts the previous phase's work, one that
misses the second records nothing (or leaves its work to the next timer).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable

from cryptoffload.crypto.ckks import CkksParams
from cryptoffload.crypto.ckks.emulator import EmulatorBackend

#: the ops that queue work (every op of the interface that a program runs)
OPS = ("keygen", "encode", "encrypt", "decrypt", "add", "sub", "negate", "add_plain", "sub_plain", "mul_plain",
       "mul", "relinearize", "rescale", "mod_switch_to", "rotate", "rotate_many", "serialize_ciphertext",
       "deserialize_ciphertext")


class FakeClock:
    """Seconds that move only when the device is waited for."""

    def __init__(self) -> None:
        self.now = 0.0
        self.queued = 0.0   # device work not yet waited for

    def __call__(self) -> float:
        return self.now

    def drain(self) -> None:
        self.now += self.queued
        self.queued = 0.0


def fake_clock(monkeypatch: Any) -> FakeClock:
    """A :class:`FakeClock` in place of the CKKS timer's ``perf_counter``."""
    from cryptoffload.crypto.ckks import timing

    clock = FakeClock()
    monkeypatch.setattr(timing, "perf_counter", clock)
    return clock


class LateDevice(EmulatorBackend):
    """The emulator, with each op's work finishing on ``clock`` only when waited for (module
    docstring). ``counts``: calls per op (a call made inside another op is not counted)."""

    def __init__(self, params: CkksParams, clock: FakeClock, work: dict[str, float], first_call: float = 0.0,
                 **kw: Any) -> None:
        super().__init__(params, **kw)
        self.clock = clock
        self.work = dict(work)
        self.first_call = first_call
        self.counts: Counter[str] = Counter()
        self._depth = 0

    def synchronize(self) -> None:
        self.clock.drain()

    def _queue(self, op: str) -> None:
        self.counts[op] += 1
        seconds = self.work.get(op, 0.0)
        if seconds and self.counts[op] == 1:
            seconds += self.first_call
        self.clock.queued += seconds


def _late(op: str) -> Callable[..., Any]:
    base = getattr(EmulatorBackend, op)

    def method(self: LateDevice, *args: Any, **kw: Any) -> Any:
        self._depth += 1
        try:
            out = base(self, *args, **kw)
        finally:
            self._depth -= 1
        if self._depth == 0:
            self._queue(op)
        return out

    method.__name__ = op
    return method


for _op in OPS:
    setattr(LateDevice, _op, _late(_op))
