"""Key sets made once per module: the CPU twin and SEAL on the same small parameters."""

from __future__ import annotations

import pytest

from cryptoffload.crypto.ckks import make_backend, power_of_two_steps

from cryptoffload.crypto.ckks.gpu.launch import host_library, host_reason
from .gpu_helpers import PARAMS, ROTATIONS


@pytest.fixture(scope="module")
def twin():
    """Keys for ROTATIONS and every power of two (so any step composes), and conjugation."""
    b = make_backend("gpu-twin", PARAMS, insecure_study=True)
    b.keygen(ROTATIONS + power_of_two_steps(PARAMS.slots), conjugation=True)
    return b


@pytest.fixture(scope="module")
def seal():
    b = make_backend("seal", PARAMS, insecure_study=True)
    b.keygen(ROTATIONS)
    return b


@pytest.fixture(scope="session")
def host_lib():
    """kernels.cu built for the CPU (the cuda-host kernel set; skips without a C++ compiler)."""
    if host_reason() is not None:
        pytest.skip(host_reason())
    return host_library()
