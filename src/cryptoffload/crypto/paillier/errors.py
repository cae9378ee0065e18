"""Paillier's user errors (each a :class:`CryptoffloadError`: one line, exit 2 in the CLI)."""

from __future__ import annotations

from cryptoffload.errors import CryptoffloadError


class PaillierError(CryptoffloadError):
    """Base of Paillier usage errors."""


class KeyMismatchError(PaillierError):
    """A ciphertext or key belongs to another key pair."""


class CiphertextFormatError(PaillierError):
    """Serialised data is truncated, garbled or of an unknown version."""


class InvalidKeyError(CiphertextFormatError):
    """Key data parses but is not a usable Paillier key (composite factors, prime or tiny
    modulus, factors that do not multiply to n, a key file others can read).

    A subclass of :class:`CiphertextFormatError` because callers that refuse malformed key
    data (the ridge parties' messages) must refuse these too."""


class PlaintextRangeError(PaillierError):
    """A plaintext does not fit the key's plaintext space (or decoded value overflowed)."""
