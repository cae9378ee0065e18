"""GPU engine: one-line refusal without a GPU; on the CPU twin (and on a GPU where present)
the whole engine path -- jobs through the rings, streams, bulk encrypt + aggregate -- gives
the reference results (Python's ``pow``; the CPU engine's where the native core is built).
Keys come from tests/paillier_reference.py, so this runs where gmpy2 is not installed."""

from __future__ import annotations

import math
import secrets
from typing import Any, Iterator

import numpy as np
import pytest

import paillier_reference as ref
from cryptoffload.crypto.paillier_gpu import to_limbs
from cryptoffload.engines import CpuEngine, Job, JobFailed, make_engine
from cryptoffload.engines import gpu as engine_gpu
from cryptoffload.engines.cpu import cpu_reason
from cryptoffload.engines.gpu import GpuEngine, gpu_reason, twin_reason, worker_device_index, worker_engine
from cryptoffload.engines.modes import run_mode
from cryptoffload.errors import BackendUnavailable, ConfigError

DEVICES = [d for d, why in (("cpu-twin", twin_reason()), ("cuda", gpu_reason())) if why is None]
needs_cpu = pytest.mark.skipif(cpu_reason() is not None, reason=f"{cpu_reason()}")


@pytest.fixture(scope="module")
def keypair() -> tuple[Any, ref.RefPrivateKey]:
    return ref.keypair(1024)


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
    with pytest.raises(ConfigError, match="unknown GPU device"):
        GpuEngine(device="tpu")


@needs_cpu
def test_auto_never_picks_a_gpu_that_is_not_there() -> None:
    if gpu_reason() is None:
        pytest.skip("a CUDA GPU is present")
    with make_engine("auto", workers=1) as eng:
        assert eng.name in ("ifma", "cpu-threads")


def test_jobs_equal_the_reference(engine: GpuEngine, keypair) -> None:
    pk, sk = keypair
    msgs = [0, 1, pk.n - 1] + [secrets.randbelow(pk.n) for _ in range(9)]
    exps = [secrets.randbits(pk.exp_bits) for _ in msgs]
    rs = [secrets.randbelow(pk.n - 2) + 2 for _ in msgs[:4]]
    mod = (1 << 1024) - 105  # odd
    mexp = [(secrets.randbits(1100), secrets.randbits(70)) for _ in range(5)]
    jobs = ([Job.encrypt(pk, m, a) for m, a in zip(msgs, exps)]
            + [Job.encrypt_classic(pk, m, r) for m, r in zip(msgs, rs)]
            + [Job.modexp(b, e, mod) for b, e in mexp]
            + [Job.modexp(7, 12, 1 << 40)]   # even modulus: the engine's fallback
            + [Job.encrypt(pk, m) for m in msgs[:3]])   # randomness drawn by the engine
    want = ([ref.encrypt(pk, m, a) for m, a in zip(msgs, exps)]
            + [pow(pk.n + 1, m, pk.nsquare) * pow(r, pk.n, pk.nsquare) % pk.nsquare for m, r in zip(msgs, rs)]
            + [pow(b, e, mod) for b, e in mexp] + [pow(7, 12, 1 << 40)])
    got = [f.result(timeout=120) for f in engine.submit_many(jobs)]
    assert got[:-3] == want
    assert sk.decrypt_many(got[-3:]) == msgs[:3]
    st = engine.stats()
    assert st.failed == 0 and st.batches >= 1


@needs_cpu
def test_jobs_equal_the_cpu_engine(engine: GpuEngine, keypair) -> None:
    pk, _ = keypair
    msgs = [secrets.randbelow(pk.n) for _ in range(6)]
    jobs = [Job.encrypt(pk, m, secrets.randbits(pk.exp_bits)) for m in msgs] + [Job.modexp(3, 5, 1009)]
    with CpuEngine(1, processes=False) as cpu:
        want = [f.result(timeout=60) for f in cpu.submit_many(jobs)]
    assert [f.result(timeout=120) for f in engine.submit_many(jobs)] == want


def test_classic_encryption_runs_over_n_bits_whatever_the_plaintexts(engine: GpuEngine, keypair) -> None:
    """g^m with a secret m: every exponent is processed over n's length (a batch of small
    plaintexts must not run shorter); modexp jobs over the modulus's."""
    pk, sk = keypair
    bits: list[Any] = []
    real = engine.powm

    def spy(bases, exps, modulus, exp_bits=None, stream=None):
        bits.append(exp_bits)
        return real(bases, exps, modulus, exp_bits, stream)

    engine.powm = spy   # type: ignore[method-assign]
    try:
        got = [f.result(timeout=60) for f in engine.submit_many([Job.encrypt_classic(pk, 1, 3),
                                                                 Job.encrypt_classic(pk, 2, 5)])]
    finally:
        del engine.powm
    assert sk.decrypt_many(got) == [1, 2]
    assert bits and set(bits) == {pk.n.bit_length()}


def test_a_bad_job_fails_alone(engine: GpuEngine, keypair) -> None:
    pk, sk = keypair
    good = Job.encrypt(pk, 5)
    bad = Job("paillier.encrypt", (pk.n, pk.n, 3, None))   # h_s = n: not a unit, refused by the key
    fg, fb = engine.submit_many([good, bad])
    assert sk.decrypt_many([fg.result(timeout=60)]) == [5]
    with pytest.raises(JobFailed, match="not a unit"):
        fb.result(timeout=60)


def test_client_modes_run_on_it(engine: GpuEngine, keypair) -> None:
    pk, sk = keypair
    msgs = [secrets.randbelow(pk.n) for _ in range(24)]
    res = run_mode("coro1", engine, pk, msgs, inflight=16)
    assert sk.decrypt_many(res.ciphertexts) == msgs


@pytest.mark.parametrize("batch_rows", [None, 3])
def test_encrypt_aggregate_decrypts_to_column_sums(engine: GpuEngine, keypair, batch_rows) -> None:
    pk, sk = keypair
    rows, cols = 10, 3
    plain = [secrets.randbelow(1 << 80) for _ in range(rows * cols)]
    agg = engine.encrypt_aggregate(pk, plain, rows, cols, batch_rows=batch_rows)
    assert sk.decrypt_many(agg) == [sum(plain[c::cols]) % pk.n for c in range(cols)]
    limbs = to_limbs(plain, engine.key(pk).half)
    agg2 = engine.encrypt_aggregate(pk, limbs, rows, cols, batch_rows=batch_rows)
    assert sk.decrypt_many(agg2) == sk.decrypt_many(agg) and agg2 != agg   # fresh randomness
    bad = limbs.copy()
    bad[:, 4] = to_limbs([pk.n], engine.key(pk).half)[:, 0]
    with pytest.raises(ConfigError, match="value 4 is not below"):
        engine.encrypt_aggregate(pk, bad, rows, cols)
    with pytest.raises(ConfigError, match="matrix"):
        engine.encrypt_aggregate(pk, plain[:-1], rows, cols)
    with pytest.raises(ConfigError, match="batch_rows"):
        engine.encrypt_aggregate(pk, plain, rows, cols, batch_rows=0)


class _Spy:
    """Counts the engine runtime's launches (``fail_on``: that launch raises) and records which
    streams it hands out and which of them were synchronised (instance attributes, restored by
    ``monkeypatch``; works on either runtime)."""

    def __init__(self, rt: Any, monkeypatch: pytest.MonkeyPatch, fail_on: int | None = None) -> None:
        self.launches, self.streams, self.synced = 0, [], []
        real_launch, real_stream = rt.launch, rt.stream

        def launch(*args: Any) -> None:
            self.launches += 1
            if self.launches == fail_on:
                raise RuntimeError("launch failed")
            real_launch(*args)

        def stream() -> Any:
            s = real_stream()
            real_sync = s.synchronize

            def synchronize() -> None:
                self.synced.append(s)
                real_sync()

            s.synchronize = synchronize
            self.streams.append(s)
            return s

        monkeypatch.setattr(rt, "launch", launch)
        monkeypatch.setattr(rt, "stream", stream)


def test_bulk_plaintexts_are_checked_whole_before_any_launch(engine: GpuEngine, keypair,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    pk, _ = keypair
    engine.key(pk)   # the table is built before the spy goes in
    spy = _Spy(engine.runtime, monkeypatch)
    plain = [1] * 29 + [pk.n]   # the bad value is in the last batch of rows
    with pytest.raises(ConfigError, match="plaintexts"):
        engine.encrypt_aggregate(pk, plain, 10, 3, batch_rows=1)
    assert spy.launches == 0


def test_bulk_pipeline_synchronises_both_streams_when_a_batch_fails(engine: GpuEngine, keypair,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Pinned staging buffers go back to the pool only after their copies: on an error too."""
    pk, _ = keypair
    engine.key(pk)
    spy = _Spy(engine.runtime, monkeypatch, fail_on=3)   # batch 1's encryption, after batch 0's two launches
    with pytest.raises(RuntimeError, match="launch failed"):
        engine.encrypt_aggregate(pk, [1] * 30, 10, 3, batch_rows=2)
    assert len(spy.streams) == 2 and all(s in spy.synced for s in spy.streams)


@needs_cpu
def test_aggregate_equals_the_column_products(engine: GpuEngine, keypair) -> None:
    pk, _ = keypair
    rows, cols = 9, 2
    cts = [secrets.randbelow(pk.nsquare) for _ in range(rows * cols)]
    want = [math.prod(cts[r * cols + c] for r in range(rows)) % pk.nsquare for c in range(cols)]  # Python's integers
    assert engine.aggregate(pk.nsquare, cts, rows, cols, batch_rows=4) == want
    limbs = to_limbs(cts, engine.modulus(pk.nsquare).width)
    assert engine.aggregate(pk.nsquare, limbs, rows, cols) == want
    with pytest.raises(ConfigError, match="shape"):
        engine.aggregate(pk.nsquare, limbs[:, :-1], rows, cols)
    with pytest.raises(ConfigError, match="modulus"):
        engine.aggregate(pk.nsquare, [pk.nsquare] + cts[1:], rows, cols)


def test_worker_engine_is_kept_per_process_and_table_option() -> None:
    if twin_reason() is not None:
        pytest.skip(twin_reason())
    eng = worker_engine("cpu-twin")
    assert eng is worker_engine("cpu-twin") and eng.name == "gpu-twin" and eng.constant_time
    vt = worker_engine("cpu-twin", constant_time=False)
    assert vt is not eng and not vt.constant_time
    assert "twin" in eng.describe()
    assert np.array_equal(to_limbs([3], 16)[:, 0], [3] + [0] * 15)


@pytest.mark.parametrize("visible, name, want", [
    ("0", 3, 0),            # one GPU per worker: CUDA_VISIBLE_DEVICES=i
    ("2", 0, 0),
    ("0,1", 3, 1),          # several listed: worker i takes i mod their count
    ("0,1,2,3", 6, 2),
    ("0,1", "tcp-name", 0),  # a worker without an integer name
    ("", 5, 0),             # an empty list: no GPU to choose among
])
def test_worker_device_index(monkeypatch: pytest.MonkeyPatch, visible: str, name: object, want: int) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    monkeypatch.setattr(engine_gpu, "_worker_name", lambda: name)
    assert worker_device_index() == want


def test_worker_device_index_without_visible_devices_counts_the_gpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setattr(engine_gpu, "_worker_name", lambda: 5)
    monkeypatch.setattr(engine_gpu.cuda, "device_count", lambda: 4)
    assert worker_device_index() == 1
    monkeypatch.setattr(engine_gpu.cuda, "device_count", lambda: 0)
    assert worker_device_index() == 0


def test_device_contexts_are_bounded_least_recently_used_first(monkeypatch: pytest.MonkeyPatch, keypair) -> None:
    """Clients bring keys: an engine keeps at most MAX_DEVICE_KEYS device contexts (each a
    table in GPU memory) and MAX_MODULI moduli, not one per key it has ever seen."""
    monkeypatch.setattr(engine_gpu, "MAX_DEVICE_KEYS", 2)
    monkeypatch.setattr(engine_gpu, "MAX_MODULI", 2)
    from cryptoffload.crypto.paillier.public_key import PublicKey

    pk = keypair[0]
    with GpuEngine(1, device=DEVICES[0], max_batch=8, window=4) as eng:
        a, b = eng.key(PublicKey(pk.n, pk.hs)), eng.key(PublicKey(pk.n))
        assert eng.key(PublicKey(pk.n, pk.hs)) is a     # the same numbers: the same context
        eng.key(PublicKey(pk.n))                        # a third key: b, used least recently, goes
        assert len(eng._keys) == 2 and b not in eng._keys.values() and a in eng._keys.values()
        mods = [eng.modulus(m) for m in (pk.n, pk.n + 2, pk.n + 4)]
        assert len(eng._moduli) == 2 and eng.modulus(pk.n + 4) is mods[2]
