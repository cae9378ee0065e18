"""Benchmark: Paillier encryption and decryption, ours against phe and IPCL-style, side by side.

Targets (issue 3), at n = 1024 and n = 2048, one core, equal exponent length (n/2 bits):
  * encryption, fastest option      >= 2x IPCL-style and >= 20x phe
  * encryption, constant-time default >= 1x IPCL-style
  * CRT decryption                  >= 15,000 / s / core at n = 1024
  * all cores, n = 1024 encryption  > 27,400 / s (QHCS1, one QAT DH8970, Zhou and Hua 2021)

All cases run in one process, interleaved round by round (see cryptoffload.bench), pinned to
one core; the all-cores row runs one pinned process per core at the same time.

    .venv/bin/python benchmarks/paillier.py [--seconds 0.5] [--rounds 3] [--bits 1024 2048]
    .venv/bin/python benchmarks/paillier.py --choose-window     # window sweep per backend

Writes benchmarks/results/paillier.json (or paillier_windows.json).
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from cryptoffload import bench
from cryptoffload.calibrate.paillier_cores import all_cores_encryption_rate
from cryptoffload.crypto import baselines, paillier as pl
from cryptoffload.crypto._native import core as native
from cryptoffload.machine import machine_info

RESULTS = Path(__file__).resolve().parent / "results"
QHCS1_OPS = 27_400.0


def encryption_cases(pk: pl.PublicKey, sk: pl.PrivateKey, bits: int) -> list[bench.Case]:
    small = 8 if bits >= 2048 else 24
    big = 256 if bits >= 2048 else 1024
    msgs_small = [secrets.randbelow(pk.n) for _ in range(small)]
    msgs_big = [secrets.randbelow(pk.n) for _ in range(big)]
    ppk, _ = baselines.phe_keys(pk, sk)
    cases = [
        bench.Case("phe", lambda: baselines.phe_encrypt_many(ppk, msgs_small), small),
        bench.Case("gmpy2 (ours, reference)", lambda: pk.encryptor("gmpy2").encrypt_raw(msgs_small), small),
    ]
    if native.ifma_available():
        cases.append(bench.Case("IPCL-style (8-lane IFMA modexp)",
                                lambda: baselines.ipcl_style_encrypt_many(pk, msgs_big[:128]), 128))
    if native.native_available():
        for ct in (True, False):
            e = pk.encryptor("gmp", ct)
            cases.append(bench.Case(f"gmp table {'CT' if ct else 'VT'} w={e.window}",
                                    lambda e=e: e.encrypt_raw(msgs_big), big))
    if native.ifma_available():
        for ct in (True, False):
            e = pk.encryptor("ifma", ct)
            cases.append(bench.Case(f"ifma table {'CT' if ct else 'VT'} w={e.window}",
                                    lambda e=e: e.encrypt_raw(msgs_big), big))
    # online half of offline/online: randomness precomputed, one product per ciphertext
    rs = pk.encryptor().randomness(big)
    n, n2 = pk.n, pk.nsquare
    cases.append(bench.Case("online (pool prefilled)",
                            lambda: [(1 + m * n) * r % n2 for m, r in zip(msgs_big, rs)], big))
    return cases


def decryption_cases(pk: pl.PublicKey, sk: pl.PrivateKey, bits: int) -> list[bench.Case]:
    count = 64 if bits >= 2048 else 256
    cts = [c.value for c in pk.encrypt_many([secrets.randbelow(pk.n) for _ in range(count)])]
    _, psk = baselines.phe_keys(pk, sk)
    cases = [bench.Case("phe decrypt", lambda: baselines.phe_decrypt_many(psk, cts[:16]), 16)]
    if native.native_available():
        cases.append(bench.Case("CRT decrypt gmp (powm_sec)", lambda: sk.raw_decrypt_many(cts, use_ifma=False), count))
    if native.ifma_available():
        cases.append(bench.Case("CRT decrypt ifma (8-lane)", lambda: sk.raw_decrypt_many(cts, use_ifma=True), count))
    return cases


def print_cases(console: Console, title: str, cases: list[bench.Case], baseline: str | None) -> None:
    t = Table(title=title)
    t.add_column("case")
    t.add_column("ops/s", justify="right")
    t.add_column("± (half-range)", justify="right")
    t.add_column(f"x {baseline}" if baseline else "", justify="right")
    base = next((c.median_rate for c in cases if c.name.startswith(baseline or "\0")), None)
    for c in cases:
        t.add_row(c.name, f"{c.median_rate:,.0f}", f"{100 * c.spread:.0f} %",
                  f"{c.median_rate / base:.2f}" if base else "")
    console.print(t)


def run_main(args: argparse.Namespace, console: Console) -> dict:
    info = machine_info()
    out: dict = {"machine": info, "seconds_per_round": args.seconds, "rounds": args.rounds,
                 "pinned_cpu": None, "sizes": {}}
    for bits in args.bits:
        pk, sk = pl.generate_keypair(bits, insecure_study_size=True)
        out["pinned_cpu"] = bench.pin_to_one_core()
        enc = bench.interleaved(encryption_cases(pk, sk, bits), args.seconds, args.rounds)
        dec = bench.interleaved(decryption_cases(pk, sk, bits), args.seconds, args.rounds)
        bench.unpin()
        print_cases(console, f"encryption, n = {bits} bits, one core", enc, "IPCL-style" if native.ifma_available() else "phe")
        print_cases(console, f"decryption, n = {bits} bits, one core", dec, "phe")
        rates = {c.name: c.median_rate for c in enc}
        table_rates = {k: v for k, v in rates.items() if " table " in k}
        fastest = max(table_rates.values()) if table_rates else rates["gmpy2 (ours, reference)"]
        ct_default = pk.encryptor("auto", True)
        ct_name = next((k for k in table_rates if k.startswith(ct_default.backend) and " CT " in k), None)
        ipcl = next((v for k, v in rates.items() if k.startswith("IPCL-style")), None)
        dec_rates = {c.name: c.median_rate for c in dec}
        block = {
            "encryption_ops": rates, "encryption_spread": {c.name: c.spread for c in enc},
            "decryption_ops": dec_rates, "decryption_spread": {c.name: c.spread for c in dec},
            "windows": {f"{b}-{'ct' if ct else 'vt'}": pl.default_window(bits, b, ct)
                        for b in ("gmp", "ifma") for ct in (True, False)},
            "table_bytes": {e.describe(): e.table_bytes for e in
                            [pk.encryptor(b, ct) for b in ("gmp", "ifma") for ct in (True, False)
                             if (b != "ifma" or native.ifma_available()) and native.native_available()]},
            "fastest_vs_phe": fastest / rates["phe"],
            "fastest_vs_ipcl_style": fastest / ipcl if ipcl else None,
            "constant_time_default_vs_ipcl_style": (rates[ct_name] / ipcl) if (ipcl and ct_name) else None,
            "best_crt_decrypt_ops": max(v for k, v in dec_rates.items() if k.startswith("CRT")) if len(dec_rates) > 1 else None,
        }
        if bits == 1024 and not args.no_all_cores:
            total, cores = all_cores_encryption_rate(pk, max(args.seconds * args.rounds, 1.0), constant_time=False,
                                                        batch=1024)
            block["all_cores_encryption_ops"] = total
            block["all_cores"] = cores
            block["all_cores_vs_qhcs1"] = total / QHCS1_OPS
        out["sizes"][str(bits)] = block
        t = Table(title=f"targets, n = {bits}")
        t.add_column("target")
        t.add_column("measured", justify="right")
        t.add_row("fastest / phe (>= 20)", f"{block['fastest_vs_phe']:.1f}")
        if ipcl:
            t.add_row("fastest / IPCL-style (>= 2)", f"{block['fastest_vs_ipcl_style']:.2f}")
            if block["constant_time_default_vs_ipcl_style"] is not None:
                t.add_row("constant-time default / IPCL-style (>= 1)", f"{block['constant_time_default_vs_ipcl_style']:.2f}")
        if block["best_crt_decrypt_ops"]:
            t.add_row("CRT decryption /s/core (>= 15,000 at 1024)", f"{block['best_crt_decrypt_ops']:,.0f}")
        if "all_cores_encryption_ops" in block:
            t.add_row(f"all {block['all_cores']} cores enc/s (> 27,400)", f"{block['all_cores_encryption_ops']:,.0f}")
        console.print(t)
    return out


def run_windows(args: argparse.Namespace, console: Console) -> dict:
    """Sweep window sizes per backend and lookup mode; the best fitting 256 MiB is the default."""
    out: dict = {"machine": machine_info(), "sizes": {}}
    bench.pin_to_one_core()
    for bits in args.bits:
        pk, _ = pl.generate_keypair(bits, insecure_study_size=True)
        msgs = [secrets.randbelow(pk.n) for _ in range(512)]
        cases: list[bench.Case] = []
        mem: dict[str, int] = {}
        backends = ["gmp"] + (["ifma"] if native.ifma_available() else [])
        for backend in backends:
            for ct in (True, False):
                for w in range(3, 13 if not ct else 10):
                    if pl.table_bytes_estimate(pk, backend, w) > pl.DEFAULT_MAX_TABLE_BYTES:
                        continue
                    e = pl.Encryptor(pk, backend, constant_time=ct, window=w)
                    name = f"{backend} {'CT' if ct else 'VT'} w={w}"
                    mem[name] = e.table_bytes
                    cases.append(bench.Case(name, lambda e=e: e.encrypt_raw(msgs), len(msgs)))
        bench.interleaved(cases, args.seconds, args.rounds)
        t = Table(title=f"window sweep, n = {bits}")
        for col in ("case", "enc/s", "table MiB"):
            t.add_column(col, justify="right")
        for c in cases:
            t.add_row(c.name, f"{c.median_rate:,.0f}", f"{mem[c.name] / 2**20:.1f}")
        console.print(t)
        best = {}
        for backend in backends:
            for ct in ("CT", "VT"):
                group = [c for c in cases if c.name.startswith(f"{backend} {ct} ")]
                top = max(group, key=lambda c: c.median_rate)
                best[f"{backend}-{ct.lower()}"] = {"window": int(top.name.split("w=")[1]), "ops": top.median_rate}
        out["sizes"][str(bits)] = {"rates": {c.name: c.median_rate for c in cases}, "table_bytes": mem, "best": best}
        console.print(f"best windows at n = {bits}: {best}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=0.5, help="seconds per case per round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--bits", type=int, nargs="+", default=[1024, 2048])
    ap.add_argument("--choose-window", action="store_true")
    ap.add_argument("--no-all-cores", action="store_true")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    console = Console()
    console.print(f"[dim]{machine_info()['cpu']} , {os.cpu_count()} cores; IFMA: {native.ifma_available()}[/]")
    t0 = time.perf_counter()
    data = run_windows(args, console) if args.choose_window else run_main(args, console)
    data["wall_seconds"] = time.perf_counter() - t0
    bench.save_results(data, args.out or RESULTS / ("paillier_windows.json" if args.choose_window else "paillier.json"),
                       console.print)


if __name__ == "__main__":
    sys.exit(main())
