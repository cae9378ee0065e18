"""Timers of CKKS work that are right on an asynchronous device: the one rule, in one place.

Why: the GPU backend (:class:`~cryptoffload.crypto.ckks.gpu.backend.GpuCkksBackend`) queues
its kernels on a CUDA stream and returns before they ran. A timer stopped right after the call
would measure the launches, and the unfinished work would land in whatever is timed next (the
encryption's kernels in the evaluation's time, the last op's in the decryption's). So every
timer of CKKS work -- the HE-CNN benchmark's and inference's phases, the recording backend's
per-op ``wall_s``, the calibration's op costs -- is :func:`timed`: it waits for the device
(:meth:`~cryptoffload.crypto.ckks.backend.CkksBackend.synchronize`) before it starts, so that
earlier work is not counted, and before it stops, so that this work is. On the CPU backends
``synchronize`` does nothing and the timer is a plain ``time.perf_counter`` difference.

Warm-up is the caller's part: a GPU's first call of an op compiles or loads its kernels and
fills caches, so a measurement that is meant to be steady state runs the work once untimed
first (the HE-CNN benchmark runs one warm-up image, the calibration one warm-up pass).
"""

from __future__ import annotations

from contextlib import contextmanager
from time import perf_counter
from typing import Iterator

from cryptoffload.crypto.ckks.backend import CkksBackend

__all__ = ["Stopwatch", "timed"]


class Stopwatch:
    """What :func:`timed` yields: ``seconds`` is NaN inside the block, the elapsed time after it."""

    __slots__ = ("seconds",)

    def __init__(self) -> None:
        self.seconds = float("nan")


@contextmanager
def timed(backend: CkksBackend) -> Iterator[Stopwatch]:
    """Time the block's work on ``backend``'s device (``time.perf_counter``)::

        with timed(be) as t:
            ct = be.encrypt(x)
        t.seconds

    Waits for the device before starting and before stopping (see the module docstring). A
    block that raises leaves ``seconds`` NaN."""
    backend.synchronize()
    watch = Stopwatch()
    start = perf_counter()
    yield watch
    backend.synchronize()
    watch.seconds = perf_counter() - start
