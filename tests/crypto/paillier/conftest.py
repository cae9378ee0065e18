"""Keys shared by the Paillier tests: generated once per session (key generation dominates
the cost of these tests)."""

from __future__ import annotations

import pytest

from cryptoffload.crypto import paillier as pl
from cryptoffload.crypto._native import core as native


@pytest.fixture(scope="session")
def keys() -> tuple[pl.PublicKey, pl.PrivateKey]:
    return pl.generate_keypair(1024, insecure_study_size=True)


@pytest.fixture(scope="session")
def other_keys() -> tuple[pl.PublicKey, pl.PrivateKey]:
    return pl.generate_keypair(1024, insecure_study_size=True)


def available_backends() -> list[str]:
    out = ["gmpy2"]
    if native.native_available():
        out.append("gmp")
    if native.adx_available():
        out.append("adx")
    if native.ifma_available():
        out.append("ifma")
    return out
