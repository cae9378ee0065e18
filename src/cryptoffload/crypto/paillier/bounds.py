"""Bounds on plaintexts that travel with ciphertexts: B such that |m| <= B for every plaintext m
a ciphertext file holds, carried through homomorphic arithmetic and checked on decryption.

Why: Paillier computes modulo n, so a sum or a product whose true value passes the signed
range wraps around and decrypts to a small wrong number (-1, -2, ...) with nothing to say it
did. :func:`~.encoding.decode_signed`'s gap catches only the sums that land in it. With a
bound per file the result's bound is known before anything is computed -- a + b is bounded by
B_a + B_b, a sum of k values of bound B by k B, k x a by |k| B -- so an operation whose result
could pass the limit is refused instead of run, and decryption checks each value against its
file's bound (a value outside it is an error, never a number).

The limit is the signed encoding's, |m| <= n // 3 (``pk.max_int``), not n/2: a bound up to
(n - 1)/2 would still decode uniquely, but :func:`~.encoding.decode_signed`, python-paillier and
files that record no bound keep the gap between n/3 and 2n/3, and one limit everywhere is what
lets a result's bound be compared with what decoding accepts.

What a bound is not: authenticated. It is a statement by whoever wrote the file, protected
against accidents by the frame's checksum (:mod:`.framing`) and against nothing else -- see
docs/crypto/paillier.md, "Bounds", for what an edited bound can and cannot do.
"""

from __future__ import annotations

import math
from typing import Iterable

from cryptoffload.crypto.paillier.encoding import decode_signed
from cryptoffload.crypto.paillier.errors import PlaintextRangeError
from cryptoffload.crypto.paillier.public_key import PublicKey


#: The bound ``paillier encrypt`` records when none is given: every 64-bit integer, signed or
#: unsigned. A fixed figure and not the data's largest |value|, because the bound is written in
#: the clear: a bound taken from the data would tell everyone who sees the file its maximum.
DEFAULT_BOUND = 1 << 64


def signed_limit(pk: PublicKey) -> int:
    """The largest bound a file under ``pk`` may record: the signed encoding's |m| <= n // 3."""
    return pk.max_int


def describe(x: int) -> str:
    """An integer for a one-line message: in full while it is short, else as a power of two
    (a 600-digit number says nothing a reader can use; three decimals keep a bound and the
    limit it passed apart even when they have as many bits)."""
    return f"{x:,}" if x.bit_length() <= 80 else f"about 2^{math.log2(x):.3f}"


def limit_text(pk: PublicKey) -> str:
    return f"this {pk.bits}-bit key's signed limit n/3 ({describe(signed_limit(pk))})"


def check_bound(pk: PublicKey, bound: int, what: str) -> int:
    """``bound`` itself when it is an int in [0, n/3]; a :class:`PlaintextRangeError` naming
    ``what`` (the option or the file) otherwise."""
    if isinstance(bound, bool) or not isinstance(bound, int):
        raise PlaintextRangeError(f"{what}: a bound must be an integer, got {type(bound).__name__}")
    if bound < 0:
        raise PlaintextRangeError(f"{what}: a bound is a largest |value| and cannot be negative, got {bound:,}")
    if bound > signed_limit(pk):
        raise PlaintextRangeError(f"{what}: bound {describe(bound)} is above {limit_text(pk)}; "
                                  f"give a smaller bound or use a larger key")
    return bound


def check_values(pk: PublicKey, values: Iterable[int], bound: int, source: str, origin: str) -> None:
    """Every |value| <= ``bound`` (``origin`` says where the bound came from: "--bound" or the
    default); the first that is not is named by its position (counting from 1)."""
    for i, v in enumerate(values, 1):
        if abs(v) > pk.max_int:
            raise PlaintextRangeError(f"{source}: value {i} is a {v.bit_length():,}-bit integer, too large for "
                                      f"this key (|x| <= n/3, {describe(pk.max_int)})")
        if abs(v) > bound:
            raise PlaintextRangeError(f"{source}: value {i} is a {v.bit_length():,}-bit integer, above {origin} "
                                      f"{describe(bound)}; give --bound at least its size (the bound is written in "
                                      f"the file's header, in the clear)")


def check_result(pk: PublicKey, bound: int, operation: str, fix: str) -> int:
    """``bound`` when a result bounded by it can be decoded; otherwise the refusal, before any
    arithmetic: the operation and its bound, the limit, and ``fix``."""
    if bound > signed_limit(pk):
        raise PlaintextRangeError(f"{operation}: the result could reach {describe(bound)}, past {limit_text(pk)}, "
                                  f"where it would decrypt to a wrong number; {fix}")
    return bound


def decode_within(pk: PublicKey, m: int, bound: int) -> int | None:
    """The signed plaintext of ``m`` when |value| <= ``bound``; None when it lies outside (in
    the encoding's gap or past the bound): the file does not hold what its bound says."""
    try:
        value = decode_signed(pk, m)
    except PlaintextRangeError:
        return None
    return value if abs(value) <= bound else None
