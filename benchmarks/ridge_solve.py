"""The ridge solve's masking and the per-record pipeline's cost on each arithmetic path, for
benchmarks/ridge.py (``--solve``, ``--pipeline``).

Masked solve (issue 34): the platform's Enc(A R), Enc(b + A r) at d = 20 with a 2048-bit solve
key (8,400 powers modulo a 4096-bit n^2, secret exponents), by the old route (every power
exponentiated alone: crypto_mb's 8-lane IFMA batch on the IFMA path, GMP's ``mpz_powm_sec`` on
the AVX2 + ADX path) and by the multi-exponentiation route (``native.multi_powm`` on the ADX
kernel, the same code on both paths; on GMP's products where ADX is hidden), on 1 and 2
worker threads. The cases run interleaved round by round; each records its wall clock and
the CPU seconds of this process (all threads), since on a shared machine the wall clock of a
2-thread case measures the neighbours as much as the code. All cases use the same R and r and
must give the same products.

Pipeline: the per-record upload (encode + pack + encrypt 20 plaintexts per record under a
1024-bit key, constant time, then the column products of aggregation) timed per path in CPU
seconds on one thread, scaled to 1,000,000 records on two cores; and the study's quick mode
(10,000 records on 2 Dask workers) per path in fresh processes, whose own extrapolation is
wall-clock and so carries the machine's load.
"""

from __future__ import annotations

import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from cryptoffload.apps.ridge import RidgeParams
from cryptoffload.apps.ridge.modular import solve_mod
from cryptoffload.apps.ridge.powm import ROUTES, products_of_powers
from cryptoffload.apps.ridge.proofs import Solution, solution_proof, verify_solution
from cryptoffload.apps.ridge.protocol import Provider, native_column_products
from cryptoffload.crypto._native import core as native
from cryptoffload.crypto.paillier import ENCRYPTION, PrivateKey, PublicKey, generate_keypair
from cryptoffload.studies import ridge as st
from cryptoffload.workloads.ridge_data import algorithm1_y_bound, generate

#: path name -> the environment that selects it on a CPU that has IFMA
PATH_ENV = {"ifma": {}, "adx": {"COPL_DISABLE_IFMA": "1"}, "gmp": {"COPL_DISABLE_IFMA": "1", "COPL_DISABLE_ADX": "1"}}
PAPER_SOLVE_S = st.PAPER_PHASES_S["solve"]
#: the parts of benchmarks/results/ridge.json these sections write
SECTIONS = ("masked_solve", "pipeline_per_path")
D = 20


@contextmanager
def on_path(path: str) -> Iterator[None]:
    """This process's environment set to run ``path`` (the core reads it at every call)."""
    saved = {k: os.environ.get(k) for k in ("COPL_DISABLE_IFMA", "COPL_DISABLE_ADX")}
    for k in saved:
        os.environ.pop(k, None)
    os.environ.update(PATH_ENV[path])
    try:
        yield
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None)
            if v is not None:
                os.environ[k] = v


def path_runs(path: str) -> bool:
    """True when this CPU has the path (ifma: IFMA; adx: the ADX kernels; gmp: always)."""
    with on_path(path):
        return native.cpu_path() == path


@dataclass
class SolveCase:
    """One way of computing the masking: ``rows`` of the d rows of A (scaled to d)."""

    name: str
    path: str
    route: str
    workers: int
    rows: int
    kernel: str = ""
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    load: list[float] = field(default_factory=list)  # the 1-minute load average after each round

    def scaled(self, values: list[float]) -> float:
        return statistics.median(values) * D / self.rows

    def record(self) -> dict[str, Any]:
        wall, cpu = self.scaled(self.wall), self.scaled(self.cpu)
        return {"case": self.name, "path": self.path, "route": self.route, "kernel": self.kernel,
                "workers": self.workers, "rows_timed": self.rows, "scaled_from_rows": self.rows != D,
                "wall_s": wall, "wall_best_s": min(self.wall) * D / self.rows, "cpu_s": cpu,
                "cpu_s_per_worker": cpu / self.workers,
                "wall_rounds_s": [w * D / self.rows for w in self.wall],
                "cpu_rounds_s": [c * D / self.rows for c in self.cpu], "load_rounds": self.load}


def solve_cases(paths: list[str], old_gmp_rows: int) -> list[SolveCase]:
    """Old route and multi-exponentiation on each path, on 1 and 2 workers. The GMP batch (111 s
    on one thread) times ``old_gmp_rows`` of the 20 rows and is scaled (the rows cost the same)."""
    cases = []
    for path in paths:
        old_rows = D if path == "ifma" else old_gmp_rows
        for workers in (1, 2):
            if path != "gmp":
                cases.append(SolveCase(f"old route ({path} path), {workers} worker(s)", path, "batch", workers, old_rows))
            cases.append(SolveCase(f"multi-exp ({path} path), {workers} worker(s)", path, "multiexp", workers, D))
    return cases


def masking_inputs(pk: PublicKey) -> tuple[list[list[int]], list[list[int]]]:
    """Enc(A) of a random d x d A (the bases) and the exponent rows: the columns of a random R,
    then r (invertibility of R does not change the cost)."""
    cts = ENCRYPTION.encryptor(pk).encrypt_raw([secrets.randbelow(pk.n) for _ in range(D * D)])
    A = [cts[i * D:(i + 1) * D] for i in range(D)]
    R = [[secrets.randbelow(pk.n) for _ in range(D)] for _ in range(D)]
    r = [secrets.randbelow(pk.n) for _ in range(D)]
    return A, [[R[j][k] for j in range(D)] for k in range(D)] + [r]


def run_solve_rounds(cases: list[SolveCase], A: list[list[int]], exps: list[list[int]], pk: PublicKey, rounds: int,
                     say: Callable[[str], None]) -> tuple[bool, list[list[int]]]:
    """Every case once per round, the order rotated each round. Returns whether every case gave
    the same products (on the rows both computed) and the products of all d rows."""
    want: list[list[int]] = []
    same = True
    for rnd in range(rounds):
        order = cases[rnd % len(cases):] + cases[:rnd % len(cases)]
        for case in order:
            with on_path(case.path):
                w0, c0 = time.perf_counter(), time.process_time()
                out, case.kernel = products_of_powers(A[:case.rows], exps, pk.nsquare, pk.n.bit_length(),
                                                      case.workers, case.route)
                case.wall.append(time.perf_counter() - w0)
                case.cpu.append(time.process_time() - c0)
            common = min(len(out), len(want))
            same = same and out[:common] == want[:common]
            want = out if len(out) > len(want) else want
            case.load.append(os.getloadavg()[0])
            say(f"round {rnd + 1}/{rounds}: {case.name}: {case.wall[-1]:.1f} s wall, {case.cpu[-1]:.1f} s CPU "
                f"({case.rows} rows), load {case.load[-1]:.1f}")
    return same, want


def solve_section(paths: list[str], rounds: int, old_gmp_rows: int, say: Callable[[str], None],
                  key_bits: int = 2048) -> dict:
    """The masked-solve comparison, with ratios of medians and the targets judged, and the
    proof's costs (a ``key_bits`` below 2048 is for the benchmark's own test)."""
    pk, sk = generate_keypair(key_bits, insecure_study_size=key_bits < 2048)
    cases = solve_cases(paths, old_gmp_rows)
    load_before = os.getloadavg()
    A, exps = masking_inputs(pk)
    same, masked = run_solve_rounds(cases, A, exps, pk, rounds, say)
    proofs = proof_costs(paths, pk, sk, masked, say)
    records = [c.record() for c in cases]
    by = {(r["path"], r["route"], r["workers"]): r for r in records}
    ratios = {}
    for (path, route, workers), rec in by.items():
        old = by.get((path, "batch", workers))
        if route == "multiexp" and old is not None:
            ratios[f"{path}, {workers} worker(s): old / multi-exp"] = {
                "wall": old["wall_s"] / rec["wall_s"], "cpu": old["cpu_s"] / rec["cpu_s"]}
    adx2 = by.get(("adx", "multiexp", 2))
    return {"d": D, "solve_key_bits": pk.bits, "nsquare_bits": pk.nsquare.bit_length(), "rounds": rounds,
            "routes_table": dict(ROUTES), "same_products": same, "cases": records, "ratios": ratios,
            "proof_one_worker": proofs, "paper_solve_s": PAPER_SOLVE_S, "paper": st.PAPER,
            "load_average_before": list(load_before), "load_average_after": list(os.getloadavg()),
            "target_adx_2_workers_s": 12.0,
            "target_met_wall": None if adx2 is None else adx2["wall_s"] <= 12.0,
            "target_met_best_wall": None if adx2 is None else adx2["wall_best_s"] <= 12.0,
            "target_met_cpu_per_worker": None if adx2 is None else adx2["cpu_s_per_worker"] <= 12.0}


def proof_costs(paths: list[str], pk: PublicKey, sk: PrivateKey, masked: list[list[int]],
                say: Callable[[str], None]) -> dict[str, dict[str, float]]:
    """Per path, one worker, on the masked system the rounds computed: the CSP's solve mod n
    and proof (d products of d powers mod n; its decryption not included) and the buyer's
    check (d products of d powers mod n^2), wall and CPU seconds; the check must pass."""
    AR, c = [row[:D] for row in masked], [row[D] for row in masked]
    plain = sk.raw_decrypt_many([v for row in AR for v in row] + c)
    out = {}
    for path in paths:
        with on_path(path):
            w0, c0 = time.perf_counter(), time.process_time()
            w = solve_mod([plain[i * D:(i + 1) * D] for i in range(D)], plain[D * D:], pk.n)
            proof = solution_proof(sk, AR, c, w)
            w1, c1 = time.perf_counter(), time.process_time()
            verify_solution(pk, AR, c, Solution(w, proof))
            w2, c2 = time.perf_counter(), time.process_time()
        out[path] = {"csp_solve_and_proof_wall_s": w1 - w0, "csp_solve_and_proof_cpu_s": c1 - c0,
                     "buyer_check_wall_s": w2 - w1, "buyer_check_cpu_s": c2 - c1}
        say(f"proof on {path}: CSP solve mod n + proof {c1 - c0:.2f} s CPU, buyer's check {c2 - c1:.2f} s CPU")
    return out


def record_cost(pk: PublicKey, path: str, records: int) -> tuple[float, float]:
    """CPU seconds per record on one thread: (encode + pack + encrypt, column products)."""
    data = generate(records, D, seed=3)
    params = RidgeParams(d=D, max_records=st.PAPER_RECORDS, x_bound=1.0, y_bound=algorithm1_y_bound(D))
    with on_path(path):
        prov = Provider(params, pk)
        prov.record_upload(data.X[:8], data.y[:8])  # the table, built once per key and path
        c0 = time.process_time()
        upload = prov.record_upload(data.X, data.y)
        c1 = time.process_time()
        native_column_products(upload.ciphertexts, records, prov.plaintexts, pk.nsquare)
        c2 = time.process_time()
    return (c1 - c0) / records, (c2 - c1) / records


def pipeline_cpu_section(paths: list[str], rounds: int, records: int, say: Callable[[str], None]) -> dict:
    """Per-record upload cost per path (CPU seconds, one thread, interleaved rounds, medians),
    scaled to 1,000,000 records on two cores."""
    pk, _ = generate_keypair(1024, insecure_study_size=True)
    samples: dict[str, list[tuple[float, float]]] = {p: [] for p in paths}
    for rnd in range(rounds):
        for path in paths[rnd % len(paths):] + paths[:rnd % len(paths)]:
            samples[path].append(record_cost(pk, path, records))
            say(f"round {rnd + 1}/{rounds}: per-record upload on {path}: "
                f"{samples[path][-1][0] * 1e3:.2f} ms + {samples[path][-1][1] * 1e3:.3f} ms CPU per record")
    out = {}
    for path, vals in samples.items():
        enc = statistics.median(v[0] for v in vals)
        agg = statistics.median(v[1] for v in vals)
        out[path] = {"encode_encrypt_cpu_s_per_record": enc, "aggregate_cpu_s_per_record": agg,
                     "records_per_round": records, "rounds": rounds,
                     "pipeline_at_1m_two_cores_s": (enc + agg) * st.PAPER_RECORDS / 2}
    return out


def quick_study(path: str, out_dir: Path) -> dict:
    """The study's quick mode in a fresh process on ``path`` (its Dask workers inherit the
    environment): its phase rows at 1,000,000 records and its wall time."""
    env = dict(os.environ)
    for k in ("COPL_DISABLE_IFMA", "COPL_DISABLE_ADX"):
        env.pop(k, None)
    env.update(PATH_ENV[path])
    cmd = [sys.executable, "-c", "import sys; from cryptoffload.cli import main; sys.exit(main())",
           "study", "ridge", "--quick", "--no-gpu", "--out", str(out_dir)]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    res = json.loads((out_dir / "result.json").read_text(encoding="utf-8"))
    table = res["tables"]["table2_phases"]
    cols = table["columns"]
    rows = {row[0]: dict(zip(cols, row)) for row in table["rows"]}
    return {"study_wall_s": wall, "records": res["extra"]["config"]["records"],
            "timings": res["extra"]["timings"], "total_at_1m_s": res["extra"]["total_at_1m_s"],
            "phases_at_1m_s": {k: v.get("time_s_at_1m_records") for k, v in rows.items()},
            "load_average_after": list(os.getloadavg())}


def quick_study_section(paths: list[str], rounds: int, say: Callable[[str], None]) -> dict:
    """The quick study per path, interleaved; medians of its 1,000,000-record total."""
    runs: dict[str, list[dict]] = {p: [] for p in paths}
    with tempfile.TemporaryDirectory() as tmp:
        for rnd in range(rounds):
            for path in paths[rnd % len(paths):] + paths[:rnd % len(paths)]:
                run = quick_study(path, Path(tmp) / f"{path}-{rnd}")
                runs[path].append(run)
                say(f"round {rnd + 1}/{rounds}: quick study on {path}: total at 1,000,000 records "
                    f"{run['total_at_1m_s']:,.0f} s (study {run['study_wall_s']:.0f} s, load {os.getloadavg()[0]:.1f})")
    return {p: {"total_at_1m_s": statistics.median(r["total_at_1m_s"] for r in rs), "runs": rs}
            for p, rs in runs.items()}
