"""Paillier encryption on every core of this machine at once: one pinned process per core.

Why one function: the paillier-offload study (its "all cores" row beside the paper's QAT card)
and the GPU benchmark (the CPU it is compared with) measure the same thing, and two copies had
already drifted in batch size and timing loop. What differs between them is only which
encryptor they time (``constant_time``) and how many messages one call encrypts (``batch``).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import secrets

from cryptoffload import bench
from cryptoffload.crypto import paillier as pl
from cryptoffload.engines.pinning import pin


def _core_worker(args: tuple[int, str, str, float, bool, int]) -> float:
    """Encryptions per second on core ``cpu`` (the key travels as hex: a spawned process)."""
    cpu, n_hex, hs_hex, seconds, constant_time, batch = args
    pin(0, cpu)  # a core that may not be used leaves the process unpinned
    pk = pl.PublicKey(int(n_hex, 16), int(hs_hex, 16))
    enc = pl.ENCRYPTION.encryptor(pk, "auto", constant_time=constant_time)
    msgs = [secrets.randbelow(pk.n) for _ in range(batch)]
    enc.encrypt_raw(msgs)  # build the table before the clock starts
    return bench.time_case(bench.Case("all-cores", lambda: enc.encrypt_raw(msgs), len(msgs)), seconds)


def usable_cores() -> list[int]:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


def all_cores_encryption_rate(pk: pl.PublicKey, seconds: float, *, constant_time: bool,
                              batch: int = 256) -> tuple[float, int]:
    """Encryptions per second with one pinned process per usable core, all running at once:
    (sum of the rates, cores). Each process times ``batch``-message calls for ``seconds``."""
    cpus = usable_cores()
    jobs = [(c, format(pk.n, "x"), format(pk.hs, "x"), seconds, constant_time, batch) for c in cpus]
    with mp.get_context("spawn").Pool(len(cpus)) as pool:
        rates = pool.map(_core_worker, jobs)
    return float(sum(rates)), len(cpus)


__all__ = ["all_cores_encryption_rate", "usable_cores"]
