"""Which core each worker runs on, and binding a process or thread to it.

Why apart from the engine: pinning is a property of where a worker runs (Linux's
``sched_setaffinity``), not of what it computes; the CPU engine pins its worker processes
from inside them and its threads from the dispatcher, and a core that does not exist or may
not be used leaves the worker unpinned rather than failing.
"""

from __future__ import annotations

import os
from typing import Sequence


def choose_cores(workers: int, pin: bool, cores: Sequence[int] | None = None) -> list[int | None]:
    """The core for each worker: ``cores`` if given, else worker i on the i-th core this
    process may run on; None (not pinned) when ``pin`` is off or that core does not exist."""
    if not pin or not hasattr(os, "sched_getaffinity"):
        return [None] * workers
    allowed = sorted(os.sched_getaffinity(0))
    wanted = list(cores) if cores is not None else allowed
    return [wanted[i] if i < len(wanted) and wanted[i] in allowed else None for i in range(workers)]


def pin(target: int, core: int | None) -> int | None:
    """Bind ``target`` (a pid or native thread id, 0: the caller) to ``core``; the core bound, or
    None when ``core`` is None or the kernel refuses."""
    if core is None:
        return None
    try:
        os.sched_setaffinity(target, {core})
    except OSError:
        return None
    return core
