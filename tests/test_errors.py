"""Which errors are the user's: only what a user can fix derives from CryptoffloadError; the
internal signals of the engines and a failing native library call do not."""

from __future__ import annotations

import pytest

from cryptoffload.crypto.ciphers import WeakKeyError
from cryptoffload.crypto.native import GcryptError
from cryptoffload.engines import EngineClosed, EngineError, JobFailed, RingClosed, RingEmpty, RingFull
from cryptoffload.errors import (
    BackendUnavailable, ConfigError, CryptoffloadError, InputError, OutputError, ProfileError, TraceError)


@pytest.mark.parametrize("cls", [RingFull, RingEmpty, RingClosed, EngineError, EngineClosed, JobFailed, GcryptError])
def test_internal_signals_are_not_user_errors(cls: type) -> None:
    assert not issubclass(cls, CryptoffloadError)


@pytest.mark.parametrize("cls", [ConfigError, ProfileError, TraceError, BackendUnavailable, OutputError, InputError,
                                 WeakKeyError])
def test_user_errors_derive_from_the_root(cls: type) -> None:
    assert issubclass(cls, CryptoffloadError)
