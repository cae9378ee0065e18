"""The HE-CNN server's memory: what one session may take, a budget for all, and giving back.

Why: a session holds a client's keys in SEAL's memory (~0.3 GB at the default parameters,
from ~0.11 GB of compressed context), the context's bytes, and the model's weights encoded for
those keys (~0.09 GB). Counting sessions alone does not bound memory when the parameters, the
plan or the number of clients change, so each session request *reserves* its bound before a
byte of its body is read, is refused (503) when the budget cannot hold it, and is charged what
it holds once opened. A refused request leaves nothing alive, and the allocator is asked to
return what was freed (glibc keeps freed heap pages otherwise).

Sizes (:func:`session_bounds`) are SEAL's in-memory sizes, from the parameters and the plan:
the public key (2 polynomials over all ``K`` primes), the relinearisation key and one Galois key
per rotation step the plan needs (:attr:`~cryptoffload.crypto.ckks.CkksParams.ksk_bytes` each),
the context's serialised bytes (kept by the backend to serve ``public_context``), the encoded
weights (counted by encoding them once on the emulator).
"""

from __future__ import annotations

import ctypes
import gc
import platform
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cryptoffload.crypto.ckks import WORD_BYTES, CkksParams, make_backend
from cryptoffload.errors import ConfigError

if TYPE_CHECKING:
    from cryptoffload.apps.he_cnn.packing import PerChannelPlan

MIB = 1 << 20

__all__ = ["MemoryBudget", "SessionBounds", "release_memory", "session_bounds"]


@dataclass(frozen=True)
class SessionBounds:
    """What one session may make the server hold, in bytes."""

    keys: int      # the keys in memory
    context: int   # the largest public context accepted (compressed or not), kept while open
    weights: int   # the plan's plaintexts encoded for one key set

    @property
    def total(self) -> int:
        return self.keys + self.context + self.weights


def session_bounds(params: CkksParams, plan: PerChannelPlan, frame_slack: int) -> SessionBounds:
    """Bounds of one session of ``plan`` (a :class:`~cryptoffload.apps.he_cnn.packing.PerChannelPlan`)."""
    public = 2 * params.poly_modulus_degree * (params.data_primes + 1) * WORD_BYTES
    keys = public + (1 + len(plan.rotation_steps())) * params.ksk_bytes
    emulator = make_backend("emulator", params, values=False)
    emulator.keygen(plan.rotation_steps())
    weights = plan.prepare(emulator).plaintext_bytes
    return SessionBounds(keys, keys + frame_slack, weights)


class MemoryBudget:
    """Bytes reserved and charged against ``total``: ``reserve(n)`` before a session request
    reads its body (False: refuse it), ``settle(n, charge)`` once it is opened or refused."""

    def __init__(self, total: int, per_session: int, need: int) -> None:
        if per_session < need:
            raise ConfigError(f"--session-memory {per_session / MIB:,.0f} MiB is below what one session needs at "
                              f"these parameters and this model ({need / MIB:,.0f} MiB: keys, context, encoded "
                              "weights); raise it")
        if total < per_session:
            raise ConfigError(f"--memory-budget {total / MIB:,.0f} MiB cannot hold one session "
                              f"({per_session / MIB:,.0f} MiB); raise it or lower --session-memory")
        self.total, self.per_session = total, per_session
        self.used = 0

    def reserve(self) -> bool:
        if self.used + self.per_session > self.total:
            return False
        self.used += self.per_session
        return True

    def settle(self, charge: int) -> None:
        """Turn one reservation into ``charge`` bytes (0 for a refused request)."""
        self.used += min(charge, self.per_session) - self.per_session

    def free(self, charge: int) -> None:
        self.used -= charge


def release_memory() -> int:
    """Collect garbage and, on glibc, return freed heap pages to the system (``malloc_trim``):
    after a refused request or a closed session. Returns what ``gc.collect`` found."""
    found = gc.collect()
    if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):  # not glibc after all: freed memory stays with the allocator
            pass
    return found
