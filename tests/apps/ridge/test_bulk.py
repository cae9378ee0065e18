"""Per-record and per-provider uploads on Dask workers against the in-process parties."""

from __future__ import annotations

import numpy as np
import pytest

from cryptoffload.apps.ridge import protocol as P
from cryptoffload.apps.ridge.bulk import chunk_records, run_bulk, run_per_provider, split_chunk
from cryptoffload.apps.ridge.accuracy import Z_MARGIN, rounding_sigma
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
    csp = P.Csp.generate(params, upload_bits=1024, insecure_study_size=True)
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
