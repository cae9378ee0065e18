"""The studies' GPU measurements, run on the CPU twin of the kernels with small batches (the
studies themselves call them only on a CUDA GPU): the model-vs-measured rows are made on sizes
the calibration did not time, the ridge aggregates decrypt to the CPU run's sums."""

from __future__ import annotations

import pytest

from cryptoffload.crypto import paillier as pl
from cryptoffload.crypto.paillier import ENCRYPTION
from cryptoffload.engines.gpu import twin_reason
from cryptoffload.studies import _gpu

pytestmark = pytest.mark.skipif(twin_reason() is not None, reason="CPU twin not built")


def test_holdouts_are_not_fit_sizes() -> None:
    m = 1 << 18
    assert _gpu.fit_batches(m) == (8192, 65536, 262144)
    fitted = set(_gpu.fit_batches(m))
    for _, batches in _gpu.holdout_workloads(m):
        assert all(b not in fitted and b <= m for _, b in batches)


def test_paillier_gpu_rows_on_the_twin(tmp_path) -> None:
    pk, sk = pl.generate_keypair(512, insecure_study_size=True)
    run = _gpu.measure_paillier_gpu(pk, sk, tmp_path, quick=True, device="cpu-twin", max_items=128, repeats=1)
    assert run.profile.exists() and run.encrypt_ops > 0 and run.decrypt_ops > 0 and run.batch == 128
    workloads = _gpu.holdout_workloads(128)
    assert [r.workload for r in run.model_rows] == [label for label, _ in workloads]
    assert [r.items for r in run.model_rows] == [32, 128, 48, 48 + 24 + 96, 128]   # 4x8, 2x64, 3x16, the mix, 2x64
    for r in run.model_rows:
        assert r.predicted_s > 0 and r.measured_s > 0 and r.error_rel == pytest.approx(r.predicted_s / r.measured_s - 1)
    assert run.worst_error == max(abs(r.error_rel) for r in run.model_rows)
    assert run.info["device"] == "cpu-twin"


def test_ridge_gpu_aggregates_match_the_cpu(monkeypatch) -> None:
    import secrets
    from functools import reduce

    pk, sk = pl.generate_keypair(512, insecure_study_size=True)
    rows, cols = 12, 3
    plain = [secrets.randbelow(1 << 40) for _ in range(rows * cols)]
    cts = ENCRYPTION.encryptor(pk, "gmpy2").encrypt_raw(plain)
    cpu = [reduce(lambda a, b: a * b % pk.nsquare, cts[c::cols], 1) for c in range(cols)]
    g = _gpu.measure_ridge_gpu(pk, sk, plain, rows, cols, cpu, device="cpu-twin")
    assert g.ciphertexts == rows * cols and g.aggregate_s > 0 and g.encrypt_aggregate_s > 0
    with pytest.raises(RuntimeError, match="CPU run"):
        _gpu.measure_ridge_gpu(pk, sk, plain, rows, cols, [1] * cols, device="cpu-twin")
