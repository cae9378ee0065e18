"""The CKKS package's one user error: a user mistake (one line, exit 2 at the CLI), the same
class wherever the package exports it (the misuses that raise it are in test_backend.py)."""

from __future__ import annotations

from cryptoffload import errors as root
from cryptoffload.crypto import ckks
from cryptoffload.crypto.ckks import errors


def test_ckks_error_is_a_user_error_exported_once() -> None:
    assert issubclass(errors.CkksError, root.CryptoffloadError)
    assert ckks.CkksError is errors.CkksError and errors.__all__ == ["CkksError"]
