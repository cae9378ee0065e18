"""Key sets made once per test module: SEAL and the emulator on the shared test parameters."""

from __future__ import annotations

import pytest

from cryptoffload.crypto.ckks import CkksBackend, make_backend

from .ckks_helpers import PARAMS, ROTATIONS


@pytest.fixture(scope="module")
def seal():
    b = make_backend("seal", PARAMS)
    b.keygen(ROTATIONS)
    return b


@pytest.fixture(scope="module")
def emu():
    b = make_backend("emulator", PARAMS)
    b.keygen(ROTATIONS)
    return b


@pytest.fixture(params=["seal", "emulator"])
def backend(request, seal, emu) -> CkksBackend:
    return seal if request.param == "seal" else emu
