"""GPU engine: one-line refusal without a GPU; on the CPU twin (and on a GPU where present)
the whole engine path -- jobs through the rings, streams, bulk encrypt + aggregate -- gives
the CPU engine's results."""

from __future__ import annotations

import secrets
from typing import Iterator

import numpy as np
import pytest

from cryptoffload.crypto._native import core as native
from cryptoffload.crypto.paillier import PrivateKey, PublicKey, generate_keypair
from cryptoffload.crypto.paillier_gpu import to_limbs
from cryptoffload.engines import CpuEngine, Job, JobFailed, make_engine
from cryptoffload.engines.gpu import GpuEngine, gpu_reason, twin_reason, worker_engine
from cryptoffload.engines.modes import run_mode
from cryptoffload.errors import BackendUnavailable, ConfigError

DEVICES = [d for d, why in (("cpu-twin", twin_reason()), ("cuda", gpu_reason())) if why is None]


@pytest.fixture(scope="module")
def keypair() -> tuple[PublicKey, PrivateKey]:
    return generate_keypair(1024, insecure_study_size=True)


@pytest.fixture(scope="module", params=DEVICES)
def engine(request: pytest.FixtureRequest) -> Iterator[GpuEngine]:
    with GpuEngine(2, device=request.param, max_batch=64, window=4) as eng:
        yield eng


def test_refuses_without_a_gpu_in_one_line() -> None:
    if gpu_reason() is None:
        pytest.skip("a CUDA GPU is present")
    with pytest.raises(BackendUnavailable, match=r"GpuEngine \(cuda\) unavailable") as info:
        GpuEngine()
    assert "\n" not in str(info.value)
    with pytest.raises(BackendUnavailable, match="engine gpu cannot run here"):
        make_engine("gpu")
    with make_engine("auto", workers=1) as eng:   # auto never picks a GPU that is not there
        assert eng.name in ("ifma", "cpu-threads")
    with pytest.raises(ConfigError, match="unknown GPU device"):
        GpuEngine(device="tpu")


def test_jobs_equal_the_cpu_engine(engine: GpuEngine, keypair) -> None:
    pk, sk = keypair
    msgs = [0, 1, pk.n - 1] + [secrets.randbelow(pk.n) for _ in range(9)]
    exps = [secrets.randbits(pk.exp_bits) for _ in msgs]
    rs = [pk.random_unit() for _ in msgs[:4]]
    mod = (1 << 1024) - 105  # odd
    jobs = ([Job.encrypt(pk, m, a) for m, a in zip(msgs, exps)]
            + [Job.encrypt_classic(pk, m, r) for m, r in zip(msgs, rs)]
            + [Job.modexp(secrets.randbits(1100), secrets.randbits(70), mod) for _ in range(5)]
            + [Job.modexp(7, 12, 1 << 40)]   # even modulus: the engine's fallback
            + [Job.encrypt(pk, m) for m in msgs[:3]])   # randomness drawn by the engine
    with CpuEngine(1, processes=False) as cpu:
        want = [f.result(timeout=60) for f in cpu.submit_many(jobs[:-3])]
    got_f = engine.submit_many(jobs)
    got = [f.result(timeout=120) for f in got_f]
    assert got[:-3] == want
    assert sk.raw_decrypt_many(got[-3:]) == msgs[:3]
    st = engine.stats()
    assert st.failed == 0 and st.batches >= 1


def test_a_bad_job_fails_alone(engine: GpuEngine, keypair) -> None:
    pk, sk = keypair
    good = Job.encrypt(pk, 5)
    bad = Job("paillier.encrypt", (pk.n, pk.hs, pk.n + 3, None))
    fg, fb = engine.submit_many([good, bad])
    assert sk.raw_decrypt_many([fg.result(timeout=60)]) == [5]
    with pytest.raises(JobFailed, match="plaintext"):
        fb.result(timeout=60)


def test_client_modes_run_on_it(engine: GpuEngine, keypair) -> None:
    pk, sk = keypair
    msgs = [secrets.randbelow(pk.n) for _ in range(24)]
    res = run_mode("coro1", engine, pk, msgs, inflight=16)
    assert sk.raw_decrypt_many(res.ciphertexts) == msgs


@pytest.mark.parametrize("batch_rows", [None, 3])
def test_encrypt_aggregate_decrypts_to_column_sums(engine: GpuEngine, keypair, batch_rows) -> None:
    pk, sk = keypair
    rows, cols = 10, 3
    plain = [secrets.randbelow(1 << 80) for _ in range(rows * cols)]
    agg = engine.encrypt_aggregate(pk, plain, rows, cols, batch_rows=batch_rows)
    assert sk.raw_decrypt_many(agg) == [sum(plain[c::cols]) % pk.n for c in range(cols)]
    limbs = to_limbs(plain, engine.key(pk).half)
    agg2 = engine.encrypt_aggregate(pk, limbs, rows, cols, batch_rows=batch_rows)
    assert sk.raw_decrypt_many(agg2) == sk.raw_decrypt_many(agg) and agg2 != agg   # fresh randomness
    bad = limbs.copy()
    bad[:, 4] = to_limbs([pk.n], engine.key(pk).half)[:, 0]
    with pytest.raises(ConfigError, match="value 4 is not below"):
        engine.encrypt_aggregate(pk, bad, rows, cols)
    with pytest.raises(ConfigError, match="matrix"):
        engine.encrypt_aggregate(pk, plain[:-1], rows, cols)
    with pytest.raises(ConfigError, match="batch_rows"):
        engine.encrypt_aggregate(pk, plain, rows, cols, batch_rows=0)


@pytest.mark.skipif(not native.native_available(), reason="native core not built")
def test_aggregate_equals_the_native_column_products(engine: GpuEngine, keypair) -> None:
    pk, _ = keypair
    rows, cols = 9, 2
    cts = [secrets.randbelow(pk.nsquare) for _ in range(rows * cols)]
    want = native.column_products(native.ints_to_words(cts, pk.nsquare), rows, cols, pk.nsquare)
    assert engine.aggregate(pk.nsquare, cts, rows, cols, batch_rows=4) == want
    limbs = to_limbs(cts, engine.modulus(pk.nsquare).width)
    assert engine.aggregate(pk.nsquare, limbs, rows, cols) == want
    with pytest.raises(ConfigError, match="shape"):
        engine.aggregate(pk.nsquare, limbs[:, :-1], rows, cols)
    with pytest.raises(ConfigError, match="modulus"):
        engine.aggregate(pk.nsquare, [pk.nsquare] + cts[1:], rows, cols)


def test_worker_engine_is_kept_per_process() -> None:
    if twin_reason() is not None:
        pytest.skip("CPU twin not built")
    eng = worker_engine("cpu-twin")
    assert eng is worker_engine("cpu-twin") and eng.name == "gpu-twin"
    assert "twin" in eng.describe()
    assert np.array_equal(to_limbs([3], 16)[:, 0], [3] + [0] * 15)
