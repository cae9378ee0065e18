"""``cryptoffload ridge``: private ridge regression (Paillier only) as separate processes over
HTTP -- CSP, platform, providers, buyer -- or all of it on this machine as a demo."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, List, Optional

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from cryptoffload.checks import (BATCH, BOUND, FEATURES, FRACTION_BITS, KEY_BITS, LAMBDA, PORT, PROVIDERS, RECORDS,
                                 SEED, STAT_BITS, WAIT_S, WORKERS, check_bounded, check_host, check_int, check_port,
                                 check_seed, check_url, shown)
from cryptoffload.cli.root import (console, err_console, is_quiet, max_connections_option, max_per_client_option, warn,
                                   number_option, set_server_limits)
from cryptoffload.io import check_not_input, check_output_file, check_output_folder, write_json

MAX_SECONDS = 86_400.0  # waits and timeouts
MAX_WORKERS = 1024
MAX_BATCH = 1_000_000  # records per upload
MAX_DEMO_RECORDS = 10_000_000
MAX_PARTIES = 64  # providers of the demo


def _check_files(flag: str, paths: Optional[List[Path]]) -> None:
    """Certificates and tokens named on the command line exist as files (read later, after
    other checks: a missing one must not wait for a server first)."""
    from cryptoffload.errors import ConfigError

    for p in paths or []:
        if not p.exists():
            raise ConfigError(f"{flag} {p}: no such file")
        if not p.is_file():
            raise ConfigError(f"{flag} {p} is not a regular file (a folder, a FIFO or a device); give a file")


app = typer.Typer(no_args_is_help=True, help="Private ridge regression as separate processes over HTTP "
                                             "(CSP, platform, providers, buyer), or all of it as a demo.")


def _ridge_solve_bits(text: str) -> Optional[int]:
    from cryptoffload.errors import ConfigError

    if text == "auto":
        return None
    try:
        return KEY_BITS.parse("--solve-bits", text)
    except ConfigError:
        raise ConfigError(f"--solve-bits must be 'auto' or a number of bits ({KEY_BITS.text()}), got "
                          f"{shown(text)}") from None


def _ridge_token(path: Optional[Path]) -> str:
    from cryptoffload.apps.ridge.tokens import TOKEN_ENV, read_buyer_token
    from cryptoffload.errors import ConfigError

    token = read_buyer_token(path)
    if token is None:
        raise ConfigError(f"the buyer needs the token the CSP issued (buyer.token): --buyer-token-file PATH or {TOKEN_ENV}")
    return token


@contextmanager
def _ridge_progress(enabled: bool) -> Iterator[Callable[[str], Callable[[int, int], None]]]:
    """One bar per provider, counting acknowledged records."""
    prog = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("records"),
                    TimeElapsedColumn(), console=err_console, disable=not enabled or is_quiet())
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

    from cryptoffload.report.tables import print_whole

    table = Table(title=title)
    for c in columns:
        table.add_column(c, justify="right")
    for r in rows:
        table.add_row(*r)
    print_whole(console, table)  # a pipe gets every coefficient whole, however many digits


@app.command("csp")
def ridge_csp(
    port: int = number_option(..., "--port", bound=PORT,
                              help="TCP port (0: a free port, printed on the 'listening on' line)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (loopback by default)."),
    d: int = number_option(20, "--d", bound=FEATURES, help="Features per record."),
    max_records: int = number_option(..., "--max-records", bound=RECORDS,
                                     help="Most records over all providers (sizes the guard bits)."),
    frac_bits: int = number_option(16, "--frac-bits", bound=FRACTION_BITS, help="Fixed-point fractional bits."),
    x_bound: float = number_option(1.0, "--x-bound", bound=BOUND, help="Declared bound on every |x_j|."),
    y_bound: Optional[float] = number_option(None, "--y-bound", bound=BOUND,
                                             help="Declared bound on |y| (default d + 6, the generator's)."),
    lam: float = number_option(1.0, "--lam", bound=LAMBDA, help="Ridge lambda (scikit-learn's alpha)."),
    stat_bits: int = number_option(40, "--stat-bits", bound=STAT_BITS,
                                   help="Statistical hiding of the unpacking masks (40..256)."),
    min_providers: int = number_option(2, "--min-providers", bound=PROVIDERS, help="Fewest providers a model may be "
                                       "bought from (1 sells a provider its own model)."),
    upload_bits: int = number_option(2048, "--upload-bits", bound=KEY_BITS,
                                     help="Upload key size (1024 needs --insecure-study-size)."),
    insecure_study_size: bool = typer.Option(False, "--insecure-study-size",
                                             help="Allow an upload key below 112-bit security (the QAT Paillier paper uses 1024)."),
    solve_bits: str = typer.Option("auto", "--solve-bits", help="Solve key size, or auto (max(2048, what recovery needs))."),
    key_dir: Optional[Path] = typer.Option(
        None, "--key-dir", help="Keep the keys, the tokens (platform.token, buyer.token), the state database and a "
        "generated TLS certificate here (0700, files 0600); reused on restart. Default: a temporary folder, removed "
        "at exit."),
    tls_cert: Optional[Path] = typer.Option(None, "--tls-cert", help="Serve https with this certificate (PEM); "
                                            "default: a self-signed one made in the key folder."),
    tls_key: Optional[Path] = typer.Option(None, "--tls-key", help="Private key of --tls-cert (PEM)."),
    insecure_http: bool = typer.Option(False, "--insecure-http", help="Serve plain http: tokens and data in the clear."),
    max_connections: int = max_connections_option(),
    max_connections_per_client: int = max_per_client_option(),
) -> None:
    """Crypto service provider: keys, unpacking and the masked solve of one session; w' only for the buyer."""
    check_port("--port", port)
    check_host("--host", host)
    set_server_limits(max_connections, max_connections_per_client)
    check_int("--max-records", max_records, maximum=10**9)
    check_bounded("--x-bound", x_bound, BOUND)
    if y_bound is not None:
        check_bounded("--y-bound", y_bound, BOUND)
    check_bounded("--lam", lam, LAMBDA, allow_zero=True)
    if key_dir is not None:
        check_output_folder(key_dir)
    _check_files("--tls-cert", [tls_cert] if tls_cert else None)
    _check_files("--tls-key", [tls_key] if tls_key else None)
    from cryptoffload.apps.ridge.csp import serve_csp
    from cryptoffload.apps.ridge.params import session_params

    check_int("--min-providers", min_providers, maximum=1024)
    params = session_params(d=d, max_records=max_records, x_bound=x_bound, y_bound=y_bound, lam=lam,
                            frac_bits=frac_bits, stat_bits=stat_bits, min_providers=min_providers)
    serve_csp(params, host=host, port=port, upload_bits=upload_bits, solve_bits=_ridge_solve_bits(solve_bits),
              insecure_study_size=insecure_study_size, key_dir=key_dir, tls_cert=tls_cert, tls_key=tls_key,
              insecure_http=insecure_http)


@app.command("platform")
def ridge_platform(
    port: int = number_option(..., "--port", bound=PORT,
                              help="TCP port (0: a free port, printed on the 'listening on' line)."),
    csp: str = typer.Option(..., "--csp", help="URL of the CSP."),
    db: Path = typer.Option(..., "--db", help="SQLite database (created 0600; reloaded on restart)."),
    csp_token_file: Path = typer.Option(..., "--csp-token-file", help="The platform's token from the CSP "
                                        "(platform.token in the CSP's key folder)."),
    providers: str = typer.Option(..., "--providers", help="Ids of the providers that may upload (comma-separated); "
                                  "each gets a token file <id>.token in --token-dir."),
    token_dir: Optional[Path] = typer.Option(
        None, "--token-dir", help="Keep the provider tokens and a generated TLS certificate here (0700, files 0600; "
        "reused on restart). Default: a temporary folder, removed at exit."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (loopback by default)."),
    workers: Optional[int] = number_option(None, "--workers", bound=WORKERS, maximum=MAX_WORKERS,
                                           help="Threads for the masked solve (default: all cores)."),
    wait_csp: float = number_option(10.0, "--wait-csp", bound=WAIT_S, maximum=MAX_SECONDS, allow_zero=True,
                                    help="Seconds to keep trying to reach the CSP at start."),
    max_upload_records: int = number_option(2048, "--max-upload-records", bound=BATCH, maximum=MAX_BATCH,
                                            help="Largest upload in records (vectors): sizes the upload route's "
                                            "body limit."),
    cafile: Optional[List[Path]] = typer.Option(None, "--cafile", help="Trust this certificate for the CSP "
                                                "(repeatable)."),
    max_records_per_provider: Optional[int] = number_option(
        None, "--max-records-per-provider", bound=RECORDS, help="Most records one provider may upload (default: max_records / "
        "providers, rounded up), so that no provider can use up the others' share."),
    tls_cert: Optional[Path] = typer.Option(None, "--tls-cert", help="Serve https with this certificate (PEM); "
                                            "default: a self-signed one made in the token folder."),
    tls_key: Optional[Path] = typer.Option(None, "--tls-key", help="Private key of --tls-cert (PEM)."),
    insecure_http: bool = typer.Option(False, "--insecure-http", help="Serve, and reach the CSP over, plain http: "
                                       "tokens and data in the clear."),
    max_connections: int = max_connections_option(),
    max_connections_per_client: int = max_per_client_option(),
) -> None:
    """Platform: accepts uploads from registered providers, aggregates them durably, finalizes with the CSP."""
    from cryptoffload.apps.ridge.db import check_database_file
    from cryptoffload.apps.ridge.platform import serve_platform
    from cryptoffload.checks import split_list

    check_port("--port", port)
    set_server_limits(max_connections, max_connections_per_client)
    check_host("--host", host)
    check_url("--csp", csp)
    check_database_file(db)
    _check_files("--csp-token-file", [csp_token_file])
    _check_files("--cafile", cafile)
    _check_files("--tls-cert", [tls_cert] if tls_cert else None)
    _check_files("--tls-key", [tls_key] if tls_key else None)
    if token_dir is not None:
        check_output_folder(token_dir)
    if workers is not None:
        check_int("--workers", workers, maximum=MAX_WORKERS)
    check_bounded("--wait-csp", wait_csp, WAIT_S, "s", allow_zero=True, maximum=MAX_SECONDS)
    check_int("--max-upload-records", max_upload_records, maximum=MAX_BATCH)
    if max_records_per_provider is not None:
        check_int("--max-records-per-provider", max_records_per_provider, maximum=10**9)
    serve_platform(csp_url=csp, db=db, csp_token_file=csp_token_file, providers=split_list("--providers", providers),
                   token_dir=token_dir, host=host, port=port, workers=workers, wait_csp=wait_csp, cafile=cafile,
                   tls_cert=tls_cert, tls_key=tls_key, insecure_http=insecure_http,
                   max_upload_vectors=check_int("--max-upload-records", max_upload_records),
                   max_records_per_provider=max_records_per_provider)


@app.command("provider")
def ridge_provider(
    platform: str = typer.Option(..., "--platform", help="URL of the platform."),
    data: str = typer.Option(..., "--data", help="generate:n=N[,seed=S] | csv:PATH | diabetes"),
    token_file: Path = typer.Option(..., "--token-file", help="This provider's token (<id>.token from the platform)."),
    csp_fingerprint: Optional[str] = typer.Option(None, "--csp-fingerprint", help="The session fingerprint the CSP "
                                                  "printed: the platform must serve exactly that session."),
    csp: Optional[str] = typer.Option(None, "--csp", help="Or fetch the session from the CSP itself at this URL "
                                      "(over TLS) and require the platform to serve the same."),
    mode: str = typer.Option("per-record", "--mode", help="per-record or per-provider."),
    batch: int = number_option(1000, "--batch", bound=BATCH, maximum=MAX_BATCH,
                               help="Records per upload (per-record mode)."),
    provider_id: Optional[str] = typer.Option(None, "--provider-id",
                                              help="This provider's id (default: the token's name)."),
    part: str = typer.Option("1/1", "--part", help="Upload only part i of K contiguous parts of the data (i/K)."),
    retry_for: float = number_option(60.0, "--retry-for", bound=WAIT_S, maximum=MAX_SECONDS, allow_zero=True,
                                     help="Seconds to keep retrying a failed upload."),
    cafile: Optional[List[Path]] = typer.Option(None, "--cafile", help="Trust this certificate for the platform and "
                                                "the CSP (repeatable)."),
    insecure_study_size: bool = typer.Option(False, "--insecure-study-size",
                                             help="Encrypt under an upload key below 2048 bits (a study size)."),
    insecure_http: bool = typer.Option(False, "--insecure-http", help="Allow plain http URLs: token and "
                                       "ciphertexts in the clear."),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bar."),
) -> None:
    """Data provider: check the session against the pinned CSP, then encode, pack, encrypt and upload records."""
    import asyncio

    from cryptoffload.apps.ridge.protocol import check_upload_mode
    from cryptoffload.apps.ridge.provider import check_data_spec, check_fingerprint, parse_part, run_provider
    from cryptoffload.apps.ridge.tokens import read_token
    from cryptoffload.errors import ConfigError

    def retrying(text: str) -> None:
        warn(f"warning: {text}")

    check_url("--platform", platform)
    check_data_spec(data)
    if csp_fingerprint is not None:
        check_fingerprint(csp_fingerprint)
    if csp is not None:
        check_url("--csp", csp)
    if csp_fingerprint is None and csp is None:
        raise ConfigError("pin the CSP's session: --csp-fingerprint HEX (printed by the CSP) or --csp URL")
    check_upload_mode(mode)
    check_int("--batch", batch, maximum=MAX_BATCH)
    check_bounded("--retry-for", retry_for, WAIT_S, "s", allow_zero=True, maximum=MAX_SECONDS)
    parse_part(part)
    _check_files("--cafile", cafile)
    token = read_token(token_file, "provider token (--token-file)")
    with _ridge_progress(not no_progress) as make:
        report = asyncio.run(run_provider(platform, data, token=token, csp_fingerprint=csp_fingerprint, csp_url=csp,
                                          mode=mode, batch=batch, provider_id=provider_id, part=parse_part(part),
                                          retry_for=retry_for, cafile=cafile, insecure_study_size=insecure_study_size,
                                          insecure_http=insecure_http, progress=make("uploading"),
                                          on_retry=retrying))
    console.print(f"provider {report.provider_id}: {report.records:,} records in {report.uploads} upload(s), "
                  f"{report.bytes / 1e6:,.1f} MB, {report.seconds:.2f} s ({report.already_accepted} already accepted, "
                  f"{report.retries} retries)", markup=False)


@app.command("buyer")
def ridge_buyer(
    platform: str = typer.Option(..., "--platform", help="URL of the platform."),
    csp: str = typer.Option(..., "--csp", help="URL of the CSP."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write the model as JSON (coefficients and exact fractions)."),
    buyer_token_file: Optional[Path] = typer.Option(None, "--buyer-token-file", help="The buyer's token (buyer.token "
                                                    "in the CSP's key folder; default: $CRYPTOFFLOAD_RIDGE_BUYER_TOKEN)."),
    cafile: Optional[List[Path]] = typer.Option(None, "--cafile", help="Trust this certificate for the platform "
                                                "and the CSP (repeatable)."),
    timeout: float = number_option(600.0, "--timeout", bound=WAIT_S, maximum=MAX_SECONDS,
                                   help="Seconds to wait for an answer (finalize is the long one)."),
    insecure_http: bool = typer.Option(False, "--insecure-http", help="Allow plain http URLs: token and model in "
                                       "the clear."),
) -> None:
    """Buyer: finalize, fetch R, r and w', recover and print the model."""
    import asyncio

    from cryptoffload.apps.ridge.buyer import run_buyer

    check_url("--platform", platform)
    check_url("--csp", csp)
    if out is not None:
        check_not_input("--out", out, [("--buyer-token-file", buyer_token_file), *(("--cafile", c) for c in cafile or [])])
        check_output_file(out)
    _check_files("--cafile", cafile)
    check_bounded("--timeout", timeout, WAIT_S, "s", maximum=MAX_SECONDS)
    result = asyncio.run(run_buyer(platform, csp, _ridge_token(buyer_token_file), cafile=cafile, timeout=timeout,
                                   insecure_http=insecure_http))
    _ridge_coef_table(f"ridge model ({result.records:,} records, lambda = {result.params.lam:g})", ["j", "w_j"],
                      [[str(j), f"{c:.10g}"] for j, c in enumerate(result.model.coef)])
    if result.excluded_providers:
        console.print(f"left out (their sums overflowed their slots): {', '.join(result.excluded_providers)}",
                      markup=False)
    if out is not None:
        write_json(out, result.to_dict())
        console.print(f"wrote {out}", markup=False)


@app.command("demo")
def ridge_demo(
    records: int = number_option(1000, "--records", bound=RECORDS, maximum=MAX_DEMO_RECORDS,
                                 help="Records of the generated data set."),
    d: int = number_option(20, "--d", bound=FEATURES, help="Features of the generated data set."),
    providers: int = number_option(1, "--providers", bound=PROVIDERS, maximum=MAX_PARTIES,
                                   help="Providers, each with a contiguous part of the data."),
    mode: str = typer.Option("per-record", "--mode", help="per-record or per-provider."),
    data: Optional[str] = typer.Option(None, "--data", help="generate:n=N[,seed=S] | csv:PATH | diabetes "
                                                            "(default: generated, --records x --d)."),
    seed: int = number_option(1, "--seed", bound=SEED, help="Seed of the generated data."),
    lam: float = number_option(1.0, "--lam", bound=LAMBDA, help="Ridge lambda (scikit-learn's alpha)."),
    frac_bits: int = number_option(16, "--frac-bits", bound=FRACTION_BITS, help="Fixed-point fractional bits."),
    upload_bits: int = number_option(2048, "--upload-bits", bound=KEY_BITS,
                                     help="Upload key size (the QAT Paillier paper's 1024 needs --insecure-study-size)."),
    insecure_study_size: bool = typer.Option(False, "--insecure-study-size",
                                             help="Allow an upload key below 112-bit security (a study size, e.g. the paper's 1024)."),
    batch: int = number_option(1000, "--batch", bound=BATCH, maximum=MAX_BATCH, help="Records per upload."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write the result as JSON."),
    workdir: Optional[Path] = typer.Option(None, "--workdir", help="Keep the platform database here (default: a temporary folder)."),
    insecure_http: bool = typer.Option(False, "--insecure-http", help="Plain http between the parties (default: TLS "
                                       "with a certificate made for this run)."),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bar."),
) -> None:
    """Everything on this machine: CSP and platform as subprocesses, providers, buyer, check against scikit-learn."""
    from cryptoffload.apps.ridge.protocol import check_upload_mode
    from cryptoffload.apps.ridge.provider import check_data_spec
    from cryptoffload.crypto.paillier import check_key_bits

    check_int("--records", records, maximum=MAX_DEMO_RECORDS)
    check_int("--d", d, maximum=64)
    check_int("--providers", providers, maximum=MAX_PARTIES)
    check_upload_mode(mode)
    if data is not None:
        check_data_spec(data)
    check_seed("--seed", seed)
    check_bounded("--lam", lam, LAMBDA, allow_zero=True)
    check_key_bits(upload_bits, insecure_study_size=True)
    check_int("--batch", batch, maximum=MAX_BATCH)
    if out is not None:
        check_not_input("--out", out, [("--data", data[4:] if data and data.startswith("csv:") else None)])
        check_output_file(out)
    if workdir is not None:
        check_output_folder(workdir)
    from cryptoffload.apps.ridge.accuracy import Z_MARGIN
    from cryptoffload.apps.ridge.demo import run_demo

    def say(text: str) -> None:
        err_console.print(text, markup=False, highlight=False)

    with _ridge_progress(not no_progress) as make:
        result = run_demo(records=records, d=d, providers=providers, mode=mode, data=data, seed=seed, lam=lam,
                          frac_bits=frac_bits, upload_bits=upload_bits, insecure_study_size=insecure_study_size,
                          batch=batch, workdir=workdir, insecure_http=insecure_http, make_progress=lambda k: make(f"provider {k + 1}"), say=say)
    diff = result.abs_diff
    _ridge_coef_table(f"ridge over Paillier vs scikit-learn Ridge(alpha={lam:g}, fit_intercept=False), "
                      f"{result.records:,} records, d = {result.params.d}, {providers} provider(s), {mode}",
                      ["j", "ours", "scikit-learn", "|diff|"],
                      [[str(j), f"{a:.10g}", f"{b:.10g}", f"{c:.2e}"]
                       for j, (a, b, c) in enumerate(zip(result.coef, result.sklearn, diff))])
    console.print(f"max |ours - sklearn| = {result.max_abs_diff:.3e}: "
                  f"{'within' if result.within_expected else 'BEYOND'} the fixed-point error expected "
                  f"({result.expected:.3e}, {Z_MARGIN:g} standard deviations); ||diff||_2 = {result.l2_diff:.3e}, "
                  f"guaranteed worst-case bound {result.bound:.3e}")
    t = result.timings
    console.print("timings (s): " + ", ".join(f"{k} {v:.2f}" for k, v in t.items()))
    if out is not None:
        write_json(out, result.to_dict())
        console.print(f"wrote {out}", markup=False)
