"""Benchmark: Paillier on a CUDA GPU, beside our CPU cores and phe, side by side in one run.

Targets (issue 14; benchmark figures on one H100 -- targets, not results):
  * n = 1024: >= 1,000,000 enc/s; >= 300,000 CRT decryptions/s
  * n = 2048: >= 100,000 enc/s
  * aggregating 20,000,000 ciphertexts (1M records x 20) <= 2 s including transfers
  * ridge, 1M records x 20 features, encode + encrypt + aggregate <= 30 s wall

For each key size (default 1024 and 2048): encryption and CRT decryption throughput on the GPU
(batches with their copies in and out, two streams; and the kernel alone on device-resident
data), on this machine's CPU cores (our constant-time default, one core and all cores) and
with phe; aggregation of 20M real ciphertexts (host -> GPU -> host) against our C column
products on one core and phe's additions; at n = 1024, the ridge upload of 1M records x 20
features: worker processes encode and pack, the GPU encrypts and aggregates (ciphertexts stay
on the device) -- and the same on the CPU cores. Every GPU result is checked by decryption with
the CPU key. JSON with the GPU's name: ``benchmarks/results/paillier_gpu.json``.

Without a GPU it says why, runs the CPU twin of the kernels on a small batch as a correctness
self-check (against gmpy2 and the CPU key), and writes nothing.

On the GPU machine lent through the device tool (x86-64, Python 3.12 with CuPy 14.2 and nvcc
13.0; gmpy2, phe, cffi, simpy and tomli-w are not there, so they travel as wheels). The GPU
tests are a separate device call that needs no wheel (docs/crypto/paillier-gpu.md, "Running on
a GPU"); this benchmark is its own call. Here, once, in the repository root::

    echo /.whl/ >> .git/info/exclude
    python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \\
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \\
        -d .whl gmpy2==2.3.2 phe==1.5.0 cffi==2.1.1 pycparser==3.12 tomli-w==1.2.0 simpy==4.1.2

Then one device run (``carry: [".whl"]``, ``timeout_s: 600``)::

    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl \\
      && export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1 || exit 1; R=$PWD; \\
    (cd /tmp && python3 -c "import sys; sys.path.insert(0, '$R/src/cryptoffload/crypto/_native'); \\
      import build_paillier as b; b.ffibuilder.compile(tmpdir='/tmp/copl')" > $OUT/build.log 2>&1 \\
      && cp /tmp/copl/cryptoffload/crypto/_native/_paillier*.so $R/src/cryptoffload/crypto/_native/) \\
      || echo "native CPU core not built: the CPU columns will say so (see build.log)"; \\
    nvidia-smi -L; python3 benchmarks/paillier_gpu.py --out $OUT/paillier_gpu.json

The native CPU core is compiled outside the repository (so no ``pyproject.toml`` is parsed) where
the image has gcc and the GMP headers; where it has not, the CPU columns say "not measured"
and the GPU path, which needs neither, still runs. Copy ``paillier_gpu.json`` into
``benchmarks/results/``. Add ``--quick`` for a first smoke run. NVRTC compiles each kernel at
each width on first use: at n = 1024 and 2048 the kernels this script runs took about 40 s of
CPU with nvcc on the machine that wrote this (a shared 2-core Xeon; the table is in
docs/crypto/paillier-gpu.md), so the call's budget goes to measuring.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import secrets
import statistics
import sys
import time
from functools import reduce
from pathlib import Path
from typing import Any, Callable

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from cryptoffload.bench import save_results
from cryptoffload.calibrate.paillier_cores import all_cores_encryption_rate
from cryptoffload.crypto import paillier as pl
from cryptoffload.crypto._native import core as native
from cryptoffload.crypto._native import gpu_runtime as gr
from cryptoffload.crypto.paillier_gpu import GpuDecryptor, GpuPaillier, from_limbs, to_limbs
from cryptoffload.machine import machine_info

RESULTS = Path(__file__).resolve().parent / "results"
TARGETS = {"enc_1024": 1_000_000, "dec_1024": 300_000, "enc_2048": 100_000, "aggregate_20m_s": 2.0,
           "ridge_1m_s": 30.0}


def _median(fn: Callable[[], float], repeats: int) -> float:
    return statistics.median(fn() for _ in range(repeats))


def _timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


# -- CPU side ---------------------------------------------------------------------------------


def cpu_rates(pk: pl.PublicKey, sk: pl.PrivateKey, seconds: float) -> dict[str, Any]:
    """Our constant-time default on one core and on every core, CRT decryption on one core."""
    enc = pk.encryptor("auto", True)
    msgs = [secrets.randbelow(pk.n) for _ in range(256)]
    one = 256 / _median(lambda: _timed(lambda: enc.encrypt_raw(msgs)), 3)
    cts = enc.encrypt_raw(msgs[:64])
    dec = 64 / _median(lambda: _timed(lambda: sk.raw_decrypt_many(cts)), 3)
    all_cores, cores = all_cores_encryption_rate(pk, seconds, constant_time=True, batch=256)
    return {"backend": enc.describe(), "enc_ops_one_core": one, "enc_ops_all_cores": all_cores, "cores": cores,
            "crt_dec_ops_one_core": dec}


def phe_rates(pk: pl.PublicKey, sk: pl.PrivateKey) -> dict[str, Any]:
    try:
        from cryptoffload.crypto import baselines

        ppk, psk = baselines.phe_keys(pk, sk)
    except ImportError as exc:
        return {"not_measured": f"phe not installed ({exc})"}
    msgs = [secrets.randbelow(pk.n) for _ in range(8)]
    enc = 8 / _median(lambda: _timed(lambda: baselines.phe_encrypt_many(ppk, msgs)), 3)
    cts = baselines.phe_encrypt_many(ppk, msgs)
    dec = 8 / _median(lambda: _timed(lambda: baselines.phe_decrypt_many(psk, cts)), 3)
    import phe

    enc_nums = [phe.EncryptedNumber(ppk, c) for c in cts]
    add = 1000 / _median(lambda: _timed(lambda: reduce(lambda a, b: a + b, enc_nums * 125)), 3)
    return {"enc_ops": enc, "dec_ops": dec, "additions_per_s": add}


# -- GPU side ---------------------------------------------------------------------------------


def gpu_rates(rt: gr.Runtime, pk: pl.PublicKey, sk: pl.PrivateKey, batch: int) -> dict[str, Any]:
    """Encryption and CRT decryption: kernel alone, and batches with copies on two streams."""
    from cryptoffload.calibrate.gpu import GpuBench, run_batches, time_kernel

    bench = GpuBench(rt, max_items=batch, key=(pk, sk))
    sample = from_limbs(bench.host["aggregate"][0][:, :32])
    if sk.raw_decrypt_many(sample) != from_limbs(bench.host["encrypt"][0][:, :32]):
        raise RuntimeError("GPU ciphertexts do not decrypt to their plaintexts")
    out: dict[str, Any] = {"batch": batch, "table": bench.key.describe()}
    for op in ("encrypt", "decrypt"):
        out[f"{op}_kernel_ops"] = batch / time_kernel(bench, op, batch, 5)
        out[f"{op}_with_copies_ops"] = 4 * batch / _median(lambda: run_batches(bench, [(op, batch)] * 4), 3)
    return out


def gpu_aggregate(rt: gr.Runtime, pk: pl.PublicKey, sk: pl.PrivateKey, count: int, cols: int = 20) -> dict[str, Any]:
    """Column products of ``count`` real ciphertexts (a base set encrypted on the GPU, tiled),
    host -> device -> host, against our C column products on one core."""
    from cryptoffload.engines.gpu import GpuEngine

    base = min(count, 1 << 20) // cols * cols
    reps = max(1, count // base)
    plain = [secrets.randbelow(1 << 64) for _ in range(base)]
    with GpuEngine(1, device=rt.device) as eng:
        key = eng.key(pk)
        s = rt.stream()
        cts = rt.download(key.encrypt_device(rt.upload(to_limbs(plain, key.half), s),
                                             rt.upload(key.exponent_limbs(None, base), s), base, s), s)
        tiled = np.ascontiguousarray(np.tile(cts, (1, reps)))
        rows = tiled.shape[1] // cols
        wall = _median(lambda: _timed(lambda: eng.aggregate(pk.nsquare, tiled, rows, cols)), 3)
        agg = eng.aggregate(pk.nsquare, tiled, rows, cols)
    want = [reps * sum(plain[c::cols]) % pk.n for c in range(cols)]
    if sk.raw_decrypt_many(agg) != want:
        raise RuntimeError("GPU aggregate does not decrypt to the column sums")
    out = {"ciphertexts": rows * cols, "gpu_wall_s": wall, "gpu_ciphertexts_per_s": rows * cols / wall}
    if native.native_available():
        sub = min(base, 1 << 18) // cols * cols
        words = native.ints_to_words(from_limbs(cts[:, :sub]), pk.nsquare)
        t = _median(lambda: _timed(lambda: native.column_products(words, sub // cols, cols, pk.nsquare)), 3)
        out["cpu_one_core_ciphertexts_per_s"] = sub / t
    else:
        out["cpu_one_core"] = "not measured: native core not built"
    return out


def _pack_chunk(args: tuple[str, str, dict, int, int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Worker: encode and pack records start..start+size into plaintext limbs (and their sums)."""
    from cryptoffload.apps.ridge.bulk import chunk_records
    from cryptoffload.apps.ridge.protocol import Provider, RidgeParams

    n_hex, hs_hex, params, seed, start, size, half = args
    prov = Provider(RidgeParams(**params), pl.PublicKey(int(n_hex, 16), int(hs_hex, 16)))
    values = prov.encode(*chunk_records(seed, start, size, prov.params.d))
    return to_limbs(prov.pack(values), half), values.sum(axis=0)


def gpu_ridge(rt: gr.Runtime, pk: pl.PublicKey, sk: pl.PrivateKey, records: int, chunk: int = 50_000) -> dict[str, Any]:
    """1M records x 20 features: worker processes encode + pack, the GPU encrypts and
    aggregates; checked by decryption against the packed sums."""
    from dataclasses import asdict

    from cryptoffload.apps.ridge.protocol import Provider, RidgeParams
    from cryptoffload.engines.gpu import GpuEngine
    from cryptoffload.workloads.ridge_data import algorithm1_y_bound

    params = RidgeParams(d=20, max_records=max(records, 1_000_000), x_bound=1.0, y_bound=algorithm1_y_bound(20))
    prov = Provider(params, pk)
    cols = prov.plaintexts
    with GpuEngine(1, device=rt.device) as eng:
        key = eng.key(pk)
        tasks = [(format(pk.n, "x"), format(pk.hs, "x"), asdict(params), 1, s, min(chunk, records - s), key.half)
                 for s in range(0, records, chunk)]
        acc, sums = [1] * cols, None
        t0 = time.perf_counter()
        with mp.get_context("spawn").Pool(max(1, (os.cpu_count() or 2) - 1)) as pool:
            for (limbs, vsum), task in zip(pool.imap(_pack_chunk, tasks), tasks):
                agg = eng.encrypt_aggregate(pk, limbs, task[5], cols)
                acc = [a * b % pk.nsquare for a, b in zip(acc, agg)]
                sums = vsum if sums is None else sums + vsum
        wall = time.perf_counter() - t0
    want = [p % pk.n for p in prov.pack(sums[None, :], records)]
    if sk.raw_decrypt_many(acc) != want:
        raise RuntimeError("GPU ridge aggregate does not decrypt to the packed sums")
    return {"records": records, "plaintexts_per_record": cols, "wall_s": wall, "workers": os.cpu_count()}


def cpu_ridge(pk: pl.PublicKey, records: int, chunk: int = 20_000) -> dict[str, Any]:
    """The same upload on every CPU core (native encryption and column products per chunk)."""
    from dataclasses import asdict

    from cryptoffload.apps.ridge.bulk import ChunkTask, encrypt_aggregate_chunk
    from cryptoffload.apps.ridge.protocol import RidgeParams
    from cryptoffload.workloads.ridge_data import algorithm1_y_bound

    if not native.native_available():
        return {"not_measured": "native core not built"}
    params = RidgeParams(d=20, max_records=max(records, 1_000_000), x_bound=1.0, y_bound=algorithm1_y_bound(20))
    tasks = [ChunkTask(format(pk.n, "x"), format(pk.hs, "x"), asdict(params), 1, s, min(chunk, records - s))
             for s in range(0, records, chunk)]
    t0 = time.perf_counter()
    with mp.get_context("spawn").Pool(os.cpu_count() or 1) as pool:
        results = pool.map(encrypt_aggregate_chunk, tasks)
    return {"records": records, "wall_s": time.perf_counter() - t0, "cores": os.cpu_count(),
            "chunks": len(results)}


# -- without a GPU ----------------------------------------------------------------------------


def twin_self_check(console: Console) -> bool:
    """The GPU kernels on the CPU twin, small batch, against gmpy2 and the CPU key."""
    if gr.twin_reason() is not None:
        console.print(escape(f"CPU twin self-check skipped: {gr.twin_reason()}"))
        return False
    rt = gr.get_runtime("cpu-twin")
    pk, sk = pl.generate_keypair(1024, insecure_study_size=True)
    msgs = [0, pk.n - 1] + [secrets.randbelow(pk.n) for _ in range(14)]
    exps = [secrets.randbits(pk.exp_bits) for _ in msgs]
    key = GpuPaillier(pk, rt)
    cts = key.encrypt_raw(msgs, exps)
    ok = cts == [pk.raw_encrypt(m, a) for m, a in zip(msgs, exps)]
    ok &= GpuDecryptor(sk, rt).decrypt(cts) == msgs == sk.raw_decrypt_many(cts)
    agg = key.column_products(cts, 4, 4)
    ok &= sk.raw_decrypt_many(agg) == [sum(msgs[c::4]) % pk.n for c in range(4)]
    console.print(f"CPU twin self-check ({len(msgs)} ciphertexts, n = 1024): {'passed' if ok else 'FAILED'}")
    return ok


# -- main -------------------------------------------------------------------------------------


def run_gpu(args: argparse.Namespace, console: Console) -> dict[str, Any]:
    rt = gr.get_runtime("cuda")
    console.print(f"GPU: {rt.describe()}")
    out: dict[str, Any] = {"machine": machine_info(), "gpu": rt.info(), "targets": TARGETS, "sizes": {}}
    for bits in args.bits:
        pk, sk = pl.generate_keypair(bits, insecure_study_size=bits < 2048)
        batch = (1 << 16 if args.quick else 1 << 20) if bits <= 1024 else (1 << 14 if args.quick else 1 << 18)
        block: dict[str, Any] = {}
        console.print(f"n = {bits}: GPU encryption / decryption (batches of {batch:,})")
        block["gpu"] = gpu_rates(rt, pk, sk, batch)
        console.print(f"n = {bits}: aggregation of {args.aggregate:,} ciphertexts")
        block["aggregate"] = gpu_aggregate(rt, pk, sk, args.aggregate)
        console.print(f"n = {bits}: CPU cores and phe")
        block["cpu"] = cpu_rates(pk, sk, args.seconds) if native.native_available() else \
            {"not_measured": "native core not built (python3 setup.py build_ext --inplace)"}
        block["phe"] = phe_rates(pk, sk)
        if bits == 1024 and args.records:
            console.print(f"ridge: {args.records:,} records x 20 features on the GPU and on the CPU cores")
            block["ridge_gpu"] = gpu_ridge(rt, pk, sk, args.records)
            block["ridge_cpu"] = cpu_ridge(pk, args.records)
            block["ridge_phe"] = {"not_measured": "phe encrypts ~600 ciphertexts/s per core: 17M would take hours"}
        out["sizes"][str(bits)] = block
        print_block(console, bits, block)
    return out


def print_block(console: Console, bits: int, b: dict[str, Any]) -> None:
    t = Table(title=f"n = {bits} bits (measured in this run)")
    for col in ("what", "GPU", "CPU, our default", "phe"):
        t.add_column(col, justify="right" if col != "what" else "left")
    cpu, phe, gpu = b["cpu"], b["phe"], b["gpu"]

    def f(v: Any) -> str:
        return f"{v:,.0f}" if isinstance(v, (int, float)) else "-"

    t.add_row("enc/s (GPU: with copies | kernel)", f"{f(gpu['encrypt_with_copies_ops'])} | {f(gpu['encrypt_kernel_ops'])}",
              f"{f(cpu.get('enc_ops_all_cores'))} ({cpu.get('cores', '-')} cores), {f(cpu.get('enc_ops_one_core'))} (1)",
              f(phe.get("enc_ops")))
    t.add_row("CRT dec/s (GPU: with copies | kernel)", f"{f(gpu['decrypt_with_copies_ops'])} | {f(gpu['decrypt_kernel_ops'])}",
              f"{f(cpu.get('crt_dec_ops_one_core'))} (1 core)", f(phe.get("dec_ops")))
    a = b["aggregate"]
    t.add_row(f"aggregation, ciphertexts/s ({a['ciphertexts']:,} on the GPU in {a['gpu_wall_s']:.2f} s)",
              f(a["gpu_ciphertexts_per_s"]), f"{f(a.get('cpu_one_core_ciphertexts_per_s'))} (1 core)",
              f(phe.get("additions_per_s")))
    if "ridge_gpu" in b:
        t.add_row(f"ridge {b['ridge_gpu']['records']:,} x 20, wall s", f"{b['ridge_gpu']['wall_s']:.1f}",
                  f"{b['ridge_cpu']['wall_s']:.1f}" if "wall_s" in b["ridge_cpu"] else "-", "-")
    console.print(t)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bits", type=int, nargs="+", default=[1024, 2048])
    ap.add_argument("--aggregate", type=int, default=20_000_000, help="ciphertexts aggregated (default 20M)")
    ap.add_argument("--records", type=int, default=1_000_000, help="ridge records (0: skip)")
    ap.add_argument("--seconds", type=float, default=2.0, help="CPU all-cores measuring time")
    ap.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    ap.add_argument("--out", type=Path, default=RESULTS / "paillier_gpu.json")
    args = ap.parse_args()
    if args.quick:
        args.aggregate, args.records = min(args.aggregate, 2_000_000), min(args.records, 100_000)
    console = Console()
    reason = gr.cuda_reason()
    if reason is not None:
        console.print(escape(f"GPU unavailable: {reason}; no GPU figure is measured and nothing is written."))
        return 0 if twin_self_check(console) else 1
    t0 = time.perf_counter()
    data = run_gpu(args, console)
    data["wall_seconds"] = time.perf_counter() - t0
    save_results(data, args.out, console.print)
    return 0


if __name__ == "__main__":
    sys.exit(main())
