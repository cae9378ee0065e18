"""Constants and complex slot values from callers: validated once, and what a constant becomes
at a scale.

Why here: bootstrapping (and any polynomial evaluation) multiplies ciphertexts by constants at
a scale the algorithm chooses -- the prime the next rescale divides by, so the scale returns
exactly -- adds constants, and encodes complex vectors (the DFT's diagonals). Every backend
refuses the same bad values with the same messages, and the RNS backends and the emulator
agree on the integer a constant becomes: ``round(value * scale)``, as SEAL's encoder rounds a
scalar (coefficient 0 of the constant polynomial; the imaginary part on ``X**(N/2)``, whose
slots are all ``i``).
"""

from __future__ import annotations

import math
import numbers
from typing import cast

import numpy as np

from cryptoffload.crypto.ckks.errors import CkksError

__all__ = ["complex_slots", "constant_scale", "rounded", "slot_constant"]


def slot_constant(op: str, value: object) -> complex:
    """A finite real or complex number (not a bool, not an array)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Number):
        raise CkksError(f"{op}: the constant must be a real or complex number, got {type(value).__name__}")
    c = complex(cast(complex, value))   # a number complex() takes (Decimal, Fraction, numpy scalars too)
    if not (math.isfinite(c.real) and math.isfinite(c.imag)):
        raise CkksError(f"{op}: the constant must be finite, got {value!r}")
    return c


def constant_scale(op: str, scale: object, default: float) -> float:
    """The scale a constant is encoded at: ``default`` for None, else a positive finite number."""
    if scale is None:
        return float(default)
    if isinstance(scale, (bool, np.bool_)) or not isinstance(scale, numbers.Real):
        raise CkksError(f"{op}: scale must be a positive number, got {scale!r}")
    sc = float(scale)
    if not (math.isfinite(sc) and sc > 0):
        raise CkksError(f"{op}: scale must be a positive finite number, got {scale!r}")
    return sc


def rounded(op: str, value: complex, scale: float, modulus_bits: int) -> tuple[int, int]:
    """``(round(Re value * scale), round(Im value * scale))``, refused when either reaches half
    the modulus (``modulus_bits``) at the ciphertext's level: it would wrap around."""
    parts = (value.real * scale, value.imag * scale)
    limit = math.ldexp(1.0, min(modulus_bits - 1, 1023))   # a modulus of 1,000+ bits: beyond any float
    if not all(math.isfinite(p) for p in parts) or max(abs(p) for p in parts) >= limit:
        raise CkksError(f"{op}: the constant {value} times the scale 2^{math.log2(scale):.1f} does not fit the "
                        f"{modulus_bits}-bit modulus at this level; use a smaller scale or constant")
    return round(parts[0]), round(parts[1])


def complex_slots(op: str, values: object, slots: int) -> np.ndarray:
    """A complex slot vector, zero-padded to ``slots``; a scalar fills every slot."""
    try:
        arr = np.asarray(values, dtype=np.complex128)
    except (TypeError, ValueError):
        raise CkksError(f"{op}: values must be complex numbers") from None
    if arr.ndim == 0:
        arr = np.full(slots, complex(arr))
    if arr.ndim != 1 or arr.size > slots:
        raise CkksError(f"{op}: values must be a vector of at most {slots} complex numbers, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise CkksError(f"{op}: values must be finite")
    out = np.zeros(slots, dtype=np.complex128)
    out[: arr.size] = arr
    return out
