"""Benchmark: bootstrapping's parts on our RNS-CKKS CPU twin at N = 2^16, beside OpenFHE (issue 33).

Three sections, one JSON (``benchmarks/results/bootstrap_parts.json``, or ``--out``):

* ``keys`` (DERIVED from the prime chains, exact counts; one key MEASURED): the size of one
  key-switching key (a rotation key; relinearisation and the encapsulation's sparse_to_dense key
  are the same size) at N = 2^16 for two bootstrapping-depth chains and every ``dnum``: in memory
  (8-byte words, as the twin and the GPU hold them) and serialised (4-byte words), with log2(QP)
  against the 1747-bit bound (``CKKS_SECURITY_BITS``). Chains (our 31-bit words): ``composite``
  -- q0 60 bits + 21 levels of 58 bits (two primes each), 1,278 bits of Q, 44 primes, what a
  bootstrap with ~58-bit CoeffToSlot/EvalMod scales and 11 levels left after it needs; ``single``
  -- q0 60 + 30 levels of 30 bits (one prime each), 960 bits, 32 primes. The twin makes one
  rotation key of the composite chain at ``--key-dnum`` and its ``key_bytes()`` and serialised
  context are checked against the count.
* ``ops`` (MEASURED): hot ops at N = 2^16 on a 20-prime chain (q0 60 bits + 18 levels of 30
  bits: 600 bits of Q) for each ``--dnum``: a rotation (one key switch), a hoisted rotation (per
  step of 4), multiply + relinearise, rescale, mod_raise (under the dense secret, and with the
  sparse-secret encapsulation: level-0 switch + raise + switch back at the top), mul_const (real
  and complex) and add_const, at the top level; and the NTT per 64K-word row, the twin's CPU
  loop order beside the GPU's order compiled for the CPU (how the twin ran every kernel before this
  issue), and a rotation in that order too, and the numba kernel set's NTT. Median and minimum
  of ``--repeats`` rounds after one untimed call.
* ``openfhe`` (MEASURED, where ``openfhe`` imports: run this script with ``.venv-openfhe``):
  the same ops in OpenFHE 1.6.1 at N = 2^16 with its own 64-bit words, Q of 60 + 9 x 59 = 591
  bits (10 primes; OpenFHE chooses P itself) and ``num_large_digits`` = dnum: EvalRotate, a
  hoisted EvalFastRotation (per step of 4), EvalMult (with relinearisation) and Rescale, timed
  in the same rounds as ours (interleaved, so the machine's load hits both alike).

One pinned core, ``OMP_NUM_THREADS=1``. The machine is shared: the load average before and after
is recorded, and every ratio is taken within a round. Not security claims: the ops chain (600 + P
bits) is within the 128-bit bound; ``keys`` says per dnum whether QP is.

    OMP_NUM_THREADS=1 PYTHONPATH=src .venv-openfhe/bin/python benchmarks/bootstrap_parts.py [--repeats 5]
    PYTHONPATH=src .venv/bin/python benchmarks/bootstrap_parts.py --no-openfhe   # ours only
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from cryptoffload import bench as pin
from cryptoffload.crypto.ckks import CKKS_SECURITY_BITS, CkksParams, make_backend
from cryptoffload.crypto.ckks.gpu.arith import Arith
from cryptoffload.crypto.ckks.gpu.chain import prime_chain
from cryptoffload.crypto.ckks.gpu.dnum import SERIAL_WORD, key_bytes, params_for_dnum
from cryptoffload.crypto.ckks.gpu.launch import HostExecutor
from cryptoffload.crypto.ckks.timing import timed
from cryptoffload.errors import CryptoffloadError
from cryptoffload.io import write_json
from cryptoffload.machine import machine_info

RESULTS = Path(__file__).resolve().parent / "results"
N = 65536
CHAINS = {"composite": (60,) + (58,) * 21, "single": (60,) + (30,) * 30}
OPS_CHAIN = (60,) + (30,) * 18
OPENFHE_CHAIN = (60,) + (59,) * 9
HOISTED = [1, 2, 3, 4]


def key_table(dnums: list[int]) -> list[dict[str, Any]]:
    """One row per (chain, dnum): digits, special primes, log QP, the bound, key bytes."""
    rows = []
    bound = CKKS_SECURITY_BITS[N]
    for name, data in CHAINS.items():
        base = CkksParams(N, data + (60,), 30)
        for dnum in dnums:
            try:
                p = params_for_dnum(base, dnum)
            except CryptoffloadError as exc:
                rows.append({"chain": name, "dnum": dnum, "refused": str(exc)})
                continue
            chain = prime_chain(N, p.coeff_mod_bits)
            rows.append({"chain": name, "dnum": dnum, "digits": len(chain.digits()), "data_primes": len(chain.data),
                         "special_primes": len(chain.special), "log_q": sum(data), "log_qp": chain.total_bits,
                         "within_128_bit_bound": chain.total_bits <= bound, "key_bytes_memory": key_bytes(chain),
                         "key_bytes_serialised": key_bytes(chain, SERIAL_WORD)})
    return rows


def measured_key(dnum: int, say: Callable[[str], None]) -> dict[str, Any]:
    """One rotation key of the composite chain made by the twin: its counted and serialised size."""
    p = params_for_dnum(CkksParams(N, CHAINS["composite"] + (60,), 30), dnum)
    be = make_backend("gpu-twin", p, insecure_study=True)
    t0 = time.perf_counter()
    be.keygen([1], relin=False)
    gen = time.perf_counter() - t0
    memory = be.key_bytes()["galois:1"]
    with_key = len(be.public_context())
    be.keygen([], relin=False)
    without = len(be.public_context())
    say(f"key: dnum {dnum}, {memory / 1e6:.1f} MB in memory, made in {gen:.1f} s")
    return {"dnum": dnum, "key_bytes_memory": memory, "key_bytes_counted": key_bytes(be.chain),
            "serialised_bytes": with_key - without, "keygen_s": gen, "log_qp": be.chain.total_bits}


def _t(be: Any, fn: Callable[[], Any], per: int = 1) -> float:
    with timed(be) as t:
        fn()
    return t.seconds / per


def twin_ops(dnum: int) -> tuple[Any, dict[str, Callable[[], Any]]]:
    """The twin at N = 2^16 on the ops chain with ``dnum`` digits, keys made, and its timed ops."""
    be = make_backend("gpu-twin", params_for_dnum(CkksParams(N, OPS_CHAIN + (60,), 30), dnum), insecure_study=True)
    be.keygen(HOISTED, ephemeral_weight=32)
    x = np.random.default_rng(dnum).uniform(-1, 1, be.slots)
    ct = be.encrypt(x)
    z = be.encrypt_complex(x * (1 + 1j))
    low = be.encrypt(x, level=0, scale=2.0 ** 40)
    raw = make_backend("gpu-twin", be.params, insecure_study=True)
    raw.keygen([], relin=False)
    raw_low = raw.encrypt(x, level=0, scale=2.0 ** 40)
    ops = {"rotate": lambda: _t(be, lambda: be.rotate(ct, 1)),
           "rotate_hoisted": lambda: _t(be, lambda: be.rotate_many(ct, HOISTED), len(HOISTED)),
           "mul_relin": lambda: _t(be, lambda: be.relinearize(be.mul(ct, ct))),
           "rescale": lambda: _t(be, lambda: be.rescale(ct)),
           "mod_raise": lambda: _t(raw, lambda: raw.mod_raise(raw_low)),
           "mod_raise_encapsulated": lambda: _t(be, lambda: be.mod_raise(low)),
           "mul_const": lambda: _t(be, lambda: be.mul_const(ct, 0.37)),
           "mul_const_complex": lambda: _t(be, lambda: be.mul_const(z, 0.37 - 0.2j)),
           "add_const": lambda: _t(be, lambda: be.add_const(z, 0.5 + 1j))}
    return be, ops


def gpu_order_ops(be: Any) -> dict[str, Callable[[], Any]]:
    """The twin's hot loops in the GPU's order (kernels_host.cpp's ``*_gpu_order``: each block and
    thread the GPU would run, one after another -- how the twin ran every kernel before this
    issue) beside its CPU order: the NTT in ms per 64K-word row (forward and inverse of the top
    level's rows, averaged) and a whole rotation; and the NTT of the numba kernel set."""
    ar = be.scheme.ar
    rows = be.scheme.rows(be.params.levels)
    x = np.random.default_rng(0).integers(0, 2 ** 30, (len(rows), N)).astype(np.uint64) % be.scheme.ring.q[rows][:, None]
    gpu = HostExecutor()
    plain = gpu.kernel
    gpu.kernel = lambda name: plain(f"{name}_gpu_order")   # type: ignore[method-assign]
    ct = be.encrypt(x[0, : be.slots] / 2 ** 31)

    def run(executor: Any, fn: Callable[[], Any]) -> float:
        saved, ar.launcher.executor = ar.launcher.executor, executor
        try:
            t0 = time.perf_counter()
            fn()
            return time.perf_counter() - t0
        finally:
            ar.launcher.executor = saved

    def ntt(on: Any = ar) -> None:
        on.intt(on.ntt(x.copy(), rows), rows)

    cpu, per_row = ar.launcher.executor, 1e3 / len(rows) / 2
    out = {"ntt_ms_per_row_cpu_order": lambda: run(cpu, ntt) * per_row,
           "ntt_ms_per_row_gpu_order": lambda: run(gpu, ntt) * per_row,
           "rotate_gpu_order": lambda: run(gpu, lambda: be.rotate(ct, 1))}
    try:                 # numba is not in OpenFHE's Python 3.10 environment
        numba = Arith(be.scheme.ring, np, "numba")
    except ImportError:
        return out
    out["ntt_ms_per_row_numba"] = lambda: run(cpu, lambda: ntt(numba)) * per_row
    return out


def openfhe_ops(dnum: int) -> tuple[Any, dict[str, Callable[[], Any]]]:
    """OpenFHE at N = 2^16, Q = 60 + 9 x 59 bits, ``num_large_digits = dnum``, and its timed ops."""
    be = make_backend("openfhe", CkksParams(N, OPENFHE_CHAIN + (60,), 59), num_large_digits=dnum)
    be.keygen(HOISTED)
    cc = be.crypto_context
    x = np.random.default_rng(dnum).uniform(-1, 1, be.slots)
    ct = be.encrypt(x)
    raw = ct.raw
    ops = {"rotate": lambda: _t(be, lambda: be.rotate(ct, 1)),
           "rotate_hoisted": lambda: _t(be, lambda: be.rotate_many(ct, HOISTED), len(HOISTED)),
           "mul_relin": lambda: _t(be, lambda: cc.EvalMult(raw, raw)),
           "rescale": lambda: _t(be, lambda: cc.Rescale(raw)),
           "mul_const": lambda: _t(be, lambda: cc.EvalMult(raw, 0.37))}
    return be, ops


def rounds(setups: dict[str, dict[str, Callable[[], Any]]], repeats: int,
           say: Callable[[str], None]) -> dict[str, dict[str, dict[str, float]]]:
    """Every op of every setup once per round (one untimed round first); median and minimum."""
    for ops in setups.values():
        for fn in ops.values():
            fn()
    got: dict[str, dict[str, list[float]]] = {k: {op: [] for op in ops} for k, ops in setups.items()}
    for r in range(repeats):
        for key, ops in setups.items():
            for op, fn in ops.items():
                got[key][op].append(fn())
        say(f"round {r + 1}/{repeats} done (load average {os.getloadavg()[0]:.1f})")
    return {k: {op: {"median": statistics.median(v), "min": min(v)} for op, v in ops.items()} for k, ops in got.items()}


def ratios(ops: dict[str, dict[str, dict[str, float]]], dnums: list[int]) -> dict[str, dict[str, float]]:
    """Ours over OpenFHE's, per op present in both, median and minimum, per dnum."""
    out: dict[str, dict[str, float]] = {}
    for d in dnums:
        ours, theirs = ops.get(f"twin dnum={d}"), ops.get(f"openfhe dnum={d}")
        if ours is None or theirs is None:
            continue
        for op in theirs:
            if op in ours:
                out.setdefault(f"dnum={d}", {})[op] = ours[op]["median"] / theirs[op]["median"]
    return out


def print_tables(out: dict[str, Any]) -> None:
    print(f"\nkey-switching key at N = {N} (one rotation key), bound {CKKS_SECURITY_BITS[N]} bits")
    print(f"{'chain':10} {'dnum':>4} {'P primes':>8} {'log QP':>7} {'ok':>3} {'MB mem':>8} {'MB ser':>8}")
    for r in out["keys"]:
        if "refused" not in r:
            print(f"{r['chain']:10} {r['dnum']:>4} {r['special_primes']:>8} {r['log_qp']:>7} "
                  f"{'y' if r['within_128_bit_bound'] else 'n':>3} {r['key_bytes_memory'] / 1e6:>8.1f} "
                  f"{r['key_bytes_serialised'] / 1e6:>8.1f}")
    print("\nops at N = 65536, seconds (median; ms per row for the NTT)")
    for key, ops in out["ops"].items():
        print(f"  {key}")
        for op, v in ops.items():
            print(f"    {op:28} {v['median']:10.4f}  (min {v['min']:.4f})")
    for d, r in out.get("ratio_to_openfhe", {}).items():
        print(f"  ours / OpenFHE at {d}: " + ", ".join(f"{op} {v:.2f}x" for op, v in r.items()))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--dnum", default="1,2,3,4", help="comma-separated dnum values for the ops")
    ap.add_argument("--key-dnum", type=int, default=3, help="dnum of the one key the twin makes (0: none)")
    ap.add_argument("--no-openfhe", action="store_true")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    args.dnums = [int(d) for d in args.dnum.split(",") if d]
    if args.repeats < 1 or not args.dnums or min(args.dnums) < 1:
        ap.error("--repeats and every --dnum must be 1 or more")
    return args


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    out: dict[str, Any] = {"benchmark": "bootstrap_parts", "issue": 33, "machine": machine_info(),
                           "pinned_cpu": pin.pin_to_one_core(), "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
                           "load_average_before": os.getloadavg(), "ring_dim": N,
                           "chains": {k: list(v) for k, v in CHAINS.items()}, "ops_chain": list(OPS_CHAIN),
                           "openfhe_chain": list(OPENFHE_CHAIN), "repeats": args.repeats,
                           "provenance": {"keys": "derived (prime chains)", "key_measured": "measured",
                                          "ops": "measured", "openfhe": "measured"}}
    out["keys"] = key_table(sorted(set(args.dnums) | {1, 2, 3, 4, 5, 6, 8, 11, 22, 44}))
    if args.key_dnum:
        out["key_measured"] = measured_key(args.key_dnum, say)
    setups: dict[str, dict[str, Callable[[], Any]]] = {}
    keep: list[Any] = []
    for d in args.dnums:
        be, ops = twin_ops(d)
        keep.append(be)
        setups[f"twin dnum={d}"] = {**ops, **(gpu_order_ops(be) if d == args.dnums[0] else {})}
        if not args.no_openfhe:
            try:
                ofhe, oops = openfhe_ops(d)
            except CryptoffloadError as exc:
                out["openfhe_unavailable"] = str(exc)
            else:
                keep.append(ofhe)
                setups[f"openfhe dnum={d}"] = oops
        say(f"set up dnum {d}")
    out["ops"] = rounds(setups, args.repeats, say)
    out["ratio_to_openfhe"] = ratios(out["ops"], args.dnums)
    out["load_average_after"] = os.getloadavg()
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    say = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    path = args.out or RESULTS / "bootstrap_parts.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        out = run(args, say)
    except CryptoffloadError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print_tables(out)
    print(f"wrote {write_json(path, out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
