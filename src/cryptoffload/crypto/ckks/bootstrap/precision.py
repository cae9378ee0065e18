"""Bits of precision of a result against the plaintext it should equal.

``-log2 |error|`` per slot, reported as the mean error's and the worst slot's: ``mean`` is
``-log2(mean |error|)`` (what Lattigo's and OpenFHE's examples print as "precision"), ``worst``
is ``-log2(max |error|)``. Both over every slot of the vector (the real and imaginary parts of
complex slots as one error ``|z - z'|``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Precision", "precision"]


@dataclass(frozen=True)
class Precision:
    mean_bits: float
    worst_bits: float
    max_error: float
    mean_error: float

    def to_dict(self) -> dict[str, float]:
        return {"mean_bits": self.mean_bits, "worst_bits": self.worst_bits, "max_error": self.max_error,
                "mean_error": self.mean_error}


def _bits(err: float) -> float:
    return math.inf if err == 0.0 else -math.log2(err)


def precision(got: np.ndarray, want: np.ndarray) -> Precision:
    """The precision of ``got`` against ``want`` (same length; complex or real)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        raise ValueError(f"precision: shapes differ ({got.shape} vs {want.shape})")
    err = np.abs(got - want)
    worst, mean = float(np.max(err)), float(np.mean(err))
    return Precision(_bits(mean), _bits(worst), worst, mean)
