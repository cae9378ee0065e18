"""Parameters and helpers shared by the RNS-CKKS tests (fixtures are in conftest.py).

Ring degrees are small (insecure: ``insecure_study=True``) so CI stays fast; one test runs the
HE-CNN at its real size (tests/apps/he_cnn/test_infer.py).

* :data:`PARAMS` -- N = 2048, (40, 30, 30, 30, 40), scale 2^30: 30-bit levels are single primes,
  SEAL's own, so scales after rescaling equal SEAL's bit for bit; the 40-bit base and special
  moduli are two 20-bit primes each. Three levels.
* :data:`COMPOSITE` -- N = 1024, (60, 40, 40, 60), scale 2^40: every level a group of primes
  (composite scaling).

Tolerance: measured at PARAMS (inputs in [-1, 1]) the largest slot errors are ~2e-6 (fresh,
products) and ~6e-6 (rotations; SEAL's are ~2e-5 to 4e-5 on the same inputs); TOL = 2^-13
(1.2e-4) leaves a margin of 20x.
"""

from __future__ import annotations

import hashlib

import numpy as np
from hypothesis import HealthCheck, settings

from cryptoffload.crypto.ckks import CkksParams
from cryptoffload.crypto.ckks.gpu.sampling import Sampler

from ..ckks_helpers import close as _close
from ..ckks_helpers import padded as _padded
from ..ckks_helpers import vectors  # noqa: F401 -- shared strategy, re-exported

PARAMS = CkksParams(2048, (40, 30, 30, 30, 40), 30)
COMPOSITE = CkksParams(1024, (60, 40, 40, 60), 40)
ROTATIONS = [1, -1, 2, 3, -4, 17]
TOL = 2.0 ** -13
FEW = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

def padded(x: np.ndarray, slots: int = PARAMS.slots) -> np.ndarray:
    return _padded(x, slots)


def close(got: np.ndarray, want: np.ndarray, tol: float = TOL) -> None:
    _close(got, want, tol)


class DeterministicSampler(Sampler):
    """The scheme's sampler drawing from a reproducible byte stream instead of ``os.urandom``,
    for tests that compare two implementations on the same randomness. The package has no
    parameter that takes a byte source: a test puts this in place itself
    (:func:`seed_randomness`)."""

    def __init__(self, seed: bytes = b"test") -> None:
        self._seed = seed
        self._counter = 0

    def random_bytes(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            out += hashlib.blake2b(self._seed + self._counter.to_bytes(8, "little"), digest_size=64).digest()
            self._counter += 1
        return bytes(out[:n])


def seed_randomness(owner, seed: bytes):
    """``owner`` (an ``RnsScheme``, or a backend: its scheme) drawing every random value from
    ``seed`` from now on; returns ``owner``."""
    scheme = getattr(owner, "scheme", owner)
    scheme.sampler = DeterministicSampler(seed)
    return owner
