"""Signed integers and fixed-point numbers as Paillier plaintexts.

Why n/3: a plaintext is a residue mod n, so a negative x is stored as n - |x|. Keeping
|x| <= n/3 leaves a gap between the largest positive and the smallest negative encodings, so
a sum that overflowed the range lands in the gap and is detected on decoding instead of
silently wrapping (the same convention as python-paillier).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cryptoffload.crypto.paillier.errors import PlaintextRangeError
from cryptoffload.errors import ConfigError

if TYPE_CHECKING:
    from cryptoffload.crypto.paillier.keys import PublicKey


def encode_signed(pk: "PublicKey", x: int) -> int:
    """A signed integer as a plaintext: x mod n, with |x| <= n // 3 so sums can be told apart
    from negatives (the same convention as python-paillier)."""
    if isinstance(x, bool) or not isinstance(x, int):
        raise PlaintextRangeError(f"expected an int, got {type(x).__name__}")
    if abs(x) > pk.max_int:
        raise PlaintextRangeError(f"{x.bit_length()}-bit integer too large for this key (|x| <= n/3)")
    return x % pk.n


def decode_signed(pk: "PublicKey", m: int) -> int:
    if m <= pk.max_int:
        return m
    if m >= pk.n - pk.max_int:
        return m - pk.n
    raise PlaintextRangeError("decrypted value lies outside the signed range: a computation overflowed")


@dataclass(frozen=True)
class FixedPoint:
    """Fixed-point numbers with ``frac_bits`` fractional bits as signed plaintexts.

    A product of two encoded values (ciphertext times encoded scalar) carries 2*frac_bits;
    decode it with ``scale_power=2``."""

    frac_bits: int = 32

    def __post_init__(self) -> None:
        if isinstance(self.frac_bits, bool) or not isinstance(self.frac_bits, int) or not 0 <= self.frac_bits <= 256:
            raise ConfigError(f"fractional bits must be 0..256, got {self.frac_bits!r}")

    def to_int(self, x: float) -> int:
        if not math.isfinite(x):
            raise PlaintextRangeError(f"cannot encode {x!r}")
        return round(x * (1 << self.frac_bits))

    def encode(self, pk: "PublicKey", x: float) -> int:
        return encode_signed(pk, self.to_int(x))

    def decode(self, pk: "PublicKey", m: int, scale_power: int = 1) -> float:
        return decode_signed(pk, m) / float(1 << (self.frac_bits * scale_power))
