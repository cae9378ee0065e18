"""The one user error of the CKKS package (every module below raises it)."""

from __future__ import annotations

from cryptoffload.errors import CryptoffloadError

__all__ = ["CkksError"]


class CkksError(CryptoffloadError):
    """A CKKS operation was misused (level/scale mismatch, missing key, foreign or corrupted data)."""
