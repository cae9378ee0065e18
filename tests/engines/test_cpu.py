"""CPU engine: threads and worker processes encrypt what the key decrypts (the contract every
engine keeps is in test_base.py)."""

from __future__ import annotations

import secrets
from typing import Iterator

import pytest

from cryptoffload.crypto.paillier import ENCRYPTION, PlaintextRangeError, PrivateKey, PublicKey, generate_keypair
from cryptoffload.engines import CpuEngine, EngineClosed, Job, JobFailed

MOD = (1 << 2048) - 159  # an odd 2048-bit modulus: ~1 ms per modexp, slow enough to queue up


@pytest.fixture(scope="module")
def keypair() -> tuple[PublicKey, PrivateKey]:
    return generate_keypair(1024, insecure_study_size=True)


@pytest.fixture
def engine() -> Iterator[CpuEngine]:
    with CpuEngine(workers=2, processes=False) as eng:
        yield eng


def test_threads_engine_encrypts(keypair: tuple[PublicKey, PrivateKey], engine: CpuEngine) -> None:
    pk, sk = keypair
    ms = [secrets.randbelow(pk.n) for _ in range(10)]
    futures = engine.submit_many([Job.encrypt(pk, m) for m in ms] + [Job.encrypt_classic(pk, m) for m in ms])
    assert sk.raw_decrypt_many([f.result() for f in futures]) == ms + ms
    a = secrets.randbits(pk.exp_bits)
    assert engine.submit(Job.encrypt(pk, 42, a)).result() == pk.raw_encrypt(42, a)


def test_the_engine_keeps_no_table_of_its_own(keypair: tuple[PublicKey, PrivateKey], engine: CpuEngine) -> None:
    """The table the engine encrypted with is the encryption service's (one cache per process)."""
    pk, _ = keypair
    engine.submit(Job.encrypt(pk, 1)).result()
    assert engine._encryptors.get(pk.n, pk.hs) is ENCRYPTION.encryptor(pk, "gmp")
    r = pk.random_unit()
    assert engine.submit(Job.encrypt_classic(pk, 42, r)).result() == pk.raw_encrypt_classic(42, r)


def test_process_engine(keypair: tuple[PublicKey, PrivateKey]) -> None:
    pk, sk = keypair
    ms = [secrets.randbelow(pk.n) for _ in range(6)]
    with CpuEngine(workers=2, processes=True, pin=True) as eng:
        assert len(eng.pinned) == 2 and "processes" in eng.describe()
        futures = eng.submit_many([Job.encrypt(pk, m) for m in ms] + [Job.modexp(5, 117, MOD)])
        assert sk.raw_decrypt_many([f.result(timeout=60) for f in futures[:-1]]) == ms
        assert futures[-1].result() == pow(5, 117, MOD)
        with pytest.raises(PlaintextRangeError):                 # refused when made: never queued
            Job("paillier.encrypt", (pk.n, pk.hs, pk.n + 1, None))
        bad = eng.submit(Job("paillier.encrypt", (pk.n, pk.n, 1, None)))   # h_s = n: not a unit
        with pytest.raises(JobFailed, match="not a unit"):
            bad.result(timeout=60)
        assert eng.stats().completed == 7
    with pytest.raises(EngineClosed):
        eng.submit(Job.modexp(2, 3, 5))
