"""The engine contract (``engines/base.py``): jobs, futures, poll, stats, close, back-pressure and
order -- the same tests for every engine of the table that can run here (``gpu-twin`` included),
so an engine that breaks the contract fails here, whatever else it does well."""

from __future__ import annotations

import secrets
import threading
from typing import Any, Callable, Iterator

import pytest

from cryptoffload.engines import ENGINES, Engine, EngineClosed, Job, JobFailed, RingFull, engine_reasons, make_engine
from cryptoffload.engines.base import EngineError, JobFuture
from cryptoffload.crypto.paillier import PlaintextRangeError
from cryptoffload.errors import BackendUnavailable, ConfigError

MOD = (1 << 2048) - 159  # an odd 2048-bit modulus: ~1 ms per modexp, slow enough to queue up

AVAILABLE = [name for name, why in engine_reasons().items() if why is None]


@pytest.fixture(params=AVAILABLE)
def make(request: pytest.FixtureRequest) -> Iterator[Callable[..., Engine]]:
    """``make(**options)``: the engine under test built by name from the table (closed after
    the test); options common to every engine (workers, max_batch, ring_capacity, in_order,
    block_when_full) pass through."""
    built: list[Engine] = []

    def build(**kw: Any) -> Engine:
        try:
            eng = make_engine(request.param, **kw)
        except BackendUnavailable as exc:  # a probe may pass where the engine still cannot start
            pytest.skip(f"{request.param}: {exc}")
        built.append(eng)
        return eng

    yield build
    for eng in built:
        eng.close(cancel_pending=True)


def test_every_engine_of_the_table_is_an_engine() -> None:
    assert {"cpu", "cpu-threads", "ifma", "gpu", "gpu-twin"} <= set(ENGINES)
    assert "cpu-threads" in AVAILABLE   # the contract runs on at least the reference engine


def test_modexp_results_and_stats(make: Callable[..., Engine]) -> None:
    engine = make(workers=2)
    jobs = [Job.modexp(secrets.randbits(2000), secrets.randbits(64), MOD) for _ in range(20)]
    futures = engine.submit_many(jobs)
    futures.append(engine.submit(Job.modexp(3, 5, 7)))
    assert [f.result(timeout=30) for f in futures[:-1]] == [pow(j.payload[0], j.payload[1], MOD) for j in jobs]
    assert futures[-1].result() == 5
    assert all(f.done() and f.completed_at >= f.submitted_at for f in futures)
    st = engine.stats()
    assert (st.submitted, st.completed, st.failed, st.in_flight) == (21, 21, 0, 0)
    assert st.batches >= 1 and st.largest_batch >= 1 and st.polls >= 1


def test_poll_delivers_and_runs_callbacks_in_polling_thread(make: Callable[..., Engine]) -> None:
    engine = make(workers=2)
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


def test_submit_after_close_raises(make: Callable[..., Engine]) -> None:
    engine = make(workers=2)
    engine.close()
    engine.close()  # idempotent
    with pytest.raises(EngineClosed, match="closed"):
        engine.submit(Job.modexp(2, 3, 5))


def test_close_finishes_or_cancels_queued_jobs(make: Callable[..., Engine]) -> None:
    eng = make(workers=1, max_batch=1)
    futures = eng.submit_many([Job.modexp(secrets.randbits(2000), secrets.randbits(1024), MOD) for _ in range(6)])
    eng.close()                                        # graceful: queued jobs still run
    assert all(f.exception() is None for f in futures)
    eng = make(workers=1, max_batch=1)
    futures = eng.submit_many([Job.modexp(secrets.randbits(2000), secrets.randbits(1024), MOD) for _ in range(30)])
    eng.close(cancel_pending=True)
    assert all(f.done() for f in futures)
    assert any(isinstance(f.exception(), EngineClosed) for f in futures)


def test_bad_job_fails_alone(make: Callable[..., Engine]) -> None:
    """A job whose key the engine refuses (a DJN base h_s that is not a unit modulo n^2: 0,
    and n itself) fails alone; the jobs around it are computed."""
    engine = make(workers=2)
    good = [Job("modexp", (3, 5, 7)), Job("modexp", (3, 6, 7))]
    futures = engine.submit_many([good[0], Job("paillier.encrypt", (15, 0, 2, None)), good[1],
                                  Job("paillier.encrypt", (15, 15, 2, None))])
    assert futures[0].result() == 5 and futures[2].result() == 1
    for f in (futures[1], futures[3]):
        with pytest.raises(JobFailed):
            f.result()
    assert engine.stats().failed == 2


def test_malformed_jobs_are_refused_when_built() -> None:
    """A job is checked once, when it is made, whichever way (the constructor or a named
    one): a bad operand never reaches an engine's ring."""
    with pytest.raises(ConfigError):
        Job("sha256", (1,))
    with pytest.raises(ConfigError):
        Job("modexp", (1, 2))
    for payload, message in (((3, -1, 7), "non-negative exponent"), ((3, 5, 0), "positive modulus"),
                             ((3, None, 7), "operand 1 must be an int"), ((3.0, 5, 7), "operand 0 must be an int"),
                             ((True, 5, 7), "operand 0 must be an int")):
        with pytest.raises(ConfigError, match=message):
            Job("modexp", payload)
    with pytest.raises(ConfigError, match="non-negative exponent"):
        Job.modexp(3, -1, 7)
    with pytest.raises(PlaintextRangeError, match=r"must be in \[0, n\) for this 4-bit key"):
        Job("paillier.encrypt_classic", (15, 15, 2))
    with pytest.raises(PlaintextRangeError, match="must be an int"):
        Job("paillier.encrypt", (15, 4, 2.5, None))
    with pytest.raises(ConfigError, match="operand 1 must be an int"):
        Job("paillier.encrypt", (15, None, 2, None))
    with pytest.raises(ConfigError, match="modulus n > 2"):
        Job("paillier.encrypt_classic", (1, 0, None))
    assert Job("paillier.encrypt", (15, 4, 14, None)).payload[3] is None  # the engine draws a


def test_jobs_carry_their_input_and_output_sizes() -> None:
    """The bytes of every payload integer in (randomness the engine draws counts 0), the bytes
    of the modulus the result is reduced by out."""
    n = (1 << 1023) + 1                                      # 128 bytes; n^2 has 2047 bits: 256 bytes
    modexp = Job.modexp(3, 1000, (1 << 521) - 1)             # 1 + 2 + 66 bytes
    assert (modexp.input_bytes, modexp.output_bytes) == (69, 66)
    enc = Job("paillier.encrypt", (n, 1 << 2000, 255, None))  # 128 + 251 + 1 + 0
    assert (enc.input_bytes, enc.output_bytes) == (380, 256)
    classic = Job("paillier.encrypt_classic", (n, 256, 7))    # 128 + 2 + 1
    assert (classic.input_bytes, classic.output_bytes) == (131, 256)


def test_back_pressure_ring_full(make: Callable[..., Engine]) -> None:
    with make(workers=1, ring_capacity=4, max_batch=1, block_when_full=False) as eng:
        jobs = [Job.modexp(secrets.randbits(2000), secrets.randbits(1024), MOD) for _ in range(40)]
        with pytest.raises(RingFull):
            for j in jobs:
                eng.submit(j)
    with make(workers=1, ring_capacity=4, max_batch=2) as eng:
        futures = eng.submit_many(jobs)                # blocks, polling, until all fit
        assert len(futures) == 40 and all(f.result() == pow(*j.payload) for f, j in zip(futures, jobs))
        assert eng.stats().ring_full_waits >= 1
        assert eng._requests.high_water <= 4


def test_in_order_delivery_across_workers(make: Callable[..., Engine]) -> None:
    order: list[int] = []
    with make(workers=2, max_batch=1, in_order=True) as eng:
        # a slow job first, then fast ones that another worker finishes earlier
        jobs = [Job.modexp(secrets.randbits(2000), secrets.randbits(2048), MOD)]
        jobs += [Job.modexp(3, k, 1009) for k in range(12)]
        futures = eng.submit_many(jobs)
        for i, f in enumerate(futures):
            f.add_done_callback(lambda _f, i=i: order.append(i))
        eng.wait_all(futures)
    assert order == list(range(len(jobs)))


def test_a_future_resolved_without_a_value_says_so() -> None:
    """``result()`` is the job's integer: a future resolved as done with no value (an engine
    bug) raises rather than handing ``None`` to code that multiplies it."""
    future = JobFuture(Job.modexp(2, 3, 5))
    future._resolve(True, None)
    with pytest.raises(EngineError, match=r"job \d+ resolved without a result"):
        future.result()
    assert future.exception() is None
