"""Signed integers and fixed-point numbers as Paillier plaintexts.

Why n/3: a plaintext is a residue mod n, so a negative x is stored as n - |x|. Keeping
|x| <= n/3 leaves a gap between the largest positive and the smallest negative encodings, so
a sum that overflowed the range lands in the gap and is detected on decoding instead of
silently wrapping (the same convention as python-paillier).

The fixed-point encoding (the one the Python API, ``paillier encrypt --fixed-point F`` and
``decrypt --fixed-point F`` use): a real number x is the integer ``round(x * 2**F)`` -- nearest,
ties to even -- with ``F`` fractional bits (:data:`DEFAULT_FRAC_BITS` = 32 unless given; the
ridge protocol uses 16). Its resolution is ``2**-F`` (an encoded value is within ``2**-(F+1)``
of x) and its range is whatever bound the integers get: with a ciphertext file's default bound
2^64, |x| <= 2^(64 - F) (2^32 = 4,294,967,296 at F = 32); the key's own limit is n/3 / 2^F.
Sums and products by integer scalars keep the scale (a sum of encodings is the encoding of the
sum, to the rounding of each term); a value that does not fit its bound is an error naming it,
never a wrapped number. The scale is not written in a ciphertext file: whoever decrypts gives
the same F.
"""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass
from fractions import Fraction

from cryptoffload.checks import is_number
from cryptoffload.crypto.paillier.errors import PlaintextRangeError
from cryptoffload.crypto.paillier.public_key import PublicKey
from cryptoffload.errors import ConfigError


#: Fractional bits of the fixed-point encoding when none are given (python-paillier's floats
#: carry 53 significant bits; 32 fractional bits keep 2^-32 ~ 2.3e-10 with a 2^32 range under
#: the default bound).
DEFAULT_FRAC_BITS = 32
MAX_FRAC_BITS = 256
#: Largest decimal exponent a fixed-point text may carry: past it no key's n/3 holds the value
#: (an 8192-bit key's is below 10^2467), and 10^(10^9) would take minutes to compute.
MAX_DECIMAL_EXPONENT = 9000

_DECIMAL = re.compile(r"\s*([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?\s*")


def encode_signed(pk: PublicKey, x: int) -> int:
    """A signed integer as a plaintext: x mod n, with |x| <= n // 3 so sums can be told apart
    from negatives (the same convention as python-paillier)."""
    if isinstance(x, bool) or not isinstance(x, int):
        raise PlaintextRangeError(f"expected an int, got {type(x).__name__}")
    if abs(x) > pk.max_int:
        raise PlaintextRangeError(f"{x.bit_length()}-bit integer too large for this key (|x| <= n/3)")
    return x % pk.n


def decode_signed(pk: PublicKey, m: int) -> int:
    if m <= pk.max_int:
        return m
    if m >= pk.n - pk.max_int:
        return m - pk.n
    raise PlaintextRangeError("decrypted value lies outside the signed range: a computation overflowed")


@dataclass(frozen=True)
class FixedPoint:
    """Fixed-point numbers with ``frac_bits`` fractional bits as signed plaintexts (see the
    module docstring for the encoding, its resolution and its range).

    A product of two encoded values (ciphertext times encoded scalar) carries 2*frac_bits;
    decode it with ``scale_power=2``."""

    frac_bits: int = DEFAULT_FRAC_BITS

    def __post_init__(self) -> None:
        if isinstance(self.frac_bits, bool) or not isinstance(self.frac_bits, int) or \
                not 0 <= self.frac_bits <= MAX_FRAC_BITS:
            raise ConfigError(f"fractional bits must be 0..{MAX_FRAC_BITS}, got {self.frac_bits!r}")

    @property
    def scale(self) -> int:
        """``2**frac_bits``: the integer that encodes 1.0."""
        return 1 << self.frac_bits

    def to_int(self, x: float) -> int:
        """``round(x * 2**frac_bits)`` (exact: scaling a float by a power of two loses nothing
        until it overflows); NaN and infinities are refused."""
        if isinstance(x, bool):
            raise PlaintextRangeError(f"cannot encode {x!r} as a fixed-point number")
        if isinstance(x, numbers.Integral):
            return int(x) << self.frac_bits
        try:
            value = float(x)
        except (TypeError, ValueError):
            raise PlaintextRangeError(f"cannot encode {type(x).__name__} {x!r} as a fixed-point number") from None
        if not math.isfinite(value):
            raise PlaintextRangeError(f"cannot encode {x!r}")
        return round(Fraction(value) * self.scale)

    def from_int(self, m: int, scale_power: int = 1) -> float:
        """The real number a signed integer encodes (correctly rounded to a float)."""
        try:
            return m / (1 << (self.frac_bits * scale_power))
        except OverflowError:
            raise PlaintextRangeError(f"a {m.bit_length()}-bit fixed-point value does not fit a float") from None

    def encode(self, pk: PublicKey, x: float) -> int:
        return encode_signed(pk, self.to_int(x))

    def decode(self, pk: PublicKey, m: int, scale_power: int = 1) -> float:
        return self.from_int(decode_signed(pk, m), scale_power)

    def bound_for(self, max_abs: float | Fraction) -> int:
        """The integer bound of values with |x| <= ``max_abs``: ``ceil(max_abs * 2**frac_bits)``."""
        value = Fraction(max_abs)
        if value < 0:
            raise PlaintextRangeError(f"a bound is a largest |value| and cannot be negative, got {float(value)!r}")
        return math.ceil(value * self.scale)

    def parse(self, what: str, text: str) -> int:
        """A decimal number written as text (``-2.25``, ``1e-3``, ``17``) as its encoding,
        rounded once from its exact value (not through a float, which would round a 64-bit
        fraction first); anything but the one number grammar is refused naming ``what``."""
        return round(parse_decimal(what, text) * self.scale)

    def to_decimal(self, m: int) -> str:
        """The shortest decimal text whose encoding is ``m`` (``0.1``, not the
        ``0.100000000093...`` that ``m / 2**F`` is exactly): encrypting what is printed gives
        the same integer back."""
        sign, m = ("-" if m < 0 else ""), abs(m)
        for digits in range(0, self.frac_bits + 1):  # at frac_bits digits m / 2^F is exact
            scaled = _round_div(m * 10**digits, self.scale)
            if _round_div(scaled * self.scale, 10**digits) == m:
                return sign + _decimal_text(scaled, digits) if scaled else "0"
        raise AssertionError("unreachable: m / 2**F has an exact decimal of F digits")


def _round_div(a: int, b: int) -> int:
    """``a / b`` rounded to the nearest integer, ties to even (as ``round`` does), for
    ``a >= 0`` and ``b > 0``: integer arithmetic, fast for the many values a file holds."""
    q, r = divmod(a, b)
    return q + (1 if 2 * r > b or (2 * r == b and q % 2) else 0)


def _decimal_text(scaled: int, digits: int) -> str:
    """``scaled / 10**digits`` written out (``_decimal_text(1234, 2) == "12.34"``)."""
    if digits == 0:
        return str(scaled)
    whole, frac = divmod(scaled, 10**digits)
    return f"{whole}.{frac:0{digits}d}".rstrip("0").rstrip(".")


def parse_decimal(what: str, text: str) -> Fraction:
    """The exact value of a number written under the one number grammar
    (:data:`cryptoffload.checks.FLOAT_RE`: digits, a fraction, an exponent; no ``nan``,
    ``inf``, ``1_000`` or hex), as a fraction. An exponent past
    :data:`MAX_DECIMAL_EXPONENT` is refused (no key holds such a number)."""
    match = _DECIMAL.fullmatch(text) if isinstance(text, str) and is_number(text) else None
    if match is None:
        raise PlaintextRangeError(f"{what}: must be a decimal number (digits, an optional sign, fraction and exponent), "
                                  f"got {text!r}" if isinstance(text, str) else f"{what}: got {type(text).__name__}")
    sign, whole, frac, exp = match.groups()
    frac = frac or ""
    exponent = int(exp or "0") - len(frac)
    digits = int((whole or "") + frac or "0")
    if digits and exponent > MAX_DECIMAL_EXPONENT:
        raise PlaintextRangeError(f"{what}: {text.strip()!r} is too large for any key (|x| <= n/3)")
    if exponent < -MAX_DECIMAL_EXPONENT - len(frac) - len(whole or ""):
        return Fraction(0)  # far below any resolution: rounds to 0
    value = Fraction(digits) * (Fraction(10) ** exponent)
    return -value if sign == "-" else value
