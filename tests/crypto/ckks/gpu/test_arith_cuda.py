"""The CUDA source: it compiles for the H100 (sm_90) with nvcc where nvcc is installed, names the
kernels arith_cuda launches (and the host harness wraps every one of them), and its module imports
without CuPy. (Its arithmetic is checked against the twin on the host in test_arith.py and
test_scheme.py.)"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from cryptoffload.crypto.ckks.gpu import arith_cuda, launch


def test_source_ships_with_the_package_and_names_every_launched_kernel():
    src = launch.source()
    defined = set(re.findall(r'extern "C" __global__ void (\w+)\(', src))
    code = open(arith_cuda.__file__, encoding="utf-8").read()
    launched = set(re.findall(r'(?:launcher\(\)\(|_shared\(t, )"(\w+)"', code))
    launched |= {f"{name}_k" for name in ("add", "sub", "neg", "mul", "mul_const")}
    assert launched <= defined and len(launched) >= 14
    harness = (launch.resources.files("cryptoffload.crypto.ckks.gpu") / "kernels_host.cpp").read_text()
    # every kernel has a CPU launch in the CPU's loop order and one in the GPU's (*_gpu_order)
    assert set(re.findall(r"void launch_(\w+)\(", harness)) == defined | {f"{k}_gpu_order" for k in defined}
    assert "curand" not in src   # no GPU random numbers: all randomness comes from the host's CSPRNG


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH (the CUDA toolkit is not installed)")
def test_kernels_compile_for_sm90_with_nvcc(tmp_path):
    cu = tmp_path / "kernels.cu"
    cu.write_text(launch.source(), encoding="utf-8")
    ptx = tmp_path / "kernels.ptx"
    run = subprocess.run(["nvcc", "-arch=sm_90", "--ptx", "-std=c++17", str(cu), "-o", str(ptx)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    entries = set(re.findall(r"\.entry (\w+)\(", ptx.read_text()))
    assert set(re.findall(r'extern "C" __global__ void (\w+)\(', cu.read_text())) == entries


def test_shared_memory_launches_fold_rows_into_grid_x(monkeypatch):
    """A batch of more than 65,535 rows (grid.y's limit) launches the shared-memory NTT kernels
    with every (row, chunk) block in grid.x."""
    import numpy as np

    from cryptoffload.crypto.ckks.gpu.kernelset import DeviceTables

    grids = {}

    def fake_launch(name, grid, block, args, shared_mem=0):
        grids[name] = (grid, block, shared_mem)

    monkeypatch.setattr(arith_cuda, "MAX_CHUNK_THREADS", 2)   # N > 2T: the column launches run too
    rows, n = 70_000, 8
    a = np.zeros((rows, n), dtype=np.uint64)
    none = np.zeros(0, dtype=np.uint64)
    t = DeviceTables(xp=np, n=n, q=none, qinv=none.astype(np.float64), psi=none, psi_sh=none, ipsi=none, ipsi_sh=none,
                     ninv=none, ninv_sh=none, launch=fake_launch)
    arith_cuda.ntt(t, a, None)
    arith_cuda.intt(t, a, None)
    for name in ("ntt_upper", "ntt_tail", "intt_head", "intt_upper"):
        grid, block, shared = grids[name]
        threads = min(arith_cuda.MAX_CHUNK_THREADS, n // 2)
        assert grid == (rows * n // (2 * threads),) and block == (threads,) and shared == 2 * threads * 8
