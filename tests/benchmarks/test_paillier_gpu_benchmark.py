"""The GPU benchmark script: without a GPU it says so, passes its CPU-twin self-check and
writes nothing; its measuring functions run end to end on the CPU twin at tiny sizes (a guard
against rot for the GPU session, not a timing test)."""

from __future__ import annotations

import importlib
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
    assert agg["ciphertexts"] == 80 and agg["gpu_wall_s"] > 0
    ridge = mod.gpu_ridge(rt, pk, sk, 6, chunk=4)
    assert ridge["records"] == 6 and ridge["wall_s"] > 0
    assert mod.phe_rates(pk, sk)["enc_ops"] > 0
    if mod.native.native_available():
        assert mod.cpu_ridge(pk, 6, chunk=4)["chunks"] == 2
        cpu = mod.cpu_rates(pk, sk, 0.05)
        assert cpu["enc_ops_all_cores"] > 0 and cpu["crt_dec_ops_one_core"] > 0
