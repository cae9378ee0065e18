"""Per-record and per-provider uploads on Dask workers against the in-process parties."""

from __future__ import annotations

import numpy as np
import pytest

from cryptoffload.apps.ridge import protocol as P
from cryptoffload.apps.ridge.bulk import chunk_records, run_bulk, run_per_provider, split_chunk
from cryptoffload.apps.ridge.accuracy import Z_MARGIN, rounding_sigma
from cryptoffload.apps.ridge.session import RidgeSession
from cryptoffload.errors import ConfigError
from cryptoffload.workloads.ridge_data import algorithm1_y_bound

D = 4


@pytest.fixture(scope="module")
def runner():
    from cryptoffload.engines.dask import DaskRunner

    with DaskRunner(workers=2) as r:
        yield r


@pytest.fixture(scope="module")
def setup():
    params = P.RidgeParams(d=D, max_records=10_000, y_bound=algorithm1_y_bound(D), lam=1.0)
    csp = RidgeSession.generate(params, upload_bits=1024, insecure_study_size=True).csp
    return params, csp


def test_records_do_not_depend_on_the_chunking() -> None:
    from cryptoffload.apps.ridge.bulk import BLOCK

    whole = chunk_records(5, 0, 2 * BLOCK + 77, D)
    parts = [chunk_records(5, s, min(1000, 2 * BLOCK + 77 - s), D) for s in range(0, 2 * BLOCK + 77, 1000)]
    assert np.array_equal(whole[0], np.concatenate([p[0] for p in parts]))
    assert np.array_equal(whole[1], np.concatenate([p[1] for p in parts]))
    assert not np.array_equal(chunk_records(6, 0, 10, D)[0], whole[0][:10])
    assert np.abs(whole[0]).max() <= 1.0 and np.abs(whole[1]).max() <= algorithm1_y_bound(D)


def test_bulk_aggregate_decrypts_to_the_encoded_sums(runner, setup) -> None:
    params, csp = setup
    run = run_bulk(runner, csp.upload_pk, params, 500, seed=2, chunk=120, progress=False)
    res = run.result
    assert res.records == 500 and run.chunks == 5
    assert sum(res.records_by_worker.values()) == 500 and run.workers == len(res.records_by_worker)
    assert run.workers_available == 2
    # each chunk's own times survive the fold, in record order, and add up to the folded ones
    assert [(t.start, t.ciphertexts) for t in res.per_chunk] == [(s, min(120, 500 - s) * res.ciphertexts // 500)
                                                                 for s in range(0, 500, 120)]
    for f in ("encode_s", "encrypt_s", "aggregate_s"):
        assert sum(getattr(t, f) for t in res.per_chunk) == pytest.approx(getattr(res, f), rel=1e-12), f
    assert [c["start"] for c in run.summary()["per_chunk"]] == [0, 120, 240, 360, 480]
    prov = P.Provider(params, csp.upload_pk)
    assert res.ciphertexts == 500 * prov.plaintexts
    assert res.wire_bytes == res.ciphertexts * csp.upload_pk.ciphertext_bytes
    values = prov.encode(*chunk_records(2, 0, 500, D))
    # packing is linear: the product of the records' ciphertexts decrypts to the packing of the
    # summed encodings (mod n)
    n = csp.upload_pk.n
    want = [p % n for p in prov.pack(values.sum(axis=0)[None, :], 500)]
    assert csp._upload_sk.raw_decrypt_many(res.aggregate) == want


def test_bulk_model_matches_reference_and_per_provider(runner, setup) -> None:
    params, csp = setup
    run = run_bulk(runner, csp.upload_pk, params, 400, seed=3, chunk=100, progress=False)
    platform = P.TradingPlatform(params, csp.upload_pk, csp.solve_pk)
    agg = platform.aggregator()
    agg.add_products(run.result.aggregate, run.result.records)
    model = P.finalize(params, csp, platform, agg.result())
    ref = np.linalg.solve(run.result.xtx + params.lam * np.eye(D), run.result.xty)
    # within Z_MARGIN standard deviations of the expected fixed-point error (apps/ridge/accuracy.py)
    sigma = rounding_sigma(run.result.xtx, run.result.xty, 400, params.scale, params.lam)
    assert (np.abs(model.coef - ref) <= Z_MARGIN * sigma).all()

    pp, cts = run_per_provider(runner, csp.upload_pk, params, 400, seed=3, chunk=150, progress=False)
    assert pp.result.ciphertexts == len(cts) == P.Provider(params, csp.upload_pk).plaintexts
    pplat = P.TradingPlatform(params, csp.upload_pk, csp.solve_pk)
    pagg = pplat.aggregator()
    pagg.add(P.Upload(csp.upload_pk.fingerprint, cts, 1, 400))
    assert P.finalize(params, csp, pplat, pagg.result()).fractions == model.fractions


def test_bulk_on_gpu_workers_equals_the_cpu_run(setup) -> None:
    """The GPU path through Dask (workers declaring a GPU resource), on the GPU kernels' CPU
    twin: the aggregate decrypts to the packed sums of the encoded records, as the CPU path's does."""
    from cryptoffload.engines.dask import DaskRunner
    from cryptoffload.engines.gpu import twin_reason

    if twin_reason() is not None:
        pytest.skip(twin_reason())
    params, csp = setup
    with DaskRunner(workers=1, resources={"GPU": 1}) as gpu_runner:
        assert list(gpu_runner.worker_resources().values()) == [{"GPU": 1.0}]
        run = run_bulk(gpu_runner, csp.upload_pk, params, 60, seed=4, chunk=25, progress=False, engine="gpu-twin")
    prov = P.Provider(params, csp.upload_pk)
    want = [p % csp.upload_pk.n for p in prov.pack(prov.encode(*chunk_records(4, 0, 60, D)).sum(axis=0)[None, :], 60)]
    assert csp._upload_sk.raw_decrypt_many(run.result.aggregate) == want
    assert run.chunks == 3 and run.result.records == 60 and run.result.aggregate_s == 0.0


def test_bulk_gpu_needs_workers_with_a_gpu(runner, setup) -> None:
    params, csp = setup
    with pytest.raises(ConfigError, match="no Dask worker declares resource GPU"):
        run_bulk(runner, csp.upload_pk, params, 10, progress=False, engine="gpu")
    with pytest.raises(ConfigError, match="unknown bulk engine"):
        run_bulk(runner, csp.upload_pk, params, 10, progress=False, engine="tpu")


def test_bulk_refuses_more_records_than_declared(runner, setup) -> None:
    params, csp = setup
    with pytest.raises(ConfigError, match="max_records"):
        run_bulk(runner, csp.upload_pk, params, 20_000, progress=False)
    agg = P.TradingPlatform(params, csp.upload_pk, csp.solve_pk).aggregator()
    with pytest.raises(ConfigError, match="refused before adding"):
        agg.add_products([1] * agg.plaintexts, 10_001)


def test_records_are_split_over_the_worker_threads() -> None:
    """Quick mode's 10,000 records in chunks of 20,000 would be one task on one of two workers."""
    assert split_chunk(10_000, 20_000, 2) == 5_000
    assert split_chunk(10_001, 20_000, 2) == 5_001
    assert split_chunk(1_000_000, 20_000, 2) == 20_000
    assert split_chunk(3, 20_000, 8) == 1


def test_a_small_run_reports_the_workers_that_ran_it(runner, setup) -> None:
    """Two workers, 40 records, chunk 1,000: split in two chunks of 20; the run reports the
    workers that ran chunks and their shares, which add up to the records."""
    params, csp = setup
    run = run_bulk(runner, csp.upload_pk, params, 40, seed=5, chunk=1_000, progress=False)
    assert run.chunks == 2 and sum(run.shares) == 40 and run.workers_available == 2
    assert run.workers == len(run.shares) and run.shares in ([20, 20], [40])


# --------------------------------------------------------------------------------------------
# exactly-once chunks (issue 32, item 6) and what reaches the workers


class LocalRunner:
    """A stand-in for DaskRunner that runs the chunks here and delivers their results to the
    fold as a faulty cluster might: ``deliver(results)`` returns what reaches the collector."""

    cores = workers = 2

    def __init__(self, deliver):
        self.deliver = deliver

    def map_chunks(self, fn, chunks, *, reduce, initial, **_):
        acc = initial
        for result in self.deliver([fn(c) for c in chunks]):
            acc = reduce(acc, result)
        return acc


def test_a_chunk_delivered_twice_is_refused_not_counted(setup) -> None:
    """Once 250 of 200 records, a different model, no error: now the collector refuses."""
    from cryptoffload.apps.ridge.chunks import ChunkAccountingError, ChunkLedger, plan_chunks
    from cryptoffload.apps.ridge.bulk import chunk_tasks, empty_result, encrypt_aggregate_chunk, merge

    params, csp = setup
    pk = csp.upload_pk
    spans = plan_chunks(200, 50)
    results = [encrypt_aggregate_chunk(t) for t in chunk_tasks(pk, params, spans, seed=9)]
    P = len(results[0].aggregate)
    fold = ChunkLedger(spans, 200).reducer(merge(pk.nsquare, P))
    acc = fold(empty_result(P, D), results[0])
    with pytest.raises(ChunkAccountingError, match="chunk 0 .*delivered twice"):
        fold(acc, results[0])                                     # the reducer, called with it again
    with pytest.raises(ChunkAccountingError, match="delivered twice"):
        run_bulk(LocalRunner(lambda rs: rs + [rs[1]]), pk, params, 200, seed=9, chunk=50, progress=False)
    with pytest.raises(ChunkAccountingError, match="1 of 4 chunks never arrived"):
        run_bulk(LocalRunner(lambda rs: rs[:2] + rs[3:]), pk, params, 200, seed=9, chunk=50, progress=False)
    # a result from another run (same chunk id and range) is not this run's
    other = encrypt_aggregate_chunk(chunk_tasks(pk, params, plan_chunks(200, 50), seed=9)[1])
    with pytest.raises(ChunkAccountingError, match="not planned in this run"):
        run_bulk(LocalRunner(lambda rs: [rs[0], other] + rs[2:]), pk, params, 200, seed=9, chunk=50,
                 progress=False)
    # and the per-provider sums are held to the same accounts
    with pytest.raises(ChunkAccountingError, match="delivered twice"):
        run_per_provider(LocalRunner(lambda rs: rs + rs[:1]), pk, params, 200, seed=9, chunk=50, progress=False)
    ok = run_bulk(LocalRunner(lambda rs: list(reversed(rs))), pk, params, 200, seed=9, chunk=50, progress=False)
    assert ok.result.records == 200 and ok.summary()["records"] == 200 and len(ok.result.chunks) == 4


def test_a_short_count_is_refused(setup) -> None:
    """A chunk that processed fewer records than its range, or a total short of the request."""
    import dataclasses

    from cryptoffload.apps.ridge.chunks import ChunkAccountingError, ChunkLedger, plan_chunks

    params, csp = setup
    short = LocalRunner(lambda rs: [dataclasses.replace(rs[0], records=rs[0].records - 1)] + rs[1:])
    with pytest.raises(ChunkAccountingError, match="holds 49 records, not the 50 planned"):
        run_bulk(short, csp.upload_pk, params, 200, seed=9, chunk=50, progress=False)
    spans = plan_chunks(200, 50)
    ledger = ChunkLedger(spans, 200)
    total = dataclasses.make_dataclass("Total", [("chunks", tuple), ("records", int)])
    for s in spans:
        ledger.admit(total((s,), s.size))
    with pytest.raises(ChunkAccountingError, match="folded 150 records in 4 chunks; 200 were requested"):
        ledger.finish(total(tuple(spans), 150))
    with pytest.raises(ChunkAccountingError, match="names no chunk"):
        ledger.admit(total((), 0))


def test_a_worker_killed_mid_run_changes_nothing(setup) -> None:
    """A real worker process of a local cluster is SIGKILLed while chunks are in flight; Dask
    re-runs its chunks elsewhere, each is folded once, and the aggregate decrypts to the same
    sums and gives the same model (exact fractions) as an undisturbed run with the same seed."""
    import os
    import signal
    import threading
    import time

    from cryptoffload.engines.dask import DaskRunner

    params, csp = setup
    pk, sk = csp.upload_pk, csp._upload_sk
    records, chunk = 6000, 60
    with DaskRunner(workers=2) as runner:
        calm = run_bulk(runner, pk, params, records, seed=7, chunk=chunk, progress=False)
        pids = runner.client.run(os.getpid)
        out: dict = {}
        thread = threading.Thread(target=lambda: out.update(run=run_bulk(runner, pk, params, records, seed=7,
                                                                         chunk=chunk, progress=False)))
        thread.start()
        victim, deadline = None, time.monotonic() + 60
        while victim is None and time.monotonic() < deadline and thread.is_alive():
            busy = sorted(addr for addr, keys in runner.client.processing().items() if keys and addr in pids)
            victim = busy[0] if busy else None
            if victim is None:
                time.sleep(0.005)
        assert victim is not None, "no chunk was ever seen in flight"
        os.kill(pids[victim], signal.SIGKILL)
        killed_mid_run = thread.is_alive()
        thread.join(timeout=300)
        assert not thread.is_alive() and "run" in out
    assert killed_mid_run
    hurt = out["run"]
    assert hurt.result.records == calm.result.records == records
    assert [(s.chunk_id, s.start, s.size) for s in sorted(hurt.result.chunks, key=lambda s: s.start)] == \
        [(s.chunk_id, s.start, s.size) for s in sorted(calm.result.chunks, key=lambda s: s.start)]
    assert sk.raw_decrypt_many(hurt.result.aggregate) == sk.raw_decrypt_many(calm.result.aggregate)
    assert np.allclose(hurt.result.xtx, calm.result.xtx, rtol=1e-12) and np.allclose(hurt.result.xty, calm.result.xty)
    models = []
    for run in (calm, hurt):
        platform = P.TradingPlatform(params, pk, csp.solve_pk)
        agg = platform.aggregator()
        agg.add_products(run.result.aggregate, run.result.records)
        models.append(P.finalize(params, csp, platform, agg.result()).fractions)
    assert models[0] == models[1]


def test_no_private_key_or_factor_is_shipped_to_the_workers(runner, setup, monkeypatch) -> None:
    """Everything a real run hands to Dask (the function and every chunk, pickled as Dask
    pickles them) holds the upload public key and nothing of the CSP's private keys."""
    from distributed.protocol import pickle as dask_pickle

    params, csp = setup
    shipped: list[bytes] = []
    real = runner.map_chunks

    def spy(fn, chunks, **kw):
        chunks = list(chunks)
        shipped.append(dask_pickle.dumps(fn) + b"".join(dask_pickle.dumps(c) for c in chunks))
        return real(fn, chunks, **kw)

    monkeypatch.setattr(runner, "map_chunks", spy)
    run_bulk(runner, csp.upload_pk, params, 100, seed=2, chunk=50, progress=False)
    run_per_provider(runner, csp.upload_pk, params, 100, seed=2, chunk=50, progress=False)
    assert len(shipped) == 2
    forbidden = [b"PrivateKey", b"_upload_sk", b"_solve_sk"]
    for sk in (csp._upload_sk, csp._solve_sk):
        for factor in (sk.p, sk.q):
            size = (factor.bit_length() + 7) // 8
            forbidden += [str(factor).encode(), format(factor, "x").encode(), format(factor, "X").encode(),
                          factor.to_bytes(size, "big"), factor.to_bytes(size, "little")]
    for blob in shipped:
        assert format(csp.upload_pk.n, "x").encode() in blob        # the check looks at the right bytes
        for secret in forbidden:
            assert secret not in blob


def test_every_provider_of_a_run_is_made_through_the_session(setup, monkeypatch) -> None:
    """issue 36: the workers built their Provider by hand (a per-worker cache of their own);
    now every provider of a bulk run -- each chunk's on its worker, the driver's -- is a
    RidgeSession's, and the model is the same."""
    from cryptoffload.apps.ridge import bulk

    params, csp = setup
    counts = {"session": 0, "provider": 0}
    real_session, real_init = bulk.RidgeSession.provider, P.Provider.__init__

    def session_provider(self, **kw):
        counts["session"] += 1
        return real_session(self, **kw)

    def provider_init(self, *args, **kw):
        counts["provider"] += 1
        real_init(self, *args, **kw)
    monkeypatch.setattr(bulk.RidgeSession, "provider", session_provider)
    monkeypatch.setattr(P.Provider, "__init__", provider_init)
    here = LocalRunner(lambda rs: rs)
    run = run_bulk(here, csp.upload_pk, params, 200, seed=9, chunk=50, progress=False)
    assert run.result.records == 200 and counts == {"session": 5, "provider": 5}  # 4 chunks and the driver
    counts.update(session=0, provider=0)
    _, cts = run_per_provider(here, csp.upload_pk, params, 200, seed=9, chunk=50, progress=False)
    assert counts == {"session": 5, "provider": 5}
    want = [p % csp.upload_pk.n for p in P.Provider(params, csp.upload_pk).pack(
        P.Provider(params, csp.upload_pk).encode(*chunk_records(9, 0, 200, D)).sum(axis=0)[None, :], 200)]
    assert csp._upload_sk.raw_decrypt_many(run.result.aggregate) == want == csp._upload_sk.raw_decrypt_many(cts)
