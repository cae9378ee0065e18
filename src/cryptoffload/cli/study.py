"""``cryptoffload study``: run one study (a paper reproduced and extended)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from cryptoffload.cli.options import parse_floats, parse_ints
from cryptoffload.cli.root import console, progress_bar

app = typer.Typer(no_args_is_help=True, help="Run one study (a paper reproduced and extended).")


def _run_study(module, cfg, out: Path, no_progress: bool) -> None:
    """Validate (so bad input fails before any progress bar or file), run with a progress bar,
    print the tables and where they went: the same for every study."""
    from cryptoffload.report.tables import render_result

    cfg.validate()
    with progress_bar(not no_progress) as prog:
        result = module.run(cfg, out, prog)
    render_result(result, console)
    console.print(f"wrote {out}/result.json ({len(result.tables)} tables, {len(result.figures)} figures)")


@app.command("list")
def study_list() -> None:
    """List the available studies."""
    from cryptoffload.studies import STUDIES, study_module

    for name in STUDIES:
        console.print(f"[bold]{name}[/bold]  {study_module(name).TITLE}")


@app.command("fpga-reconfig")
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
        quick=quick, seed=seed, requests=requests, rates=parse_floats(rates, "--rates"),
        policies=[p.strip().lower() for p in policies.split(",") if p.strip()] if policies else list(POLICIES),
        profile=profile, sw_profile=sw_profile, reconfig_ms=reconfig_ms,
        trace=str(trace) if trace else None, history=str(history) if history else None,
        window_mb=window_mb, engine=engine)
    _run_study(st, cfg, out, no_progress)


@app.command("paillier-offload")
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


@app.command("ridge")
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


@app.command("tls-offload")
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


@app.command("isc-he-cnn")
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


@app.command("bsgs-multidevice")
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
        kw["measured_babies"] = tuple(parse_ints(babies, "--babies"))
    cfg = st.BsgsMultideviceConfig(quick=quick, seed=seed, profile=profile, measure=measure,
                                   calibration=str(calibration) if calibration else None,
                                   measured_devices=tuple(parse_ints(workers, "--workers")),
                                   scheduler=parse_scheduler(scheduler) if scheduler else None, **kw)
    _run_study(st, cfg, out, no_progress)
