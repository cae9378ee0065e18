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
paillier_app = typer.Typer(no_args_is_help=True, help="Paillier keys, encryption and decryption (files).")
app.add_typer(study_app, name="study")
app.add_typer(paillier_app, name="paillier")
app.add_typer(calibrate_app, name="calibrate")
app.add_typer(trace_app, name="trace")

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
    from cryptoffload.report.tables import render_result
    from cryptoffload.studies import fpga_reconfig as st

    cfg = st.FpgaReconfigConfig(
        quick=quick, seed=seed, requests=requests, rates=_parse_floats(rates, "--rates"),
        policies=[p.strip().lower() for p in policies.split(",") if p.strip()] if policies else list(POLICIES),
        profile=profile, sw_profile=sw_profile, reconfig_ms=reconfig_ms,
        trace=str(trace) if trace else None, history=str(history) if history else None,
        window_mb=window_mb, engine=engine)
    cfg.validate()
    with progress_bar(not no_progress) as prog:
        result = st.run(cfg, out, prog)
    render_result(result, console)
    console.print(f"wrote {out}/result.json ({len(result.tables)} tables, {len(result.figures)} figures)")


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
    from cryptoffload.report.tables import render_result
    from cryptoffload.studies import paillier_offload as st

    cfg = st.PaillierOffloadConfig(quick=quick, seed=seed, bits=bits, sim_count=sim_count, measure_count=measure_count,
                                   engine=engine, threads=threads, inflight=inflight, profile=profile,
                                   measure=measure, all_cores=all_cores)
    cfg.validate()
    with progress_bar(not no_progress) as prog:
        result = st.run(cfg, out, prog)
    render_result(result, console)
    console.print(f"wrote {out}/result.json ({len(result.tables)} tables, {len(result.figures)} figures)")


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
    from cryptoffload.studies import fpga_reconfig as st
    from cryptoffload.studies import paillier_offload as po

    results, failures = [], []
    sw_profile = None
    if calibrate:
        from cryptoffload.sim.calibrate import calibrate_ciphers

        sw_profile = str(calibrate_ciphers(out / "calibration" / "ciphers.toml", seconds=0.05 if not full else 0.3,
                                           progress=True))
    runners = {
        "fpga-reconfig": lambda prog: st.run(st.FpgaReconfigConfig(quick=not full, seed=seed, sw_profile=sw_profile),
                                             out / "fpga-reconfig", prog),
        "paillier-offload": lambda prog: po.run(po.PaillierOffloadConfig(quick=not full, seed=seed),
                                                out / "paillier-offload", prog),
    }
    for name in STUDIES:
        if name not in runners:
            continue
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
