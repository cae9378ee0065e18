"""Fixtures of the ridge party tests (helpers in ridge_helpers.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from ridge_helpers import Parties

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


@pytest.fixture
def parties(tmp_path: Path, keys: tuple) -> Iterator[Parties]:
    """A fresh CSP and platform (threads of this process, their own databases) per test."""
    p = Parties(tmp_path, keys)
    try:
        yield p
    finally:
        p.stop()
