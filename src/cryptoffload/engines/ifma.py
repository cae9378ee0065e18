"""IFMA engine: jobs in groups of eight through AVX512-IFMA (Intel crypto_mb), on this CPU.

Why eight: crypto_mb's ``mbx_exp_mb8`` runs eight independent exponentiations in the eight
52-bit lanes of a 512-bit register, and costs about the same for one filled lane as for eight
(measured here: ~2.2 ms per call at a 2048-bit modulus, versus ~1.1 ms for one GMP modexp).
So the dispatcher takes batches in whole lane groups when the ring holds that many, may
``linger`` briefly to fill a partial group, and sends a group with fewer than ``gmp_below``
jobs to GMP instead, where one job is cheaper than a mostly empty lane group.

Moduli: crypto_mb pads the modulus to 1024/2048/3072/4096 bits and gives wrong results when
the modulus's top 52-bit digit is empty (see ``native.mbx_kernel_bits``), so only odd moduli
that fill their kernel go to IFMA (Paillier's n^2 and RSA moduli do); the rest use GMP. Encryption jobs use the IFMA ``Encryptor`` (fixed-base table in IFMA
form, eight ciphertexts per pass).
"""

from __future__ import annotations

import time
from typing import Sequence

from cryptoffload.crypto import native
from cryptoffload.engines.base import BatchEngine, Outcome, Request
from cryptoffload.engines.compute import ServiceEncryptors, compute_batch
from cryptoffload.engines.rings import RingClosed
from cryptoffload.errors import BackendUnavailable, ConfigError

LANES = 8


def ifma_reason() -> str | None:
    """None when IFMA works here, else a one-line reason."""
    if not native.native_available():
        return "the native Paillier core is not built"
    if not native.ifma_available():
        return "no AVX512-IFMA here (CPU lacks it, the core was built without crypto_mb, or COPL_DISABLE_IFMA=1)"
    return None


def ifma_eligible(modulus: int) -> bool:
    """True when crypto_mb computes correctly for this modulus (see the module docstring)."""
    return modulus > 0 and modulus % 2 == 1 and native.mbx_kernel_bits(modulus) is not None


class IfmaPowm:
    """``powm(bases, exps, modulus)`` that picks IFMA or GMP per group (counts both)."""

    def __init__(self, gmp_below: int = 2) -> None:
        self.gmp_below = gmp_below
        self.ifma_jobs = 0
        self.gmp_jobs = 0

    def __call__(self, bases: Sequence[int], exps: Sequence[int], modulus: int, exp_bits: int | None = None) -> list[int]:
        if len(bases) < self.gmp_below or not ifma_eligible(modulus) or any(e < 0 for e in exps):
            self.gmp_jobs += len(bases)
            return native.powm_batch(bases, exps, modulus)
        self.ifma_jobs += len(bases)
        exp_bits = max(1, exp_bits or 0, max(e.bit_length() for e in exps))
        return native.mbx_powm_batch(bases, exps, exp_bits, modulus)


class IfmaEngine(BatchEngine):
    """Jobs through AVX512-IFMA, ``workers`` dispatcher threads (the native call releases the
    GIL), batches of whole lane groups up to ``max_batch`` (rounded to a multiple of 8).

    ``linger_s``: how long a dispatcher may wait to fill a partial lane group (0: never; a
    lone synchronous caller would only lose time). ``gmp_below``: smaller groups use GMP.
    Raises :class:`BackendUnavailable` where IFMA is missing.
    """

    name = "ifma"

    def __init__(self, workers: int = 1, *, max_batch: int = 64, linger_s: float = 0.0, gmp_below: int = 2,
                 constant_time: bool = True, ring_capacity: int = 1024, in_order: bool = False,
                 block_when_full: bool = True) -> None:
        reason = ifma_reason()
        if reason is not None:
            raise BackendUnavailable(f"IfmaEngine unavailable: {reason}")
        if linger_s < 0:
            raise ConfigError("linger_s must be >= 0")
        max_batch = max(LANES, (max_batch // LANES) * LANES)
        super().__init__(workers=workers, max_batch=max_batch, ring_capacity=ring_capacity,
                         in_order=in_order, block_when_full=block_when_full, lanes=LANES)
        self.linger_s = linger_s
        self.powm = IfmaPowm(gmp_below)
        self._encryptors = ServiceEncryptors("ifma", constant_time)
        self._start_dispatchers()

    def _next_batch(self) -> list[Request]:
        batch = super()._next_batch()
        if self.linger_s <= 0 or len(batch) % LANES == 0:
            return batch
        deadline = time.monotonic() + self.linger_s
        want = min(self.max_batch, -(-len(batch) // LANES) * LANES)
        while len(batch) < want:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                batch.extend(self._requests.get_many(want - len(batch), timeout=left))
            except RingClosed:
                break
        return batch

    def _run_batch(self, worker: int, batch: list[Request]) -> list[Outcome]:
        return compute_batch([(kind, payload) for _, kind, payload in batch], self.powm, self._encryptors)

    def describe(self) -> str:
        return (f"ifma: {self.workers} dispatcher(s), lanes {LANES}, max batch {self.max_batch}, "
                f"linger {self.linger_s * 1e3:.2f} ms, GMP below {self.powm.gmp_below} jobs")
