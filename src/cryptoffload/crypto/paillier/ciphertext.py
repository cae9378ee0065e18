"""A Paillier ciphertext and its homomorphic arithmetic, and ciphertexts as framed bytes (with
the bound on their plaintexts that the frame records: :mod:`.framing`, :mod:`.bounds`).

A ciphertext is a value: its key and one integer below n^2. Arithmetic needs nothing but the
key's numbers; fresh randomness (a rerandomization) is encryption, the service's work
(:meth:`.service.EncryptionService.rerandomize`).

Where keys are checked: each operator refuses operands under different keys, because an
operator is where two ciphertexts meet. A boundary that has checked a whole list already --
every operand of a file read under one key, or of a Python API call -- sums with
:func:`summed`, which does not check each pair again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from cryptoffload.crypto.paillier.gmp import gmpy2

from cryptoffload.crypto.paillier import framing
from cryptoffload.crypto.paillier.errors import CiphertextFormatError, KeyMismatchError, PaillierError
from cryptoffload.crypto.paillier.public_key import PublicKey


class Ciphertext:
    """An encrypted integer mod n. Arithmetic follows the plaintexts: ``a + b``, ``a + 5``,
    ``a * 3``, ``-a``, ``a - b``; mixing keys is refused."""

    __slots__ = ("public_key", "value")

    def __init__(self, public_key: PublicKey, value: int) -> None:
        self.public_key = public_key
        self.value = value

    def __repr__(self) -> str:
        return f"Ciphertext(key={self.public_key.fingerprint.hex()[:8]})"

    def _same_key(self, other: Ciphertext) -> None:
        if other.public_key != self.public_key:
            raise KeyMismatchError("cannot combine ciphertexts under different keys")

    def __add__(self, other: Ciphertext | int) -> Ciphertext:
        pk = self.public_key
        if isinstance(other, Ciphertext):
            self._same_key(other)
            return Ciphertext(pk, self.value * other.value % pk.nsquare)
        if isinstance(other, int) and not isinstance(other, bool):
            k = other % pk.n
            return Ciphertext(pk, self.value * (1 + k * pk.n) % pk.nsquare)
        return NotImplemented

    __radd__ = __add__

    def __neg__(self) -> Ciphertext:
        pk = self.public_key
        return Ciphertext(pk, int(gmpy2.invert(self.value, pk.nsquare)))

    def __sub__(self, other: Ciphertext | int) -> Ciphertext:
        if isinstance(other, Ciphertext):
            return self + (-other)
        if isinstance(other, int) and not isinstance(other, bool):
            return self + (-other)
        return NotImplemented

    def __rsub__(self, other: int) -> Ciphertext:
        return (-self) + other

    def __mul__(self, k: int) -> Ciphertext:
        if isinstance(k, Ciphertext):
            raise PaillierError("Paillier cannot multiply two ciphertexts (only by a plaintext scalar)")
        if isinstance(k, bool) or not isinstance(k, int):
            return NotImplemented
        pk = self.public_key
        k %= pk.n
        # a negative scalar k = n - |k| is cheaper as (c^-1)^|k|
        if k > pk.n // 2:
            return Ciphertext(pk, int(gmpy2.powmod(gmpy2.invert(self.value, pk.nsquare), pk.n - k, pk.nsquare)))
        return Ciphertext(pk, int(gmpy2.powmod(self.value, k, pk.nsquare)))

    __rmul__ = __mul__

    def to_bytes(self) -> bytes:
        """This ciphertext as a one-ciphertext frame (see :mod:`.framing`)."""
        return framing.pack(self.public_key, [self.value])


def summed(pk: PublicKey, cts: Iterable[Ciphertext]) -> Ciphertext:
    """One ciphertext of the sum of the plaintexts of ``cts`` (the product modulo n^2; the empty
    sum is 1, an encryption of 0 with no randomness). The ciphertexts must all be under ``pk``:
    the caller's boundary checked that once per operand, so no pair is checked again here."""
    n2 = pk.nsquare
    total = 1
    for c in cts:
        total = total * c.value % n2
    return Ciphertext(pk, total)


def ciphertext_from_bytes(pk: PublicKey, data: bytes) -> Ciphertext:
    """Parse :meth:`Ciphertext.to_bytes` output (a frame of exactly one ciphertext), refusing
    another key's ciphertexts and corrupted data."""
    values = framing.unpack(pk, data)
    if len(values) != 1:
        raise CiphertextFormatError(f"expected one ciphertext, the data holds {len(values)}")
    return Ciphertext(pk, values[0])


@dataclass(frozen=True)
class CiphertextFrame:
    """The ciphertexts of one frame with what its header says of them: |m| <= ``bound`` for
    every plaintext (for a version 2 frame, which records no bound, the key's limit n/3, and
    ``bound_recorded`` is false)."""

    ciphertexts: list[Ciphertext]
    bound: int
    version: int = framing.CIPHERTEXT_VERSION

    @property
    def bound_recorded(self) -> bool:
        return self.version >= framing.CIPHERTEXT_VERSION


def ciphertexts_to_bytes(cts: Iterable[Ciphertext], public_key: PublicKey | None = None, *,
                         bound: int | None = None) -> bytes:
    """One frame holding the ciphertexts, all under one key (``public_key``, needed only to
    frame an empty list), recording ``bound`` (|m| <= bound for each plaintext; None: nothing
    is known, the key's limit n/3)."""
    cts = list(cts)
    pk = public_key if public_key is not None else (cts[0].public_key if cts else None)
    if pk is None:
        raise PaillierError("an empty list of ciphertexts needs its public key to be framed")
    for c in cts:
        if c.public_key != pk:
            raise KeyMismatchError("cannot frame ciphertexts under different keys together")
    return framing.pack(pk, [c.value for c in cts], bound)


def ciphertexts_from_bytes(pk: PublicKey, data: bytes) -> list[Ciphertext]:
    """Parse :func:`ciphertexts_to_bytes` output; anything wrong refuses the whole frame."""
    return frame_from_bytes(pk, data).ciphertexts


def frame_from_bytes(pk: PublicKey, data: bytes) -> CiphertextFrame:
    """:func:`ciphertexts_from_bytes` with the bound and version the frame's header records."""
    header, values = framing.unpack_frame(pk, data)
    return CiphertextFrame([Ciphertext(pk, v) for v in values], header.bound, header.version)
