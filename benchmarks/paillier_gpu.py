"""Benchmark: Paillier on a CUDA GPU, beside our CPU cores and phe, side by side in one run.

Targets (issue 14; benchmark figures on one H100 -- targets, not results):
  * n = 1024: >= 1,000,000 enc/s; >= 300,000 CRT decryptions/s
  * n = 2048: >= 100,000 enc/s
  * aggregating 20,000,000 ciphertexts (1M records x 20) <= 2 s including transfers
  * ridge, 1M records x 20 features, encode + encrypt + aggregate <= 30 s wall

For each key size (default 1024 and 2048): encryption and CRT decryption throughput on the GPU
(the kernel alone on device-resident data; and batches with their copies in and out, two
streams), on this machine's CPU cores (our constant-time default, one core and all cores) and
with phe; aggregation of 20M real ciphertexts (host -> GPU -> host) against our C column
products on one core and phe's additions; at n = 1024, the ridge upload of 1M records x 20
features (``--records``; 0 skips it): worker processes encode and pack, the GPU encrypts and
aggregates (ciphertexts stay on the device) -- and the same on the CPU cores. Every GPU result
is checked by decryption with the CPU key. JSON with the GPU's name:
``benchmarks/results/paillier_gpu.json`` (written again after each key size, so a run stopped
by its time limit keeps what it measured).

How it times (a GPU runs asynchronously): every clock is read after a stream synchronize, so
the device is done; every figure is preceded by an untimed warm-up of the same work; the kernels
the run launches (:func:`~cryptoffload.crypto._native.gpu_interface.key_kernels` of each key
size, nothing else) are compiled first, concurrently, into CuPy's disk cache
(:func:`~cryptoffload.crypto._native.gpu_cuda.precompile`). A batch fills the device: the
batch is :func:`device_batch` -- the GPU's SMs x 2,048 threads (what an SM holds at most) x
waves, never below :data:`MIN_BATCH` -- in ``--quick`` mode too. ``--budget`` (seconds) scales
the repeats of each figure to fit (at least one timed run after the warm-up).

Without a GPU it says why, runs the CPU twin of the kernels on a small batch as a correctness
self-check (against gmpy2 and the CPU key), and writes nothing -- unless ``--device cpu-twin``
asks for the dry run: the same measuring code on the CPU twin at small sizes, every figure
labelled ``cpu-twin`` (never a GPU figure), which ``make gpu-check`` runs where no GPU is.

On the GPU machine: ``make gpu-check`` (benchmarks/README.md) runs this with the tests, the
CKKS benchmark and ``calibrate gpu`` in one device call.
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
    enc = pl.ENCRYPTION.encryptor(pk, "auto", constant_time=True)
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

#: The most threads one SM holds at once (sm_80, sm_90): a batch of this many per SM fills the
#: device whatever the kernels' occupancy (at 255 registers a thread they hold 256 per SM).
THREADS_PER_SM = 2048
MIN_BATCH = 1 << 14
#: How the budget is shared between one key size's figures: kernel and with-copies runs of
#: encryption and decryption, and the aggregation.
FIGURES = 5


def device_batch(multiprocessors: int, waves: int = 1) -> int:
    """Instances per batch that fill the device ``waves`` times over at full occupancy (SMs x
    2,048 threads x waves; an H100's 132 SMs: 270,336), never fewer than :data:`MIN_BATCH`;
    a multiple of 16, the aggregation's column count."""
    if multiprocessors < 1 or waves < 1:
        raise ValueError("multiprocessors and waves must be positive")
    return max(MIN_BATCH, multiprocessors * THREADS_PER_SM * waves)


def repeats_within(one_s: float, allot_s: float, most: int) -> int:
    """Timed repeats of a run that took ``one_s`` (its warm-up) that fit in ``allot_s``: at least
    one, at most ``most``."""
    return max(1, min(most, int(allot_s / max(one_s, 1e-9))))


def _kernel_seconds(bench: Any, op: str, batch: int, allot_s: float) -> tuple[float, int]:
    """Median seconds of one launch over ``batch`` device-resident instances, launch to stream
    synchronize, after an untimed warm-up launch; and how many were timed."""
    s = bench.runtime.stream()
    ins = bench.device_inputs(op, batch, s)
    s.synchronize()

    def once() -> None:
        bench.launch(op, batch, ins, s)
        s.synchronize()

    reps = repeats_within(_timed(once), allot_s, 5)
    return _median(lambda: _timed(once), reps), reps


def gpu_rates(rt: gr.Runtime, pk: pl.PublicKey, sk: pl.PrivateKey, batch: int, allot_s: float = 60.0
              ) -> dict[str, Any]:
    """Encryption and CRT decryption: the kernel alone, and batches with copies on two streams
    (each after a warm-up run of the same shape); ``allot_s`` is shared between the four."""
    from cryptoffload.calibrate.gpu import GpuBench, run_batches

    bench = GpuBench(rt, max_items=batch, key=(pk, sk))
    sample = from_limbs(bench.host["aggregate"][0][:, :32])
    if sk.raw_decrypt_many(sample) != from_limbs(bench.host["encrypt"][0][:, :32]):
        raise RuntimeError("GPU ciphertexts do not decrypt to their plaintexts")
    out: dict[str, Any] = {"batch": batch, "table": bench.key.describe()}
    for op in ("encrypt", "decrypt"):
        t, reps = _kernel_seconds(bench, op, batch, allot_s / 4)
        out[f"{op}_kernel_ops"], out[f"{op}_kernel_repeats"] = batch / t, reps
        warm = run_batches(bench, [(op, batch)] * 2)      # pinned staging, both streams
        reps = repeats_within(2 * warm, allot_s / 4, 3)
        out[f"{op}_with_copies_ops"] = 4 * batch / _median(lambda: run_batches(bench, [(op, batch)] * 4), reps)
        out[f"{op}_with_copies_repeats"] = reps
    return out


def aggregate_tiles(count: int, cols: int, most: int = 1 << 20) -> tuple[int, int]:
    """(distinct ciphertexts, copies of them) making ``count`` ciphertexts in ``cols`` columns:
    at most ``most`` distinct ones (each encrypted on the device), so 20M is 20 copies of 1M --
    exactly 20M, as the target counts them, where ``count`` divides so."""
    reps = -(-count // most)
    return count // reps // cols * cols, reps


def gpu_aggregate(rt: gr.Runtime, pk: pl.PublicKey, sk: pl.PrivateKey, count: int, cols: int = 20,
                  allot_s: float = 30.0) -> dict[str, Any]:
    """Column products of ``count`` real ciphertexts (a base set encrypted on the GPU, tiled),
    host -> device -> host, after an untimed warm-up (also the correctness check), against our
    C column products on one core."""
    from cryptoffload.engines.gpu import GpuEngine

    base, reps = aggregate_tiles(count, cols)
    plain = [secrets.randbelow(1 << 64) for _ in range(base)]
    with GpuEngine(1, device=rt.device) as eng:
        key = eng.key(pk)
        s = rt.stream()
        cts = rt.download(key.encrypt_device(rt.upload(to_limbs(plain, key.half), s),
                                             rt.upload(key.exponent_limbs(None, base), s), base, s), s)
        tiled = np.ascontiguousarray(np.tile(cts, (1, reps)))
        rows = tiled.shape[1] // cols
        t0 = time.perf_counter()
        agg = eng.aggregate(pk.nsquare, tiled, rows, cols)     # warm-up; returns host integers
        first = time.perf_counter() - t0
        timed = repeats_within(first, allot_s, 3)
        wall = _median(lambda: _timed(lambda: eng.aggregate(pk.nsquare, tiled, rows, cols)), timed)
    want = [reps * sum(plain[c::cols]) % pk.n for c in range(cols)]
    if sk.raw_decrypt_many(agg) != want:
        raise RuntimeError("GPU aggregate does not decrypt to the column sums")
    out = {"ciphertexts": rows * cols, "device_wall_s": wall, "device_ciphertexts_per_s": rows * cols / wall,
           "repeats": timed}
    if native.native_available():
        sub = min(base, 1 << 16) // cols * cols   # about a second of one core at n = 2048
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


#: The dry run's sizes on the CPU twin (``--device cpu-twin``): the code path, not a rate.
TWIN_BATCH, TWIN_AGGREGATE, TWIN_BUDGET_S = 32, 400, 10.0


def _batch(rt: gr.Runtime, bits: int, quick: bool) -> int:
    if rt.device != "cuda":
        return TWIN_BATCH if bits <= 1024 else TWIN_BATCH // 2
    return device_batch(int(rt.info().get("multiprocessors", 1)), 1 if quick or bits > 1024 else 2)


def _precompile(rt: gr.Runtime, bits: list[int], console: Console) -> dict[str, Any]:
    """The kernels these key sizes launch, built concurrently before anything is timed."""
    if rt.device != "cuda":
        return {"device": rt.device, "note": "the CPU twin has every kernel built already"}
    from cryptoffload.crypto._native.gpu_cuda import precompile

    got = precompile([pair for b in bits for pair in gr.key_kernels(b)])
    console.print(f"compiled {len(got['modules'])} kernel modules in {got['wall_s']:.1f} s "
                  f"({got['workers']} processes){'; errors: ' + str(got['errors']) if got['errors'] else ''}")
    return got


def size_block(rt: gr.Runtime, args: argparse.Namespace, bits: int, allot_s: float, console: Console
               ) -> dict[str, Any]:
    """Every figure of one key size (the module docstring), within about ``allot_s`` seconds."""
    pk, sk = pl.generate_keypair(bits, insecure_study_size=bits < 2048)
    batch = _batch(rt, bits, args.quick)
    where = "GPU" if rt.device == "cuda" else "CPU twin"
    block: dict[str, Any] = {}
    console.print(f"n = {bits}: {where} encryption / decryption (batches of {batch:,})")
    block["device"] = gpu_rates(rt, pk, sk, batch, 0.6 * allot_s)
    count = args.aggregate if bits <= 1024 or args.aggregate_large is None else args.aggregate_large
    console.print(f"n = {bits}: {where} aggregation of {count:,} ciphertexts")
    block["aggregate"] = gpu_aggregate(rt, pk, sk, count, allot_s=0.15 * allot_s)
    console.print(f"n = {bits}: CPU cores and phe")
    block["cpu"] = cpu_rates(pk, sk, args.seconds) if native.native_available() else \
        {"not_measured": "native core not built (python3 setup.py build_ext --inplace)"}
    block["phe"] = phe_rates(pk, sk)
    if bits == 1024 and args.records:
        console.print(f"ridge: {args.records:,} records x 20 features on the {where} and on the CPU cores")
        block["ridge_device"] = gpu_ridge(rt, pk, sk, args.records)
        block["ridge_cpu"] = cpu_ridge(pk, args.records)
        block["ridge_phe"] = {"not_measured": "phe encrypts ~600 ciphertexts/s per core: 17M would take hours"}
    return block


def run_gpu(args: argparse.Namespace, console: Console) -> dict[str, Any]:
    """Every key size on ``args.device``; the JSON is written again after each size."""
    rt = gr.get_runtime(args.device)
    console.print(f"{'GPU' if rt.device == 'cuda' else 'CPU twin (dry run: no GPU figure)'}: {rt.describe()}")
    t0 = time.perf_counter()
    out: dict[str, Any] = {"machine": machine_info(), "device": rt.device,
                           "gpu": rt.info() if rt.device == "cuda" else None, "targets": TARGETS,
                           "provenance": "measured" if rt.device == "cuda" else
                           "measured on the CPU twin of the kernels: a dry run, not a GPU figure",
                           "quick": args.quick, "budget_s": args.budget, "sizes": {}}
    out["compile"] = _precompile(rt, args.bits, console)
    for i, bits in enumerate(args.bits):
        left = args.budget - (time.perf_counter() - t0)
        block = size_block(rt, args, bits, max(1.0, left / (len(args.bits) - i)), console)
        out["sizes"][str(bits)] = block
        out["wall_seconds"] = time.perf_counter() - t0
        save_results(out, args.out)
        print_block(console, bits, block, "GPU" if rt.device == "cuda" else "CPU twin")
    return out


def print_block(console: Console, bits: int, b: dict[str, Any], where: str = "GPU") -> None:
    t = Table(title=f"n = {bits} bits (measured in this run)")
    for col in ("what", where, "CPU, our default", "phe"):
        t.add_column(col, justify="right" if col != "what" else "left")
    cpu, phe, dev = b["cpu"], b["phe"], b["device"]

    def f(v: Any) -> str:
        return f"{v:,.0f}" if isinstance(v, (int, float)) else "-"

    t.add_row("enc/s (with copies | kernel)", f"{f(dev['encrypt_with_copies_ops'])} | {f(dev['encrypt_kernel_ops'])}",
              f"{f(cpu.get('enc_ops_all_cores'))} ({cpu.get('cores', '-')} cores), {f(cpu.get('enc_ops_one_core'))} (1)",
              f(phe.get("enc_ops")))
    t.add_row("CRT dec/s (with copies | kernel)", f"{f(dev['decrypt_with_copies_ops'])} | {f(dev['decrypt_kernel_ops'])}",
              f"{f(cpu.get('crt_dec_ops_one_core'))} (1 core)", f(phe.get("dec_ops")))
    a = b["aggregate"]
    t.add_row(f"aggregation, ciphertexts/s ({a['ciphertexts']:,} in {a['device_wall_s']:.2f} s)",
              f(a["device_ciphertexts_per_s"]), f"{f(a.get('cpu_one_core_ciphertexts_per_s'))} (1 core)",
              f(phe.get("additions_per_s")))
    if "ridge_device" in b:
        t.add_row(f"ridge {b['ridge_device']['records']:,} x 20, wall s", f"{b['ridge_device']['wall_s']:.1f}",
                  f"{b['ridge_cpu']['wall_s']:.1f}" if "wall_s" in b["ridge_cpu"] else "-", "-")
    console.print(t)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bits", type=int, nargs="+", default=[1024, 2048])
    ap.add_argument("--aggregate", type=int, default=20_000_000, help="ciphertexts aggregated (default 20M)")
    ap.add_argument("--aggregate-large", type=int, default=None,
                    help="ciphertexts aggregated at n > 1024 (default: --aggregate; the 2 s target is n = 1024's)")
    ap.add_argument("--records", type=int, default=1_000_000, help="ridge records (0: skip)")
    ap.add_argument("--seconds", type=float, default=2.0, help="CPU all-cores measuring time")
    ap.add_argument("--quick", action="store_true", help="one device-filling wave per batch, smaller aggregation")
    ap.add_argument("--budget", type=float, default=600.0, help="seconds the GPU figures aim to fit (repeats scale)")
    ap.add_argument("--device", choices=("cuda", "cpu-twin"), default="cuda",
                    help="cpu-twin: the dry run (small sizes, the CPU twin, no GPU figure)")
    ap.add_argument("--out", type=Path, default=RESULTS / "paillier_gpu.json")
    args = ap.parse_args(argv)
    if min(args.aggregate, args.aggregate_large or 1, args.seconds, args.budget) <= 0 or args.records < 0:
        ap.error("--aggregate, --aggregate-large, --seconds and --budget must be positive, --records 0 or more")
    if args.quick:
        args.aggregate, args.records = min(args.aggregate, 2_000_000), min(args.records, 100_000)
    if args.device == "cpu-twin":
        args.aggregate, args.records, args.seconds = min(args.aggregate, TWIN_AGGREGATE), 0, min(args.seconds, 0.2)
        args.aggregate_large = min(args.aggregate_large or TWIN_AGGREGATE, TWIN_AGGREGATE)
        args.budget = min(args.budget, TWIN_BUDGET_S)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    console = Console()
    reason = gr.device_reason(args.device)
    if reason is not None and args.device == "cuda":
        console.print(escape(f"GPU unavailable: {reason}; no GPU figure is measured and nothing is written."))
        return 0 if twin_self_check(console) else 1
    if reason is not None:
        print(f"error: the CPU twin is unavailable: {reason}", file=sys.stderr)
        return 2
    run_gpu(args, console)
    console.print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
