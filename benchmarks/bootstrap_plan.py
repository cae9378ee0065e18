"""Benchmark: the bootstrap split our planner chooses against OpenFHE's default, on OpenFHE itself
(issue 33, phase 2b).

For each ring size N (``--rings``):

1. MEASURED: OpenFHE's per-op costs at levels across the modulus chain, as a bootstrap's stages
   and EvalMod spend them (one pinned core, interleaved rounds), written as a
   per-level op-cost profile ``benchmarks/results/openfhe_bootstrap_n<N>.toml`` (the planner's
   input; a copy ships as ``cryptoffload/profiles/openfhe_bootstrap_n<N>.toml``):
   ``rotate_s`` = ModDown + ModUp + extended rotation (a Horner giant step), ``hoisted_rotate_s``
   = one ``EvalFastRotationExt``, ``pmul_s`` = ``EvalMult`` (ct x pt) x (limbs + |P|) / limbs
   (the stage multiplies in Q*P), ``add_s`` = an addition in Q*P, ``rescale_s``, ``mul_s`` =
   ``EvalMult`` (ct x ct, relinearised) + ``Rescale``.
2. PREDICTED (simulated): ``cryptoffload plan bootstrap --profile <that profile> --json``, run
   with ``--planner-python`` (the package's own Python, 3.11+; OpenFHE imports on 3.10 only
   here), chooses the level budget and ``dim1`` for the same ring, modulus and slots, and
   prices OpenFHE's default (level budget (5, 4), ``dim1`` (0, 0)) beside it.
3. MEASURED: both plans run on OpenFHE, interleaved on one core: two crypto contexts of the
   same parameters (ring, Q: 60 + 25 x 59 bits, ``num_large_digits`` = 3, uniform ternary
   secret, FIXEDMANUAL, full packing), one set up with the default, one with the planner's
   plan handed to ``EvalBootstrapSetup``; every round bootstraps one fresh ciphertext in each,
   the order alternating. Seconds per bootstrap, wall clock and the worker's CPU time (a
   neighbour on the shared machine that takes the core away inflates the first, not the
   second): medians, and the medians of the per-round ratios default / planner, precision in bits (-log2 of the largest and of the mean
   absolute error over all slots), setup and key generation time, rotation keys (and whether
   ``workloads/bsgs.py``'s stage structure needs exactly those), the levels left after the
   bootstrap (checked against the model's depth rule), and the load average per round.

INSECURE STUDY SETTING: Q*P of about 1,535 + |P| bits is far above what 128-bit security allows
below N = 2^16 (``HEStd_NotSet``); this is a timing study, never use these parameters for data.

    OMP_NUM_THREADS=1 PYTHONPATH=src .venv-openfhe/bin/python benchmarks/bootstrap_plan.py \\
        --planner-python .venv/bin/python [--rings 4096,8192] [--rounds 9] [--quick]

Writes ``benchmarks/results/bootstrap_plan.json`` (``--out``) and the profiles beside it.

``--library ours`` (issue 33: the planner's split "on both libraries"): the same planner, run in
this process (Python 3.11+) on the per-level profile shipped for each ring (the OpenFHE op costs
measured above: the planner has no per-level profile of our library), chooses the plan for the
depth those OpenFHE runs had (25 levels, 2 left after), and three plans run on OUR RNS-CKKS
backend (``gpu-twin``, one pinned core) at that ring: the planner's, OpenFHE's default (level
budget (5, 4), the ``dim1`` OpenFHE resolves, as the planner prices it) and ours
(``BootstrapPlan()``: (3, 3), our default baby steps). Our chain: a 60-bit q_0, 25 levels of 59
bits and a 60-bit special modulus, dnum 3, uniform ternary secret with the sparse-secret
encapsulation for the mod-raise (weight 32), full slots, INSECURE (``insecure_study``) below
N = 2^16. Every round bootstraps one fresh input (real, uniform in [-1, 1], at level 1) with each
plan, the order rotating; seconds (wall and the process's CPU time), precision (bits, -log2 of
the mean and largest error), levels left, and the per-round ratios over the planner's plan.

    flock -x /work/notes/cpu.lock env PYTHONPATH=src .venv/bin/python benchmarks/bootstrap_plan.py \
        --library ours [--rings 4096] [--rounds 7]

writes ``benchmarks/results/bootstrap_plan_ours.json`` (``--out``).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from cryptoffload import bench as pin
from cryptoffload.crypto.ckks import CkksParams, make_backend
from cryptoffload.crypto.ckks.bootstrap.plan import BootstrapPlan
from cryptoffload.crypto.ckks.openfhe import OPENFHE_PIN, openfhe_import_error
from cryptoffload.machine import machine_info
from cryptoffload.workloads.bsgs import bootstrap_stages

RESULTS = Path(__file__).resolve().parent / "results"
SRC = Path(__file__).resolve().parents[1] / "src"
DNUM = 3
LEVELS_AFTER = 2
DEFAULT = BootstrapPlan((5, 4), (0, 0))
BATCH = 8    # calls per timing; results kept alive, as a stage's baby steps are
SECURITY = ("INSECURE study setting: Q = 60 + 25 x 59 bits (plus OpenFHE's P) at N <= 2^16 is above the 128-bit "
            "bound, HEStd_NotSet; timings only, never use these parameters for data")


def params(n: int) -> CkksParams:
    """Two levels left after bootstrapping (60-bit q0 and special prime, 59-bit scale)."""
    return CkksParams(n, (60, 59, 59, 60), 59)


def make(n: int):
    """An OpenFHE backend whose modulus holds OpenFHE's default bootstrap plus LEVELS_AFTER:
    every plan the planner may choose needs no more (it is asked for this depth)."""
    b = make_backend("openfhe", params(n), insecure_study=True, num_large_digits=DNUM,
                     bootstrap_level_budget=DEFAULT.level_budget)
    b.keygen(rotations=[])
    return b


def setup_plan(b, plan: BootstrapPlan) -> dict[str, float]:
    """Hand ``plan`` to the OpenFHE adapter's current ``bootstrap_setup(level_budget, dim1)``
    (the one place this benchmark calls it; the adapter will take a BootstrapPlan itself)."""
    if plan.slots not in (0, b.slots):
        raise SystemExit(f"bootstrap_plan: the OpenFHE adapter bootstraps full packing only, the plan has {plan.slots}")
    return b.bootstrap_setup(plan.level_budget, plan.dim1)


# ---- 1. per-level op costs -------------------------------------------------------------------
def p_limbs(b) -> int:
    """|P|: RNS limbs of the key-switching modulus, from an extended ciphertext's size."""
    import openfhe as fhe  # noqa: PLC0415
    cc = b.crypto_context
    ct = b.encrypt(np.zeros(b.slots), level=b.depth).raw
    ratio = len(fhe.Serialize(cc.KeySwitchExt(ct, True), fhe.BINARY)) / len(fhe.Serialize(ct, fhe.BINARY))
    return int(round(ratio * (b.depth + 1))) - (b.depth + 1)


def _ops(b, lv: int, fx: dict, step: int):
    """(name, prepare, call) of every op timed at level ``lv`` (rotations by ``step``, a step
    the bootstrap's keys hold)."""
    cc = b.crypto_context
    ct, pt, digits, ext = fx[lv]
    yield "precompute", None, lambda st: cc.EvalFastRotationPrecompute(ct)
    yield "fast_rotation_ext", None, lambda st: cc.EvalFastRotationExt(ct, step, digits, True)
    yield "mod_down", None, lambda st: cc.KeySwitchDown(ext)
    yield "pmul", None, lambda st: cc.EvalMult(ct, pt)
    yield "add_ext", lambda: cc.KeySwitchExt(ct, True), lambda st: cc.EvalAddInPlace(st, ext)
    yield "mult", None, lambda st: cc.EvalMult(ct, ct)
    prods = lambda: iter([cc.EvalMult(ct, pt) for _ in range(BATCH)])  # noqa: E731
    yield "rescale", prods, lambda st: cc.RescaleInPlace(next(st))


def op_costs(b, levels: list[int], reps: int, step: int) -> dict[str, dict[int, dict[str, float]]]:
    """CPU seconds per call of each op at each level (the process's CPU time: a neighbour that
    takes the core away does not count, as wall time would), the minimum and the median over
    ``reps`` rounds; levels and ops interleaved round by round (one warm-up round dropped), so a
    slow spell of the shared machine hits all alike. The profile takes the minimum: the
    least-disturbed batch is the op's own cost (caches shared with a neighbour still slow it),
    and the planner ranks plans by the ops' relative costs, which a neighbour's burst distorts."""
    cc = b.crypto_context
    x = np.linspace(-0.5, 0.5, b.slots)
    fx = {}
    for lv in levels:
        ct = b.encrypt(x, level=lv).raw
        fx[lv] = (ct, b.encode(x, level=lv).raw, cc.EvalFastRotationPrecompute(ct), cc.KeySwitchExt(ct, True))
    times: dict[int, dict[str, list[float]]] = {lv: {} for lv in levels}
    for r in range(reps + 1):
        for lv in levels:
            for name, prepare, call in _ops(b, lv, fx, step):
                state = prepare() if prepare else None
                keep = []
                t = time.process_time()
                for _ in range(BATCH):
                    keep.append(call(state))
                dt = (time.process_time() - t) / BATCH
                del keep, state
                if r:
                    times[lv].setdefault(name, []).append(dt)
    return {"min": {lv: {k: min(v) for k, v in t.items()} for lv, t in times.items()},
            "median": {lv: {k: statistics.median(v) for k, v in t.items()} for lv, t in times.items()}}


def profile_levels(raw: dict[int, dict[str, float]], k_p: int) -> dict[int, dict[str, float]]:
    """The planner's op costs (bootstrap_costs.OPS) from the OpenFHE calls timed."""
    out = {}
    for lv, c in raw.items():
        out[lv] = {"rotate_s": c["mod_down"] + c["precompute"] + c["fast_rotation_ext"],
                   "hoisted_rotate_s": c["fast_rotation_ext"], "pmul_s": c["pmul"] * (lv + 1 + k_p) / (lv + 1),
                   "add_s": c["add_ext"], "rescale_s": c["rescale"], "mul_s": c["mult"] + c["rescale"]}
    return out


SOURCES = {
    "rotate_s": "a Horner giant step: KeySwitchDown + EvalFastRotationPrecompute + EvalFastRotationExt",
    "hoisted_rotate_s": "one EvalFastRotationExt (a hoisted baby step kept in Q*P)",
    "pmul_s": "EvalMult(ct, pt) x (limbs + |P|) / limbs (the stage multiplies in Q*P)",
    "add_s": "EvalAddInPlace of two ciphertexts in Q*P",
    "rescale_s": "RescaleInPlace",
    "mul_s": "EvalMult(ct, ct) with relinearisation + RescaleInPlace (EvalMod's products)",
}


def write_profile(path: Path, n: int, levels: dict[int, dict[str, float]], k_p: int, meta: dict) -> None:
    """The per-level profile as TOML (written by hand: OpenFHE's Python has no TOML writer; the
    planner validates it when it loads it). Its values are ``stored``: our own measurement with
    its machine and date, read by later runs (and shipped with the package), not measured by
    the run that reads it."""
    q = lambda s: json.dumps(s)  # noqa: E731 -- a TOML basic string is a JSON string here
    lines = ["# Per-level OpenFHE op costs for the bootstrap planner, written by benchmarks/bootstrap_plan.py",
             "[meta]"] + [f"{k} = {q(v)}" for k, v in meta.items()]
    where = (f"stored: measured by benchmarks/bootstrap_plan.py on {meta['machine']}, {meta['date']}: OpenFHE "
             f"{OPENFHE_PIN}, one pinned core, CPU time, minimum of interleaved rounds")
    lines += ["", "[ring]",
              f"poly_modulus_degree = {{ value = {n}, source = {q('the ring the op costs were measured at')}, "
              f"provenance = \"stored\" }}",
              f"p_limbs = {{ value = {k_p}, source = {q('|P| limbs of OpenFHE key switching, from an extended ciphertext size')}, "
              f"provenance = \"stored\" }}"]
    for lv in sorted(levels):
        lines += ["", f"[level.{lv}]"]
        for op, v in levels[lv].items():
            lines.append(f"{op} = {{ value = {v!r}, source = {q(where + '; ' + SOURCES[op])}, provenance = \"stored\" }}")
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def calibrate_levels(depth: int) -> list[int]:
    """Levels timed: every third from 1 and the top two (the planner interpolates between)."""
    return sorted(set(range(1, depth + 1, 3)) | {depth - 1, depth})


# ---- 2. the planner ----------------------------------------------------------------------------
def run_planner(python: str, n: int, depth: int, profile: Path) -> dict:
    """``cryptoffload plan bootstrap ... --json`` in the package's own Python."""
    cmd = [python, "-m", "cryptoffload.cli", "plan", "bootstrap", "--ring", str(n), "--depth", str(depth),
           "--levels-after", str(LEVELS_AFTER), "--profile", str(profile), "--json"]
    env = dict(os.environ, PYTHONPATH=str(SRC))
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    if r.returncode != 0:
        raise SystemExit(f"bootstrap_plan: the planner failed ({' '.join(cmd)}): {r.stderr.strip()[-400:]}")
    return {"command": " ".join(["cryptoffload", *cmd[3:]]), **json.loads(r.stdout)}


def plan_of(entry: dict) -> BootstrapPlan:
    p = entry["plan"]
    return BootstrapPlan(tuple(p["level_budget"]), tuple(p["dim1"]), p["slots"])


# ---- 3. both plans on OpenFHE, interleaved -------------------------------------------------------
def bits(err: float) -> float | None:
    return -math.log2(err) if err > 0 else None


def one_bootstrap(b, x: np.ndarray) -> dict:
    """Encrypt ``x`` at level 1, bootstrap, decrypt: seconds, precision and levels left."""
    ct = b.encrypt(x, level=1)
    c, t = time.process_time(), time.perf_counter()
    r = b.bootstrap(ct)
    s, cpu = time.perf_counter() - t, time.process_time() - c
    out = b.rescale(r)          # OpenFHE returns it at scale Delta^2: the application rescales first
    err = np.abs(b.decrypt(out) - x)
    return {"s": s, "cpu_s": cpu, "max_err": float(err.max()), "mean_err": float(err.mean()), "level_after": b.level(out)}


def model_steps(slots: int, plan: BootstrapPlan, depth: int, left: int) -> list[int]:
    """Rotation steps the model's stage structure (workloads/bsgs.py) needs for ``plan``."""
    stages = bootstrap_stages(slots, plan.level_budget, plan.dim1, top_level=depth - 1, levels_after=left)
    return sorted(set().union(*(st.shape.rotation_steps() for st in stages)))


def describe_setup(b, plan: BootstrapPlan, took: dict, levels_left: int) -> dict:
    """Setup and keygen time, key count and the model's key set against OpenFHE's."""
    import openfhe as fhe  # noqa: PLC0415
    keys = b.rotation_key_steps()
    model = model_steps(b.slots, plan, b.depth, levels_left)
    return {"plan": plan.to_dict(), "setup_s": took["setup_s"], "keygen_s": took["keygen_s"],
            "openfhe_bootstrap_depth": int(fhe.CryptoContext.GetBootstrapDepth(list(plan.level_budget),
                                                                                fhe.UNIFORM_TERNARY)),
            "rotation_keys": len(keys), "model_keys_match_openfhe": model == keys,
            "model_steps_openfhe_lacks": sorted(set(model) - set(keys)),
            "openfhe_steps_model_lacks": sorted(set(keys) - set(model))}


def rounds(backends: dict, n_rounds: int, slots: int, log) -> dict:
    """Interleaved rounds (order alternating), one fresh input per round shared by both."""
    runs: dict[str, list[dict]] = {k: [] for k in backends}
    loads = []
    names = list(backends)
    for k in names:                       # warm-up, not recorded
        backends[k].call("boot", np.zeros(slots))
    rng = np.random.default_rng()
    for r in range(n_rounds):
        x = rng.uniform(-1.0, 1.0, slots)
        for k in (names if r % 2 == 0 else names[::-1]):
            runs[k].append(backends[k].call("boot", x))
        loads.append(os.getloadavg()[0])
        log(f"    round {r + 1}/{n_rounds}: " + ", ".join(f"{k} {runs[k][-1]['s']:.2f} s" for k in names)
            + f" (load {loads[-1]:.1f})")
    return {"runs": runs, "load_average_1min": loads}


def summarise(res: dict) -> dict:
    runs = res["runs"]
    out: dict = {}
    for k, rs in runs.items():
        out[k] = {"bootstrap_s_median": statistics.median(r["s"] for r in rs), "bootstrap_s": [r["s"] for r in rs],
                  "bootstrap_cpu_s_median": statistics.median(r["cpu_s"] for r in rs),
                  "bootstrap_cpu_s": [r["cpu_s"] for r in rs],
                  "precision_bits_worst": bits(max(r["max_err"] for r in rs)),
                  "precision_bits_mean": bits(statistics.mean(r["mean_err"] for r in rs)),
                  "levels_after": sorted({r["level_after"] for r in rs})}
    ratios = [d["s"] / p["s"] for d, p in zip(runs["default"], runs["planner"])]
    out["ratio_default_over_planner"] = {"median": statistics.median(ratios), "min": min(ratios), "max": max(ratios),
                                         "per_round": ratios}
    cpu = [d["cpu_s"] / p["cpu_s"] for d, p in zip(runs["default"], runs["planner"])]
    out["cpu_ratio_default_over_planner"] = {"median": statistics.median(cpu), "min": min(cpu), "max": max(cpu),
                                             "per_round": cpu}
    out["load_average_1min"] = {"min": min(res["load_average_1min"]), "max": max(res["load_average_1min"]),
                                "per_round": res["load_average_1min"]}
    return out


# ---- one ring: each plan in its own process ---------------------------------------------------------
# OpenFHE hands out one crypto context per parameter set (CryptoContextFactory reuses a context
# whose parameters match), and a context holds one bootstrap precomputation per slot count: two
# plans at the same ring, modulus and slots cannot live in one process. So each plan gets a
# worker process (same pinned core: they run in turn, never at once) and this one interleaves them.
def _serve(conn, n: int, plan: BootstrapPlan) -> None:
    """A worker: one backend set up with ``plan``; answers calls until told to stop."""
    b = make(n)
    took = setup_plan(b, plan)
    calls = {"boot": lambda x: one_bootstrap(b, x), "describe": lambda left: describe_setup(b, plan, took, left),
             "costs": lambda levels, reps: op_costs(b, levels, reps, b.rotation_key_steps()[0]),
             "p_limbs": lambda: p_limbs(b), "depth": lambda: b.depth, "slots": lambda: b.slots,
             "took": lambda: took}
    conn.send(("ready", None))
    while True:
        name, args = conn.recv()
        if name == "stop":
            break
        try:
            conn.send(("ok", calls[name](*args)))
        except Exception as exc:  # noqa: BLE001 -- reported to the parent, which stops
            conn.send(("error", f"{type(exc).__name__}: {exc}"))
    conn.close()


class Worker:
    """One plan's process and the pipe to it."""

    def __init__(self, n: int, plan: BootstrapPlan) -> None:
        import multiprocessing as mp  # noqa: PLC0415
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child, n, plan), daemon=True)
        self.proc.start()
        self._reply()

    def _reply(self):
        status, value = self.conn.recv()
        if status == "error":
            raise SystemExit(f"bootstrap_plan: a worker failed: {value}")
        return value

    def call(self, name: str, *args):
        self.conn.send((name, args))
        return self._reply()

    def stop(self) -> None:
        self.conn.send(("stop", ()))
        self.proc.join(timeout=120)


def run_ring(n: int, args, meta: dict, log) -> dict:
    """Calibrate, plan, run both plans interleaved (see the module docstring)."""
    t0 = time.perf_counter()
    a = Worker(n, DEFAULT)
    depth, slots, took_a = a.call("depth"), a.call("slots"), a.call("took")
    levels = calibrate_levels(depth)
    log(f"  N = {n}: depth {depth}, default set up in {took_a['setup_s'] + took_a['keygen_s']:.1f} s; "
        f"timing ops at levels {levels}")
    k_p = a.call("p_limbs")
    raw = a.call("costs", levels, args.reps)
    profile = args.out_dir / f"openfhe_bootstrap_n{n}.toml"
    write_profile(profile, n, profile_levels(raw["min"], k_p), k_p,
                  dict(meta, name=f"openfhe_bootstrap_n{n}", kind="measured",
                       description=f"OpenFHE {OPENFHE_PIN} per-level op costs at N = {n} (depth {depth}, dnum {DNUM}) "
                                   "for the bootstrap planner"))
    plan_json = run_planner(args.planner_python, n, depth, profile)
    chosen, default = plan_of(plan_json["chosen"]), plan_of(plan_json["openfhe_default"])
    log(f"  planner: {chosen.level_budget} dim1 {chosen.dim1} (default {default.level_budget} dim1 {default.dim1}), "
        f"predicted {plan_json['predicted_speedup']:.3f}x")
    b = Worker(n, chosen)
    setups = {"default": a.call("describe", plan_json["openfhe_default"]["levels_after"]),
              "planner": b.call("describe", plan_json["chosen"]["levels_after"])}
    measured = summarise(rounds({"default": a, "planner": b}, args.rounds, slots, log))
    a.stop()
    b.stop()
    return {"ring_dim": n, "slots": slots, "depth": depth, "levels_after_required": LEVELS_AFTER,
            "p_limbs": k_p, "op_levels": levels,
            "op_costs_s": {stat: {str(lv): c for lv, c in v.items()} for stat, v in raw.items()},
            "profile": profile.name, "planner": plan_json,
            "default_explicit_dim1": default.to_dict(), "setup": setups, "measured": measured,
            "wall_s": time.perf_counter() - t0}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--library", choices=("openfhe", "ours"), default="openfhe",
                    help="run the plans on OpenFHE (Python 3.10 venv) or on our backend (this Python)")
    ap.add_argument("--planner-python", help="Python 3.11+ with the package's dependencies (--library openfhe)")
    ap.add_argument("--rings", default="4096", help="comma-separated ring sizes (powers of two)")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--reps", type=int, default=5, help="interleaved rounds of the op timings")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    if args.library == "ours":
        from bootstrap_plan_ours import main_ours  # noqa: PLC0415 -- beside this script

        return main_ours(args, RESULTS)
    if not args.planner_python:
        ap.error("--planner-python is required with --library openfhe")
    args.out = args.out or RESULTS / "bootstrap_plan.json"
    args.out_dir = args.out.parent          # the profiles go beside the JSON
    args.out_dir.mkdir(parents=True, exist_ok=True)
    why = openfhe_import_error()
    if why is not None:
        print(f"bootstrap_plan: skipped, openfhe does not import here ({why}); run it with .venv-openfhe/bin/python")
        return 0
    import openfhe as fhe  # noqa: PLC0415
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    cpu = pin.pin_to_one_core()
    log = lambda m: print(m, flush=True)  # noqa: E731
    info = machine_info()
    date = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    meta = {"machine": f"{info.get('cpu')}, {info.get('cores')} cores", "date": date,
            "backend": f"OpenFHE {OPENFHE_PIN}", "command": "benchmarks/bootstrap_plan.py"}
    log(SECURITY)
    out = {"benchmark": "bootstrap_plan",
           "issue": "33 phase 2b: the planner's bootstrap split vs OpenFHE's default, on OpenFHE",
           "security": SECURITY, "machine": dict(info, pinned_cpu=cpu, omp_num_threads=os.environ.get("OMP_NUM_THREADS")),
           "python": platform.python_version(), "openfhe": getattr(fhe, "__version__", None), "openfhe_pin": OPENFHE_PIN,
           "date": date, "load_average_before": os.getloadavg(),
           "params": {"coeff_mod_bits": list(params(4096).coeff_mod_bits), "scale_bits": 59, "scaling": "FIXEDMANUAL",
                      "secret": "UNIFORM_TERNARY", "num_large_digits": DNUM, "security_level": "HEStd_NotSet",
                      "packing": "full (N/2 slots)", "levels_after_required": LEVELS_AFTER,
                      "modulus_reserved_for": DEFAULT.to_dict(), "rounds": args.rounds, "op_reps": args.reps},
           "method": {"measured": "wall-clock of EvalBootstrap per round, both plans interleaved on one pinned core "
                                  "(order alternating); precision = -log2 of the largest / mean absolute error over slots",
                      "predicted": "cryptoffload plan bootstrap --json: the op-DAG model (simulated) priced with the "
                                   "per-level op costs measured here first"},
           "rings": []}
    for n in (int(v) for v in args.rings.split(",")):
        out["rings"].append(run_ring(n, args, meta, log))
    out["load_average_after"] = os.getloadavg()
    log("")
    log(table(out["rings"]))
    pin.save_results(out, args.out, log)
    return 0


def table(rings: list[dict]) -> str:
    head = (f"{'N':>6} {'plan':>8} {'budget':>7} {'dim1':>8} {'boot s':>7} {'cpu s':>7} {'bits max':>8} "
            f"{'bits mean':>9} {'pred ms':>8} | {'default/planner wall':>20} {'cpu':>18} {'load':>9}")
    lines = [head, "-" * len(head)]
    for r in rings:
        m, p = r["measured"], r["planner"]
        for k, entry in (("default", p["openfhe_default"]), ("planner", p["chosen"])):
            pl = entry["plan"]
            row = (f"{r['ring_dim']:>6} {k:>8} {str(tuple(pl['level_budget'])):>7} {str(tuple(pl['dim1'])):>8} "
                   f"{m[k]['bootstrap_s_median']:>7.3f} {m[k]['bootstrap_cpu_s_median']:>7.3f} "
                   f"{m[k]['precision_bits_worst']:>8.1f} "
                   f"{m[k]['precision_bits_mean']:>9.1f} {entry['predicted_ms']['total']:>8.0f} | ")
            if k == "planner":
                q, c, ld = m["ratio_default_over_planner"], m["cpu_ratio_default_over_planner"], m["load_average_1min"]
                row += (f"{q['median']:>8.3f} ({q['min']:.2f}-{q['max']:.2f}) {c['median']:>6.3f} ({c['min']:.2f}-"
                        f"{c['max']:.2f}) {ld['min']:.1f}-{ld['max']:.1f}")
            lines.append(row)
    lines.append("boot s (wall), cpu s (the worker's CPU time), bits: MEASURED on OpenFHE (median of interleaved "
                 "rounds); pred ms: PREDICTED by the planner's model (simulated; the parts a plan changes); "
                 "default/planner: median (min-max) of per-round ratios, wall and CPU (> 1: the planner's plan is faster)")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
