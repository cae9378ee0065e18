"""The backend table: names, lazy import of optional backends, contexts rebuilt by name."""

from __future__ import annotations

import pytest

from cryptoffload.crypto import ckks
from cryptoffload.crypto.ckks import (
    CkksBackend,
    CkksError,
    EmulatorBackend,
    backend_class,
    backend_from_context,
    backend_names,
    make_backend,
)
from cryptoffload.crypto.ckks import registry
from cryptoffload.crypto.ckks.framing import KIND_PUBLIC, pack_frame
from cryptoffload.errors import BackendUnavailable, ConfigError

from .ckks_helpers import PARAMS


def test_make_backend_names():
    with pytest.raises(ConfigError, match="unknown CKKS backend"):
        make_backend("nope", PARAMS)
    assert isinstance(make_backend("emulator", PARAMS), EmulatorBackend)
    try:
        b = make_backend("openfhe", PARAMS)
    except BackendUnavailable as exc:  # openfhe not importable here, or the adapter module absent
        assert str(exc)
    except ConfigError as exc:
        # where openfhe imports (Python 3.10): it refuses these test parameters at 128-bit
        # security (its key-switching modulus adds a prime), with a clear message
        assert "secur" in str(exc).lower() or "bits" in str(exc).lower(), str(exc)
    else:
        assert isinstance(b, CkksBackend)


def test_one_table_names_every_backend(monkeypatch):
    assert backend_names()[0] == "seal" and {"seal", "emulator", "openfhe"} <= set(backend_names())
    for name in backend_names():
        if name != "openfhe":  # imports only where its library does (the class module does import)
            cls = backend_class(name)
            assert issubclass(cls, CkksBackend) and cls.name == name
    assert ckks.EmulatorBackend is backend_class("emulator")  # the package attribute reads the table
    with pytest.raises(AttributeError):
        ckks.NoSuchBackend  # noqa: B018
    monkeypatch.setitem(registry.BACKENDS, "broken", registry.BackendEntry("cryptoffload.no_such_module", "X", "test"))
    with pytest.raises(BackendUnavailable, match="broken CKKS backend is unavailable"):
        make_backend("broken", PARAMS)


def test_context_of_an_unknown_backend_is_refused(emu):
    ctx = emu.public_context()
    assert type(backend_from_context(ctx)) is type(emu)
    forged = pack_frame(KIND_PUBLIC, "abacus", PARAMS.digest(), emu.key_id, b"")
    with pytest.raises(CkksError, match="unknown backend 'abacus'"):
        backend_from_context(forged)
    with pytest.raises(CkksError, match="not a context"):
        backend_from_context(emu.serialize_ciphertext(emu.encrypt([1.0])))


def test_help_and_descriptions_come_from_the_table():
    assert registry.backend_help().startswith("seal (SEAL via tenseal), emulator (")
    assert all(name in registry.backend_help() for name in backend_names())
    assert registry.describe_backend("seal").startswith("SEAL via tenseal 0.")  # the installed version
    assert registry.describe_backend("emulator") == "exact arithmetic, NOT encryption"
