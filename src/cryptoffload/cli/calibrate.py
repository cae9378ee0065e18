"""``cryptoffload calibrate``: measure this machine's costs into *measured* profiles."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from cryptoffload.checks import GPU_INDEX, KEY_BITS, MEASURE_S, MEMORY_MIB, REPEATS
from rich.table import Table as RichTable

from cryptoffload.cli.root import console, number_option
from cryptoffload.crypto.ckks.registry import backend_help
from cryptoffload.io import check_output_file, check_output_folder

app = typer.Typer(help="Measure this machine's costs into a *measured* profile.", invoke_without_command=True)

MAX_SECONDS = 600.0  # per cipher and library; the full run measures 20 of them
MAX_REPEATS = 1000

#: Time shown in the largest unit that keeps it at 1 or more (a GPU's per-item cost is ns, a
#: Dask hop ms); bytes likewise.
_TIME_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns"))
_BYTE_UNITS = ((1e9, "GB"), (1e6, "MB"), (1e3, "KB"), (1.0, "bytes"))


def _scaled(value: float, units: tuple[tuple[float, str], ...]) -> tuple[float, str]:
    for size, unit in units:
        if abs(value) >= size:
            return value / size, unit
    size, unit = units[-1]
    return value / size, unit


def shown(field: str, value: float) -> tuple[float, str]:
    """A profile value in a unit a reader takes in at a glance, from its name's unit word
    (``_s``, ``_Bps``, ``_bytes_per_s``, ``bytes``); other fields are counts or ratios."""
    last = field.rsplit(".", 1)[-1]
    if last.endswith(("_Bps", "_bytes_per_s")):
        return value / 1e6, "MB/s"
    if last.endswith("_s") and value:
        return _scaled(value, _TIME_UNITS)
    if last == "bytes" or last.startswith("bytes") or last.endswith("_bytes"):
        return _scaled(value, _BYTE_UNITS)
    return value, ""


def measured_table(path: Path, skip: tuple[str, ...] = ()) -> RichTable:
    """What a calibration wrote, one row per value with its unit (``skip``: prefixes of raw
    samples the fitted values already stand for). Read back from the file, so it shows what
    the profile holds."""
    from cryptoffload.profiles import load_profile
    from cryptoffload.report.tables import fmt

    profile = load_profile(path)
    table = RichTable(title=f"{profile.name}: measured values", title_justify="left")
    table.add_column("field")
    table.add_column("value", justify="right")
    table.add_column("unit")
    for name, pv in profile.values.items():
        if not name.startswith(skip):
            value, unit = shown(name, pv.value)
            table.add_row(name, fmt(value), unit)
    return table


@app.callback()
def calibrate_all(ctx: typer.Context,
                  out_dir: Path = typer.Option(Path("calibration"), "--out-dir", help="Folder for the measured profiles."),
                  seconds: float = number_option(0.3, "--seconds", bound=MEASURE_S, maximum=MAX_SECONDS,
                                                 help="Measuring time per cipher and library.")) -> None:
    """Without a subcommand: run every calibration into OUT_DIR."""
    if ctx.invoked_subcommand is None:
        check_output_folder(out_dir)
        _calibrate_ciphers(out_dir / "ciphers.toml", seconds)


def _calibrate_ciphers(out: Path, seconds: float) -> None:
    check_output_file(out, create_parents=True)
    from cryptoffload.calibrate.ciphers import calibrate_ciphers

    # calibrate_ciphers(progress=True) prints its comparison table (a rich Table) itself.
    path = calibrate_ciphers(out, seconds=seconds, progress=True, console=console)
    console.print(f"wrote {path}", markup=False)


@app.command("ckks")
def calibrate_ckks_cmd(
    out: Path = typer.Option(Path("calibration/ckks.toml"), "--out", help="Profile to write (TOML)."),
    repeats: int = number_option(7, "--repeats", bound=REPEATS, maximum=MAX_REPEATS,
                                 help="Repetitions per measured op (median)."),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="Dask scheduler tls://HOST:PORT for the link "
                                            "costs (default: a local 2-worker cluster, TLS with per-run "
                                            "certificates)."),
    dask_credentials: Optional[Path] = typer.Option(None, "--dask-credentials", help="Folder holding the tls:// "
                                                    "scheduler's ca.pem, cert.pem and key.pem (`cryptoffload dask "
                                                    "credentials`)."),
    insecure_plain_tcp: bool = typer.Option(False, "--insecure-plain-tcp-scheduler", help="Accept a plain tcp:// "
                                            "--scheduler (no TLS, no authentication): anyone who can reach its port "
                                            "runs code as you and reads your keys."),
    backend: str = typer.Option("seal", "--backend", help=f"CKKS backend to time: {backend_help()}."),
) -> None:
    """Measure CKKS op costs (SEAL by default) and the cost of moving a ciphertext between Dask workers."""
    from cryptoffload.crypto.ckks import make_backend
    from cryptoffload.engines.dask import DaskRunner, parse_scheduler
    from cryptoffload.engines.dask_tls import scheduler_credentials
    from cryptoffload.calibrate.ckks import DEFAULT_CALIBRATION_PARAMS, calibrate_ckks

    check_output_file(out, create_parents=True)
    address = parse_scheduler(scheduler) if scheduler is not None else None
    pems = scheduler_credentials(address, dask_credentials, insecure_plain_tcp)   # checked before any work starts
    make_backend(backend, DEFAULT_CALIBRATION_PARAMS)  # refuse an unavailable backend (no GPU) before any worker starts
    with DaskRunner(address, workers=2, credentials=pems, insecure_plain_tcp=insecure_plain_tcp) as runner:
        path = calibrate_ckks(out, backend=backend, repeats=repeats, progress=True, runner=runner)
    console.print(measured_table(path))
    console.print(f"wrote {path}", markup=False)


@app.command("ciphers")
def calibrate_ciphers_cmd(
    out: Path = typer.Option(Path("calibration/ciphers.toml"), "--out", help="Profile to write (TOML)."),
    seconds: float = number_option(0.3, "--seconds", bound=MEASURE_S, maximum=MAX_SECONDS,
                                   help="Measuring time per cipher and library."),
) -> None:
    """Measure software throughput of the ciphers of the FPGA reconfiguration study on this machine (one core)."""
    _calibrate_ciphers(out, seconds)


@app.command("gpu")
def calibrate_gpu_cmd(
    out: Path = typer.Option(Path("calibration/gpu.toml"), "--out", help="Profile to write (TOML)."),
    bits: int = number_option(1024, "--bits", bound=KEY_BITS,
                              help="Paillier key size measured (1024 is a study size, as in the paper)."),
    batches: str = typer.Option("8192,65536,262144", "--batches", help="Batch sizes timed per operation (two or more)."),
    repeats: int = number_option(3, "--repeats", bound=REPEATS, maximum=MAX_REPEATS,
                                 help="Timed launches per batch size (median)."),
    gpu: int = number_option(0, "--gpu", bound=GPU_INDEX, help="CUDA device index."),
) -> None:
    """Paillier on a CUDA GPU: time DJN encryption, CRT decryption and ciphertext aggregation kernels per batch size, and host<->device copies, into a profile for the simulated GPU. Paillier only: for CKKS on a GPU use `calibrate ckks --backend gpu`."""
    from cryptoffload.checks import parse_ints
    from cryptoffload.cli.root import progress_bar
    from cryptoffload.crypto.paillier import check_key_bits
    from cryptoffload.engines.gpu import gpu_reason
    from cryptoffload.errors import BackendUnavailable, ConfigError
    from cryptoffload.calibrate.gpu import calibrate_gpu

    sizes = parse_ints("--batches", batches)
    check_output_file(out, create_parents=True)
    check_key_bits(bits, insecure_study_size=True)
    if len(set(sizes)) < 2 or max(sizes) > 1 << 24:
        raise ConfigError("--batches needs two or more different sizes in 1..16,777,216")
    reason = gpu_reason("cuda")
    if reason is not None:
        raise BackendUnavailable(f"calibrate gpu needs a CUDA GPU: {reason}")
    with progress_bar(True) as prog:
        tick = prog(3 * len(sizes) + 1)
        path = calibrate_gpu(out, device_index=gpu, bits=bits, fit_batches=tuple(sizes), repeats=repeats, tick=tick)
    console.print(measured_table(path, skip=("samples.",)))
    console.print(f"wrote {path} (with the raw per-batch timings, samples.*)", markup=False)


@app.command("paillier-window")
def calibrate_paillier_window_cmd(
    bits: str = typer.Option("1024,2048", "--bits", help="Key sizes (bits, comma-separated)."),
    backend: str = typer.Option("all", "--backend", help="Table backend to measure: all (those that run here), gmp, adx or ifma."),
    seconds: float = number_option(0.1, "--seconds", bound=MEASURE_S, maximum=10.0,
                                   help="Measuring time per window per round."),
    rounds: int = number_option(5, "--rounds", bound=REPEATS, maximum=100, help="Interleaved rounds (the median counts)."),
    max_table_mib: int = number_option(256, "--max-table-mib", bound=MEMORY_MIB, maximum=4096,
                                       help="Largest table timed (MiB)."),
) -> None:
    """Choose the Paillier fixed-base windows for this CPU again (--choose-window): time every window per key size, backend and lookup mode, and cache the fastest per CPU model (what encryption uses from then on)."""
    from cryptoffload.checks import parse_ints
    from cryptoffload.crypto.paillier import check_key_bits, windows
    from cryptoffload.errors import BackendUnavailable, ConfigError

    sizes = parse_ints("--bits", bits)
    for size in sizes:
        check_key_bits(size, insecure_study_size=True)
    here = windows.available_backends()
    if backend != "all" and backend not in ("gmp", "adx", "ifma"):
        raise ConfigError(f"--backend must be all, gmp, adx or ifma, not {backend!r}")
    if backend != "all" and backend not in here:
        raise BackendUnavailable(f"backend {backend!r} does not run on this CPU or build; here: {', '.join(here) or 'none'}")
    if not here:
        raise BackendUnavailable("the native Paillier core is not built; reinstall the package (pip install -e .)")
    rows = windows.calibrate(sizes, here if backend == "all" else [backend], seconds=seconds, rounds=rounds,
                             max_bytes=max_table_mib * 2**20)
    table = RichTable(title=f"Paillier windows for {windows.cpu_key()}", title_justify="left")
    for col in ("bits", "backend", "lookup", "chosen", "encryptions/s per window"):
        table.add_column(col)
    for row in rows:
        rates = row["rates"]
        assert isinstance(rates, dict)
        table.add_row(str(row["bits"]), str(row["backend"]), "constant time" if row["constant_time"] else "variable time",
                      str(row["window"]), ", ".join(f"{w}: {r:,.0f}" for w, r in rates.items()))
    console.print(table)
    cache = rows[0]["cache"] if rows else None
    console.print(f"cached in {cache}" if cache else "not cached (the cache folder is not this user's to write)")
