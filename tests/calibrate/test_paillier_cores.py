"""Encryption on every core at once: one process per usable core, each timing real
encryptions under the key it is given; the rates are summed."""

from __future__ import annotations

import os

import pytest

from cryptoffload.calibrate.paillier_cores import all_cores_encryption_rate, usable_cores
from cryptoffload.crypto import paillier as pl


def test_usable_cores_are_the_affinity_set() -> None:
    cores = usable_cores()
    assert cores == sorted(set(cores)) and cores
    if hasattr(os, "sched_getaffinity"):
        assert set(cores) == os.sched_getaffinity(0)


@pytest.mark.parametrize("constant_time", [True, False])
def test_every_core_encrypts_and_rates_add_up(constant_time: bool) -> None:
    pk, _ = pl.generate_keypair(512, insecure_study_size=True)
    rate, cores = all_cores_encryption_rate(pk, 0.05, constant_time=constant_time, batch=8)
    assert cores == len(usable_cores())
    assert rate > 0

