"""GPU calibration: the fit against closed forms; the whole measurement on the CPU twin of the
kernels (a real measurement of the twin, labelled device = cpu-twin), read back as a simulated
GPU; the measured pipeline runs and its results are what the kernels compute."""

from __future__ import annotations

import tomllib

import pytest

from cryptoffload.crypto import native as gr
from cryptoffload.errors import BackendUnavailable, ConfigError
from cryptoffload.calibrate import gpu as cg
from cryptoffload.sim.gpu import load_gpu_params, simulate_batches

twin = pytest.mark.skipif(gr.twin_reason() is not None, reason="CPU twin not built")


def test_fit_recovers_the_model() -> None:
    fixed, per, wave = 1e-3, 1e-6, 5000

    def t(b: int) -> float:
        return fixed + per * max(b, wave)

    bs = [1000, 10_000, 100_000]
    got = cg.fit_op(bs, [t(b) for b in bs])
    assert got == pytest.approx((fixed, per, wave))
    got = cg.fit_op([6000, 10_000], [t(6000), t(10_000)])     # smallest batch already fills the GPU
    assert got == pytest.approx((fixed, per, 6000))
    with pytest.raises(ConfigError, match="two different"):
        cg.fit_op([10, 10], [1.0, 1.0])
    f, p, w = cg.fit_op([100, 200], [1.0, 0.9])                # noise: no growth
    assert p > 0 and f >= 0 and w >= 100


def test_calibrate_refuses_without_a_gpu(tmp_path) -> None:
    if gr.cuda_reason() is None:
        pytest.skip("a CUDA GPU is present")
    with pytest.raises(BackendUnavailable):
        cg.calibrate_gpu(tmp_path / "gpu.toml")
    assert not (tmp_path / "gpu.toml").exists()


@pytest.fixture(scope="module")
def bench() -> cg.GpuBench:
    if gr.twin_reason() is not None:
        pytest.skip("CPU twin not built")
    from cryptoffload.crypto import paillier as pl

    return cg.GpuBench(gr.get_runtime("cpu-twin"), max_items=64, key=pl.generate_keypair(512, insecure_study_size=True))


@twin
def test_twin_profile_drives_the_simulated_gpu(bench: cg.GpuBench, tmp_path) -> None:
    path = cg.calibrate_gpu(tmp_path / "twin.toml", device="cpu-twin", bench=bench, fit_batches=(16, 32, 64),
                            repeats=1, transfer_sizes=(1 << 12, 1 << 16))
    meta = tomllib.loads(path.read_text())["meta"]
    assert meta["kind"] == "measured" and meta["device"] == "cpu-twin" and meta["key_bits"] == 512
    params = load_gpu_params(str(path))
    assert params.ops["encrypt"].per_item_s > 0 and params.h2d_bytes_per_s > 0
    assert params.ops["aggregate"].bytes_out == 0 and params.ops["encrypt"].bytes_out == 4 * bench.key.width
    pred = simulate_batches(params, [("encrypt", 48), ("decrypt", 40), ("aggregate", 64)], streams=2)
    assert pred.makespan_s > 0 and pred.items == 152
    measured = cg.run_batches(bench, [("encrypt", 48), ("decrypt", 40), ("aggregate", 64)], streams=2)
    assert measured > 0
    with pytest.raises(ConfigError, match="prepared"):
        cg.run_batches(bench, [("encrypt", 65)])
    with pytest.raises(ConfigError, match="fit batches"):
        cg.measure(bench, fit_batches=(64, 64))


@twin
def test_bench_inputs_are_real_ciphertexts(bench: cg.GpuBench) -> None:
    from cryptoffload.crypto.paillier_gpu import from_limbs

    rt = bench.runtime
    s = rt.stream()
    cts = from_limbs(bench.host["aggregate"][0][:, :4])
    msgs = from_limbs(bench.host["encrypt"][0][:, :4])
    assert bench.sk.raw_decrypt_many(cts) == msgs
    out = from_limbs(rt.download(bench.launch("decrypt", 4, bench.device_inputs("decrypt", 4, s), s), s))
    assert out == msgs


def test_a_missing_profile_writer_is_said_before_anything_is_measured(tmp_path, monkeypatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "tomli_w", None)
    monkeypatch.setattr(cg, "GpuBench", lambda *a, **k: pytest.fail("measured before checking the writer"))
    with pytest.raises(BackendUnavailable, match="tomli-w"):
        cg.calibrate_gpu(tmp_path / "gpu.toml", device="cpu-twin")
