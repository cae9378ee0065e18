"""CPU engine (threads and processes) and the engine contract: futures, poll, stats, close."""

from __future__ import annotations

import secrets
import threading
from typing import Iterator

import pytest

from cryptoffload.crypto.paillier import PrivateKey, PublicKey, generate_keypair
from cryptoffload.engines import (
    CpuEngine, EngineClosed, Job, JobFailed, RingFull, make_engine)
from cryptoffload.errors import ConfigError

MOD = (1 << 2048) - 159  # an odd 2048-bit modulus: ~1 ms per modexp, slow enough to queue up


@pytest.fixture(scope="module")
def keypair() -> tuple[PublicKey, PrivateKey]:
    return generate_keypair(1024, insecure_study_size=True)


@pytest.fixture
def engine() -> Iterator[CpuEngine]:
    with CpuEngine(workers=2, processes=False) as eng:
        yield eng


def test_modexp_results_and_stats(engine: CpuEngine) -> None:
    jobs = [Job.modexp(secrets.randbits(2000), secrets.randbits(64), MOD) for _ in range(20)]
    futures = engine.submit_many(jobs)
    futures.append(engine.submit(Job.modexp(3, 5, 7)))
    assert [f.result(timeout=30) for f in futures[:-1]] == [pow(j.payload[0], j.payload[1], MOD) for j in jobs]
    assert futures[-1].result() == 5
    assert all(f.done() and f.completed_at >= f.submitted_at for f in futures)
    st = engine.stats()
    assert (st.submitted, st.completed, st.failed, st.in_flight) == (21, 21, 0, 0)
    assert st.batches >= 1 and st.largest_batch >= 1 and st.polls >= 1


def test_poll_delivers_and_runs_callbacks_in_polling_thread(engine: CpuEngine) -> None:
    seen: list[tuple[int, int]] = []
    fut = engine.submit(Job.modexp(2, 10, 1000))
    fut.add_done_callback(lambda f: seen.append((f.result(), threading.get_ident())))
    delivered = 0
    while not fut.done():
        delivered += engine.poll(timeout=0.1)
    assert delivered == 1 and seen == [(24, threading.get_ident())]
    late: list[int] = []
    fut.add_done_callback(lambda f: late.append(f.result()))   # already done: runs at once
    assert late == [24]
    assert engine.poll(timeout=0) == 0


def test_submit_after_close_raises(engine: CpuEngine) -> None:
    engine.close()
    engine.close()  # idempotent
    with pytest.raises(EngineClosed, match="closed"):
        engine.submit(Job.modexp(2, 3, 5))


def test_close_finishes_or_cancels_queued_jobs() -> None:
    eng = CpuEngine(workers=1, processes=False, max_batch=1)
    futures = eng.submit_many([Job.modexp(secrets.randbits(2000), secrets.randbits(1024), MOD) for _ in range(6)])
    eng.close()                                        # graceful: queued jobs still run
    assert all(f.exception() is None for f in futures)
    eng = CpuEngine(workers=1, processes=False, max_batch=1)
    futures = eng.submit_many([Job.modexp(secrets.randbits(2000), secrets.randbits(1024), MOD) for _ in range(30)])
    eng.close(cancel_pending=True)
    assert all(f.done() for f in futures)
    assert any(isinstance(f.exception(), EngineClosed) for f in futures)


def test_bad_job_fails_alone(engine: CpuEngine) -> None:
    good = [Job("modexp", (3, 5, 7)), Job("modexp", (3, 6, 7))]
    futures = engine.submit_many([good[0], Job("modexp", (3, -1, 7)), good[1], Job("modexp", (3, 5, 0))])
    assert futures[0].result() == 5 and futures[2].result() == 1
    for f in (futures[1], futures[3]):
        with pytest.raises(JobFailed):
            f.result()
    assert engine.stats().failed == 2
    with pytest.raises(ConfigError):
        Job("sha256", (1,))
    with pytest.raises(ConfigError):
        Job("modexp", (1, 2))


def test_back_pressure_ring_full() -> None:
    with CpuEngine(workers=1, processes=False, ring_capacity=4, max_batch=1, block_when_full=False) as eng:
        jobs = [Job.modexp(secrets.randbits(2000), secrets.randbits(1024), MOD) for _ in range(40)]
        with pytest.raises(RingFull):
            for j in jobs:
                eng.submit(j)
    with CpuEngine(workers=1, processes=False, ring_capacity=4, max_batch=2) as eng:
        futures = eng.submit_many(jobs)                # blocks, polling, until all fit
        assert len(futures) == 40 and all(f.result() == pow(*j.payload) for f, j in zip(futures, jobs))
        assert eng.stats().ring_full_waits >= 1
        assert eng._requests.high_water <= 4


def test_in_order_delivery_across_workers() -> None:
    order: list[int] = []
    with CpuEngine(workers=2, processes=False, max_batch=1, in_order=True) as eng:
        # a slow job first, then fast ones that another worker finishes earlier
        jobs = [Job.modexp(secrets.randbits(2000), secrets.randbits(2048), MOD)]
        jobs += [Job.modexp(3, k, 1009) for k in range(12)]
        futures = eng.submit_many(jobs)
        for i, f in enumerate(futures):
            f.add_done_callback(lambda _f, i=i: order.append(i))
        eng.wait_all(futures)
    assert order == list(range(len(jobs)))


def test_threads_engine_encrypts(keypair: tuple[PublicKey, PrivateKey], engine: CpuEngine) -> None:
    pk, sk = keypair
    ms = [secrets.randbelow(pk.n) for _ in range(10)]
    futures = engine.submit_many([Job.encrypt(pk, m) for m in ms] + [Job.encrypt_classic(pk, m) for m in ms])
    assert sk.raw_decrypt_many([f.result() for f in futures]) == ms + ms
    a = secrets.randbits(pk.exp_bits)
    assert engine.submit(Job.encrypt(pk, 42, a)).result() == pk.raw_encrypt(42, a)
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
        bad = eng.submit(Job("paillier.encrypt", (pk.n, pk.hs, pk.n + 1, None)))
        with pytest.raises(JobFailed, match="plaintext"):
            bad.result(timeout=60)
        assert eng.stats().completed == 7
    with pytest.raises(EngineClosed):
        eng.submit(Job.modexp(2, 3, 5))


def test_make_engine_names() -> None:
    with make_engine("cpu-threads", workers=1) as eng:
        assert eng.name == "cpu-threads" and eng.submit(Job.modexp(2, 5, 1000)).result() == 32
    with make_engine("auto") as eng:
        assert eng.submit(Job.modexp(2, 5, 1000)).result() == 32
    with pytest.raises(ConfigError):
        make_engine("tpu")
