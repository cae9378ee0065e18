"""The GPU benchmark script: without a GPU it says so, passes its CPU-twin self-check and
writes nothing; its measuring functions run end to end on the CPU twin at tiny sizes (a guard
against rot for the GPU session, not a timing test)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from cryptoffload.crypto._native import gpu_runtime as gr

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(gr.twin_reason() is not None, reason="CPU twin not built")


def _module(monkeypatch: pytest.MonkeyPatch):
    """The script as an importable module (its worker pool pickles functions by module name)."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    return importlib.import_module("paillier_gpu")


def test_without_a_gpu_it_self_checks_and_writes_nothing(tmp_path: Path) -> None:
    if gr.cuda_reason() is None:
        pytest.skip("a CUDA GPU is present: the script would measure it")
    out = tmp_path / "g.json"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "paillier_gpu.py"), "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "GPU unavailable: CuPy" in proc.stdout and "cryptoffload[gpu]" in proc.stdout
    assert "self-check (16 ciphertexts, n = 1024): passed" in proc.stdout
    assert not out.exists()


def test_measuring_functions_on_the_twin(monkeypatch: pytest.MonkeyPatch) -> None:
    from cryptoffload.crypto import paillier as pl

    mod = _module(monkeypatch)
    rt = gr.get_runtime("cpu-twin")
    pk, sk = pl.generate_keypair(512, insecure_study_size=True)
    rates = mod.gpu_rates(rt, pk, sk, 32)
    assert rates["encrypt_kernel_ops"] > 0 and rates["decrypt_with_copies_ops"] > 0
    agg = mod.gpu_aggregate(rt, pk, sk, 80, cols=4)
    assert agg["ciphertexts"] == 80 and agg["device_wall_s"] > 0 and agg["repeats"] >= 1
    ridge = mod.gpu_ridge(rt, pk, sk, 6, chunk=4)
    assert ridge["records"] == 6 and ridge["wall_s"] > 0
    assert mod.phe_rates(pk, sk)["enc_ops"] > 0
    if mod.native.native_available():
        assert mod.cpu_ridge(pk, 6, chunk=4)["chunks"] == 2
        cpu = mod.cpu_rates(pk, sk, 0.05)
        assert cpu["enc_ops_all_cores"] > 0 and cpu["crt_dec_ops_one_core"] > 0


def test_batches_fill_the_device_in_quick_mode_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """An H100 (132 SMs) holds 270,336 threads at once: a batch of fewer would understate the
    rate (the old quick batch at n = 2048 was 16,384)."""
    mod = _module(monkeypatch)
    assert mod.device_batch(132) == 132 * 2048 == 270_336
    assert mod.device_batch(132, 2) == 2 * 270_336
    assert mod.device_batch(1) == mod.MIN_BATCH
    assert mod.device_batch(132) % 16 == 0
    with pytest.raises(ValueError):
        mod.device_batch(0)


def test_twenty_million_ciphertexts_are_aggregated_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    mod = _module(monkeypatch)
    assert mod.aggregate_tiles(20_000_000, 20) == (1_000_000, 20)
    assert mod.aggregate_tiles(2_000_000, 20) == (1_000_000, 2)
    assert mod.aggregate_tiles(400, 20) == (400, 1)
    base, reps = mod.aggregate_tiles(3_000_001, 20)
    assert base % 20 == 0 and base <= 1 << 20 and base * reps <= 3_000_001


def test_repeats_fit_the_time_allotted(monkeypatch: pytest.MonkeyPatch) -> None:
    mod = _module(monkeypatch)
    assert mod.repeats_within(2.0, 10.0, 5) == 5
    assert mod.repeats_within(2.0, 7.0, 5) == 3
    assert mod.repeats_within(30.0, 7.0, 5) == 1          # always one timed run after the warm-up
    assert mod.repeats_within(0.0, 7.0, 3) == 3


def test_the_kernels_compiled_ahead_are_the_ones_the_benchmark_launches(monkeypatch: pytest.MonkeyPatch) -> None:
    """What run_gpu compiles before timing (key_kernels) covers every (kernel, width) its
    measuring functions launch: nothing is left to compile inside a timed region."""
    from cryptoffload.crypto import paillier as pl

    mod = _module(monkeypatch)
    rt = gr.get_runtime("cpu-twin")
    seen: set[tuple[str, int]] = set()
    launch = rt.launch

    def record(kernel, width, instances, args, stream):
        seen.add((kernel, width))
        return launch(kernel, width, instances, args, stream)

    monkeypatch.setattr(rt, "launch", record)
    pk, sk = pl.generate_keypair(1024, insecure_study_size=True)
    mod.gpu_rates(rt, pk, sk, 32, allot_s=0.0)
    mod.gpu_aggregate(rt, pk, sk, 40, cols=4, allot_s=0.0)
    assert seen and seen <= set(gr.key_kernels(1024))
    assert {k for k, _ in seen} == {"fb_table", "fb_encrypt", "crt_decrypt", "col_reduce"}


def test_the_dry_run_labels_every_figure_as_the_twin(tmp_path: Path) -> None:
    out = tmp_path / "p.json"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "paillier_gpu.py"), "--device", "cpu-twin",
                           "--bits", "512", "--seconds", "0.05", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(out.read_text())
    assert data["device"] == "cpu-twin" and data["gpu"] is None and "not a GPU figure" in data["provenance"]
    block = data["sizes"]["512"]
    assert block["device"]["batch"] == 32 and block["aggregate"]["ciphertexts"] == 400
    said = " ".join(proc.stdout.split()).replace("no GPU figure", "").replace("twin of the GPU kernels", "")
    assert "GPU" not in said and "CPU twin" in said
