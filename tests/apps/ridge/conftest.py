"""Fixtures of the ridge party tests (helpers in ridge_helpers.py)."""

from __future__ import annotations

from typing import Iterator

import pytest
from ridge_helpers import Servers

from cryptoffload.crypto.paillier import generate_keypair


@pytest.fixture(scope="module")
def upload_keys() -> tuple:
    """An upload key pair (1024 bits: a study size, what the paper's workload uses)."""
    return generate_keypair(1024, insecure_study_size=True)


@pytest.fixture(scope="module")
def solve_keys() -> tuple:
    return generate_keypair(2048)


@pytest.fixture(scope="module")
def keys(upload_keys: tuple, solve_keys: tuple) -> tuple:
    return upload_keys, solve_keys


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    """A CSP and a platform shared by one module's message tests."""
    s = Servers(tmp_path_factory.mktemp("servers"))
    try:
        yield s
    finally:
        s.stop()
