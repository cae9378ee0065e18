"""Benchmark: Paillier encryption and decryption on every arithmetic path, beside phe, a gmpy2
fixed-base comb and OpenSSL's constant-time exponentiation, in one process on one core.

Targets (issue 34, on the AVX2 + ADX paths, i.e. a CPU without AVX512-IFMA; on an IFMA machine
the path is forced by name, which is what `COPL_DISABLE_IFMA=1` does to `auto`):
  * n = 1024 constant-time encryption >= 9,000/s on one core and >= 1.3x the gmpy2
    (variable-time) comb; n = 2048 >= 1,100/s (path adx)
  * CRT decryption >= 1.5x phe at n = 1024 and n = 2048 (path avx2: four ciphertexts at a time
    on AVX2, the rest of a batch on MULX/ADX; path adx, every ciphertext on MULX/ADX, beside it)
  * the IFMA path not slower than before (``--compare-core`` an earlier build of the core)

Every case runs in one process, pinned to one core, interleaved round by round (see
cryptoffload.bench); ratios are of medians measured side by side. The JSON records the CPU
(model, cpuid signature, flags), the path each case ran and the windows chosen on this CPU.

    .venv/bin/python benchmarks/paillier.py [--seconds 0.3] [--rounds 5] [--bits 1024 2048]
        [--compare-core PATH/_paillier.abi3.so]   # an earlier build, for before/after
    .venv/bin/python benchmarks/paillier.py --choose-window   # = cryptoffload calibrate paillier-window

Writes benchmarks/results/paillier.json (or paillier_windows.json).
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import time
from pathlib import Path

import gmpy2
from rich.console import Console
from rich.table import Table

from cryptoffload import bench
from cryptoffload.calibrate.paillier_cores import all_cores_encryption_rate
from cryptoffload.crypto import baselines, paillier as pl
from cryptoffload.crypto._native import core as native
from cryptoffload.crypto.paillier import windows
from cryptoffload.machine import machine_info

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paillier_baselines import EarlierCore, GmpyComb, OpensslConstTime, crt_decrypt  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
QHCS1_OPS = 27_400.0
PATHS = ("ifma", "adx", "gmp")


def our_paths(pk: pl.PublicKey) -> list[str]:
    """The table backends that run here for this key (forced by name, whatever auto picks)."""
    out = []
    for path in PATHS:
        try:
            if pl.resolve_backend(path, pk.nsquare.bit_length()) == path:
                out.append(path)
        except Exception:   # noqa: BLE001 - a path this CPU or key size lacks is simply not measured
            pass
    return out


def encryption_cases(pk: pl.PublicKey, sk: pl.PrivateKey, bits: int, ossl: OpensslConstTime,
                     earlier: EarlierCore | None) -> tuple[list[bench.Case], dict[str, str]]:
    """The cases and, per case, the path it ran."""
    small, big = (8, 128) if bits >= 2048 else (24, 512)
    msgs = [secrets.randbelow(pk.n) for _ in range(big)]
    exps = [pk.random_exponent() for _ in range(big)]
    n, n2 = pk.n, pk.nsquare
    ppk, _ = baselines.phe_keys(pk, sk)
    comb = GmpyComb(pk.hs, n2, pk.exp_bits)
    cases = [
        (bench.Case("phe", lambda: baselines.phe_encrypt_many(ppk, msgs[:small]), small), "python"),
        (bench.Case("gmpy2 comb w=8 (variable time)",
                    lambda: [(1 + m * n) * gmpy2.mpz(comb.pow(a)) % n2 for m, a in zip(msgs[:small * 4], exps)],
                    small * 4), "gmpy2"),
        (bench.Case("OpenSSL BN_mod_exp_mont_consttime",
                    lambda: [(1 + m * n) * ossl.powm(pk.hs, a, n2) % n2 for m, a in zip(msgs[:small], exps)],
                    small), "openssl"),
    ]
    if native.ifma_available() and native.mbx_kernel_bits(n2):
        cases.append((bench.Case("IPCL-style (8-lane IFMA modexp)",
                                 lambda: baselines.ipcl_style_encrypt_many(pk, msgs[:128]), 128), "ifma"))
    # the earlier core and this one through the same raw wrapper (bytes out, no Python ints),
    # so their ratio compares the cores and not the wrappers
    cores = [] if earlier is None else [("earlier core", earlier), ("this core", EarlierCore(native._paillier.__file__))]
    for path in our_paths(pk):
        for ct in (True, False):
            e = pl.Encryptor(pk, path, constant_time=ct)
            mode = f"{'CT' if ct else 'VT'} w={e.window}"
            cases.append((bench.Case(f"ours {path} {mode}", lambda e=e: e.encrypt_raw(msgs, exps), big), path))
            for label, core in cores:
                enc = core.table(pk.hs, n2, n, pk.exp_bits, e.window, ct, native.BACKEND_CODES[path])
                cases.append((bench.Case(f"{label} {path} {mode}", lambda enc=enc: enc(msgs, exps), big), path))
    return [c for c, _ in cases], {c.name: p for c, p in cases}


def decryption_cases(pk: pl.PublicKey, sk: pl.PrivateKey, bits: int, ossl: OpensslConstTime,
                     earlier: EarlierCore | None) -> tuple[list[bench.Case], dict[str, str]]:
    count = 64 if bits >= 2048 else 256
    cts = [c.value for c in pl.ENCRYPTION.encrypt_many(pk, [secrets.randbelow(pk.n) for _ in range(count)])]
    _, psk = baselines.phe_keys(pk, sk)
    gpow = lambda b, e, m: int(gmpy2.powmod(b, e, m))   # noqa: E731
    cases = [
        (bench.Case("phe", lambda: baselines.phe_decrypt_many(psk, cts[:16]), 16), "python"),
        (bench.Case("gmpy2 CRT (powmod, variable time)", lambda: crt_decrypt(cts[:16], sk.p, sk.q, gpow), 16), "gmpy2"),
        (bench.Case("OpenSSL CRT (consttime)", lambda: crt_decrypt(cts[:16], sk.p, sk.q, ossl.powm), 16), "openssl"),
    ]
    dec = native.CrtDecryptor(sk.p, sk.q)
    labels = {"ifma": "crypto_mb 8 lanes", "avx2": "4-lane AVX2, rest MULX/ADX", "adx": "MULX/ADX", "gmp": "mpz_powm_sec"}
    for path in ("ifma", "avx2", "adx", "gmp"):
        if path not in dec.paths():
            continue
        cases.append((bench.Case(f"ours {path} ({labels[path]})", lambda path=path: dec.decrypt(cts, path=path), count),
                      path))
        if earlier is not None and path != "avx2":   # the earlier core had no avx2 path
            d = earlier.decryptor(sk.p, sk.q, native.BACKEND_CODES[path])
            cases.append((bench.Case(f"earlier core {path}", lambda d=d: d(cts), count), path))
    return [c for c, _ in cases], {c.name: p for c, p in cases}


def print_cases(console: Console, title: str, cases: list[bench.Case], paths: dict[str, str], baseline: str) -> None:
    t = Table(title=title)
    for col in ("case", "path", "ops/s", "± (half-range)", f"x {baseline}"):
        t.add_column(col, justify="left" if col in ("case", "path") else "right")
    base = next(c.median_rate for c in cases if c.name.startswith(baseline))
    for c in cases:
        t.add_row(c.name, paths[c.name], f"{c.median_rate:,.0f}", f"{100 * c.spread:.0f} %", f"{c.median_rate / base:.2f}")
    console.print(t)


def _rate(rates: dict[str, float], prefix: str) -> float | None:
    return next((v for k, v in rates.items() if k.startswith(prefix)), None)


def targets(bits: int, enc: dict[str, float], dec: dict[str, float]) -> list[dict[str, object]]:
    """Issue 34's targets for this key size: (name, measured, goal, met)."""
    out: list[dict[str, object]] = []

    def add(name: str, value: float | None, goal: float) -> None:
        if value is not None:
            out.append({"target": name, "measured": value, "goal": goal, "met": value >= goal})
    adx_ct, comb, phe_dec = _rate(enc, "ours adx CT"), _rate(enc, "gmpy2 comb"), _rate(dec, "phe")
    if bits == 1024:
        add("adx CT encryptions/s (>= 9,000)", adx_ct, 9000.0)
        add("adx CT / gmpy2 comb (>= 1.3)", adx_ct / comb if adx_ct and comb else None, 1.3)
    if bits == 2048:
        add("adx CT encryptions/s (>= 1,100)", adx_ct, 1100.0)
    avx2_dec = _rate(dec, "ours avx2")   # the path a CPU without IFMA runs (auto, or COPL_DISABLE_IFMA=1)
    add("avx2 CRT decryption / phe (>= 1.5)", avx2_dec / phe_dec if avx2_dec and phe_dec else None, 1.5)
    for kind, rates in (("encryption CT", enc), ("encryption VT", enc), ("decryption", dec)):
        mode, mine = {"encryption CT": (" CT ", "this core"), "encryption VT": (" VT ", "this core"),
                      "decryption": ("", "ours")}[kind]
        now = next((v for k, v in rates.items() if k.startswith(f"{mine} ifma") and mode in k + " "), None)
        before = next((v for k, v in rates.items() if k.startswith("earlier core ifma") and mode in k + " "), None)
        add(f"ifma {kind}: this core / earlier core (>= 0.95, noise)", now / before if now and before else None, 0.95)
    return out


def run_size(bits: int, args: argparse.Namespace, console: Console, ossl: OpensslConstTime,
             earlier: EarlierCore | None) -> dict:
    pk, sk = pl.generate_keypair(bits, insecure_study_size=True)
    pinned = bench.pin_to_one_core()
    enc, enc_paths = encryption_cases(pk, sk, bits, ossl, earlier)
    dec, dec_paths = decryption_cases(pk, sk, bits, ossl, earlier)
    bench.interleaved(enc, args.seconds, args.rounds)
    bench.interleaved(dec, args.seconds, args.rounds)
    bench.unpin()
    print_cases(console, f"encryption, n = {bits} bits, one core", enc, enc_paths, "gmpy2 comb")
    print_cases(console, f"CRT decryption, n = {bits} bits, one core", dec, dec_paths, "phe")
    er, dr = {c.name: c.median_rate for c in enc}, {c.name: c.median_rate for c in dec}
    block = {
        "pinned_cpu": pinned, "encryption_ops": er, "encryption_spread": {c.name: c.spread for c in enc},
        "encryption_path": enc_paths, "decryption_ops": dr, "decryption_spread": {c.name: c.spread for c in dec},
        "decryption_path": dec_paths,
        "windows": {f"{p}-{'ct' if ct else 'vt'}": pl.default_window(bits, p, ct) for p in our_paths(pk) for ct in (True, False)},
        "targets": targets(bits, er, dr),
    }
    if bits == 1024 and args.all_cores:
        total, cores = all_cores_encryption_rate(pk, max(args.seconds * args.rounds, 1.0), constant_time=False, batch=1024)
        block.update(all_cores_encryption_ops=total, all_cores=cores, all_cores_vs_qhcs1=total / QHCS1_OPS)
    t = Table(title=f"targets, n = {bits}")
    for col in ("target", "measured", "met"):
        t.add_column(col)
    for row in block["targets"]:
        t.add_row(str(row["target"]), f"{row['measured']:,.2f}", "yes" if row["met"] else "NO")
    console.print(t)
    return block


def run_main(args: argparse.Namespace, console: Console) -> dict:
    ossl = OpensslConstTime()
    earlier = EarlierCore(str(args.compare_core)) if args.compare_core else None
    out: dict = {"machine": dict(machine_info(), cpu_signature=native.cpu_signature(), default_path=native.cpu_path()),
                 "env": {k: os.environ.get(k) for k in ("COPL_DISABLE_IFMA", "COPL_DISABLE_ADX")},
                 "openssl": ossl.version, "earlier_core": str(args.compare_core) if args.compare_core else None,
                 "date": time.strftime("%Y-%m-%d"), "seconds_per_round": args.seconds, "rounds": args.rounds,
                 "sizes": {}}
    for bits in args.bits:
        out["sizes"][str(bits)] = run_size(bits, args, console, ossl, earlier)
    return out


def run_windows(args: argparse.Namespace, console: Console) -> dict:
    """Measure the windows again for every backend that runs here (what `cryptoffload
    calibrate paillier-window` does) and cache the choices per CPU."""
    rows = windows.calibrate(args.bits, windows.available_backends(), seconds=args.seconds, rounds=args.rounds,
                             max_bytes=pl.DEFAULT_MAX_TABLE_BYTES)
    for row in rows:
        console.print(f"{row['bits']} {row['backend']} {'CT' if row['constant_time'] else 'VT'}: w = {row['window']}")
    return {"machine": dict(machine_info(), cpu_signature=native.cpu_signature()), "cpu_key": windows.cpu_key(),
            "choices": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=0.3, help="seconds per case per round")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--bits", type=int, nargs="+", default=[1024, 2048])
    ap.add_argument("--choose-window", action="store_true")
    ap.add_argument("--all-cores", action="store_true", help="also time n = 1024 encryption on every core")
    ap.add_argument("--compare-core", type=Path, default=None, help="an earlier build of _paillier (.so) to time beside")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    console = Console()
    console.print(f"[dim]{machine_info()['cpu']} ({native.cpu_signature()}), {os.cpu_count()} cores; "
                  f"default path {native.cpu_path()}; ADX kernels: {native.adx_available()}[/]")
    t0 = time.perf_counter()
    data = run_windows(args, console) if args.choose_window else run_main(args, console)
    data["wall_seconds"] = time.perf_counter() - t0
    bench.save_results(data, args.out or RESULTS / ("paillier_windows.json" if args.choose_window else "paillier.json"),
                       console.print)


if __name__ == "__main__":
    sys.exit(main())
