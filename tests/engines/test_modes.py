"""The paper's client modes (and batch) produce ciphertexts that decrypt to the messages."""

from __future__ import annotations

import secrets
from collections import Counter
from typing import Any, Iterator

import numpy as np
import pytest

from cryptoffload.crypto.paillier import PlaintextRangeError, PrivateKey, PublicKey, djn, generate_keypair
from cryptoffload.engines import CLIENT_MODES, CpuEngine, IfmaEngine, Job, encrypt_array, ifma_reason, run_mode
from cryptoffload.errors import ConfigError

COUNT = 64


@pytest.fixture(scope="module")
def keypair() -> tuple[PublicKey, PrivateKey]:
    return generate_keypair(1024, insecure_study_size=True)


@pytest.fixture(scope="module")
def messages(keypair: tuple[PublicKey, PrivateKey]) -> list[int]:
    pk, _ = keypair
    return [secrets.randbelow(pk.n) for _ in range(COUNT - 2)] + [0, pk.n - 1]


@pytest.fixture(scope="module")
def engine() -> Iterator[CpuEngine]:
    with CpuEngine(workers=1, processes=False) as eng:
        yield eng


@pytest.mark.parametrize("mode", CLIENT_MODES)
def test_mode_decrypts(mode: str, engine: CpuEngine, keypair: tuple[PublicKey, PrivateKey], messages: list[int]) -> None:
    pk, sk = keypair
    res = run_mode(mode, engine, pk, messages, threads=4, inflight=16)
    assert sk.raw_decrypt_many(res.ciphertexts) == messages
    assert len(set(res.ciphertexts)) == COUNT                      # fresh randomness each time
    assert res.mode == mode and res.count == COUNT and res.engine == "cpu-threads"
    assert res.seconds > 0 and res.throughput > 0 and 0 < res.mean_latency and res.p99_latency > 0
    assert res.stats is not None and res.stats.in_flight == 0
    assert mode in res.summary()


@pytest.mark.parametrize("mode", ["threads", "coro1", "coro2"])
def test_modes_survive_tiny_ordered_rings(mode: str, keypair: tuple[PublicKey, PrivateKey], messages: list[int]) -> None:
    """Back-pressure everywhere (2-slot rings, in-order responses) must not deadlock."""
    pk, sk = keypair
    with CpuEngine(workers=2, processes=False, ring_capacity=2, in_order=True) as eng:
        res = run_mode(mode, eng, pk, messages[:24], threads=5, inflight=8)
        assert sk.raw_decrypt_many(res.ciphertexts) == messages[:24]
        assert eng.stats().ring_full_waits > 0


@pytest.mark.skipif(ifma_reason() is not None, reason=f"IfmaEngine: {ifma_reason()}")
@pytest.mark.parametrize("mode", ["coro2", "batch"])
def test_modes_on_ifma(mode: str, keypair: tuple[PublicKey, PrivateKey], messages: list[int]) -> None:
    pk, sk = keypair
    with IfmaEngine() as eng:
        res = run_mode(mode, eng, pk, messages, inflight=32)
    assert sk.raw_decrypt_many(res.ciphertexts) == messages


def test_bad_arguments(engine: CpuEngine, keypair: tuple[PublicKey, PrivateKey]) -> None:
    pk, _ = keypair
    with pytest.raises(ConfigError, match="mode"):
        run_mode("qhcs3", engine, pk, [1])
    with pytest.raises(ConfigError):
        run_mode("coro1", engine, pk, [1], inflight=0)
    with pytest.raises(PlaintextRangeError):
        run_mode("sync", engine, pk, [pk.n])


def test_encrypt_array_list_and_numpy(engine: CpuEngine, keypair: tuple[PublicKey, PrivateKey]) -> None:
    pk, sk = keypair
    big = [secrets.randbelow(pk.n) for _ in range(40)]
    assert sk.raw_decrypt_many(encrypt_array(engine, pk, big)) == big
    obj = np.array(big, dtype=object).reshape(5, 8)
    assert sk.raw_decrypt_many(encrypt_array(engine, pk, obj, chunk=7, threshold=10)) == big  # progress bar path
    small = np.arange(12, dtype=np.int64)
    assert sk.raw_decrypt_many(encrypt_array(engine, pk, small, progress=False)) == list(range(12))
    assert encrypt_array(engine, pk, []) == []
    with pytest.raises(PlaintextRangeError):
        encrypt_array(engine, pk, [-1])


def _count_checks(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every plaintext check (the key's, a job's, the service's all call djn.check_plaintext)."""
    counts: Counter[str] = Counter()
    real = djn.check_plaintext

    def counted(*args: Any) -> int:
        counts["check_plaintext"] += 1
        return real(*args)
    monkeypatch.setattr(djn, "check_plaintext", counted)
    return counts


@pytest.mark.parametrize("mode", CLIENT_MODES)
def test_each_plaintext_is_checked_once(mode: str, engine: CpuEngine, keypair: tuple[PublicKey, PrivateKey],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """issue 36: a plaintext was checked when its job was made and again where the engine
    computed it (batch mode and encrypt_array: a third time before). Now once, where it enters:
    the job (batch mode, encrypt_array, Job.encrypt), or run_mode for the paper's modes (their
    jobs are modexps, which cannot know that m is a plaintext)."""
    pk, sk = keypair
    ms = [0, 5, pk.n - 1]
    counts = _count_checks(monkeypatch)
    assert sk.raw_decrypt_many(run_mode(mode, engine, pk, ms, threads=2, inflight=2).ciphertexts) == ms
    assert counts["check_plaintext"] == len(ms)
    with pytest.raises(PlaintextRangeError):      # the remaining check refuses at the boundary
        run_mode(mode, engine, pk, [1, pk.n])
    assert engine.stats().in_flight == 0


def test_a_job_and_encrypt_array_check_once(engine: CpuEngine, keypair: tuple[PublicKey, PrivateKey],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    pk, sk = keypair
    counts = _count_checks(monkeypatch)
    jobs = [Job.encrypt(pk, 3), Job.encrypt_classic(pk, 4), Job("paillier.encrypt", (pk.n, pk.hs, 5, None))]
    futures = engine.submit_many(jobs)
    assert sk.raw_decrypt_many([f.result() for f in futures]) == [3, 4, 5]
    assert counts["check_plaintext"] == 3
    counts.clear()
    cts = encrypt_array(engine, pk, np.arange(6, dtype=np.int64), progress=False)
    assert sk.raw_decrypt_many(cts) == list(range(6))
    assert counts["check_plaintext"] == 6
    submitted = engine.stats().submitted
    for bad in ([-1], [pk.n], [2.0]):
        with pytest.raises(PlaintextRangeError):
            encrypt_array(engine, pk, [1] + bad)
    assert engine.stats().submitted == submitted   # nothing half-submitted
