"""``cryptoffload tls``: nginx serving files as plain HTTP, TLS, kTLS or kTLS with NIC offload
(the four modes of the SmartNIC TLS offload paper): detect, serve, bench."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from cryptoffload.checks import (CONNECTIONS, COUNT, DURATION_MS, PORT, SEED, WAIT_S, WORKERS, check_host, check_int,
                                 split_list)
from cryptoffload.cli.root import console, number_option, progress_bar, warn
from cryptoffload.io import check_output_file, check_output_folder, write_json

app = typer.Typer(no_args_is_help=True,
                  help="nginx serving files as plain HTTP, TLS, kTLS or kTLS with NIC offload: detect, serve, bench.")

MAX_WORKERS = 256  # nginx worker processes
MAX_COUNT = 100_000  # fetches per mode, file and client
MAX_FILE_BYTES = 1 << 30  # each file is written to a temporary folder
MAX_CONNECTIONS = 10_000  # wrk connections (each an open socket)
MAX_SECONDS = 3600.0
MAX_GUEST_FILE_BYTES = 256 << 20  # the guest holds its files in memory (2 GiB)
#: Fetches per server in the guest for each size (emulated: a 64 MB TLS fetch takes 10-17 s):
#: at least 5 each, so a saving's band is a t-interval on 4 or more degrees of freedom
#: (studies/tls_offload/guest.py); the whole `make ktls` takes about 15 minutes on a shared 2-core machine.
GUEST_COUNTS = {2048: 10, 64 << 20: 6}
GUEST_DEFAULT_COUNT = 3


@app.command("detect")
def tls_detect(
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the findings as JSON."),
) -> None:
    """What this machine offers for kernel TLS (kernel ULP, tls_stat, NICs, nginx, OpenSSL), with reasons."""
    from cryptoffload.apps.tls.detect import detect_ktls
    from cryptoffload.apps.tls.tables import detect_table

    if json_out is not None:
        check_output_file(json_out, create_parents=True)
    support = detect_ktls()
    console.print(detect_table(support))
    reason = support.fallback_reason()
    console.print("kTLS requests here run as: " + (f"user-space TLS ({reason})" if reason else
                                                  "kTLS possible (verify with the tls_stat counters)"))
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        write_json(json_out, support.to_dict())
        console.print(f"wrote {json_out}", markup=False)


@app.command("serve")
def tls_serve(
    mode: str = typer.Option("tls", "--mode", help="plain, tls, ktls or ktls-nic."),
    root: Path = typer.Option(..., "--root", help="Folder to serve."),
    port: int = number_option(0, "--port", bound=PORT, help="Port (0: a free one)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    workers: int = number_option(1, "--workers", bound=WORKERS, maximum=MAX_WORKERS, help="nginx worker processes."),
) -> None:
    """Serve a folder with nginx until Ctrl-C, then say what really ran (kTLS or its fallback)."""
    from cryptoffload.apps.tls.detect import detect_ktls, predict_mode, read_tls_stat, verify_mode
    from cryptoffload.apps.tls.nginx import NginxServer, check_mode, serve_until_interrupted

    check_mode(mode)
    check_host("--host", host)
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
        warn("nginx ended on its own: " + (server.error_log_text().strip().splitlines() or ["no message"])[-1])
    console.print(f"stopped; {len(entries)} request(s) served", markup=False, highlight=False)
    console.print("verified: " + verify_mode(mode, before, after, access_entries=entries, support=support),
                  markup=False, highlight=False)
    if not interrupted:
        raise typer.Exit(1)


@app.command("bench")
def tls_bench(
    modes: str = typer.Option("plain,tls,ktls", "--modes", help="Comma-separated: plain, tls, ktls, ktls-nic."),
    count: Optional[int] = number_option(None, "--count", bound=COUNT, maximum=MAX_COUNT,
                                         help="Timed fetches per mode/file/client (default 100; quick 10)."),
    interval: Optional[float] = number_option(None, "--interval", bound=WAIT_S, maximum=MAX_SECONDS, allow_zero=True,
                                              help="Seconds between fetches (default 0.1; quick 0.05)."),
    block: Optional[int] = number_option(None, "--block", bound=COUNT, maximum=MAX_COUNT,
                                         help="Fetches per interleaved block (default 10; quick 5)."),
    sizes: str = typer.Option("2K,64M", "--sizes", help="Comma-separated file sizes (random bytes)."),
    clients: str = typer.Option("curl,wget", "--clients", help="Comma-separated: curl, wget."),
    seed: int = number_option(1, "--seed", bound=SEED, help="Seed of the files and of the interleaving order."),
    wrk_connections: Optional[str] = typer.Option(None, "--wrk-connections",
                                                   help="Comma-separated wrk connection counts (default 1..64; quick 1,4,16)."),
    wrk_duration: Optional[float] = number_option(None, "--wrk-duration", bound=WAIT_S, maximum=MAX_SECONDS,
                                                  help="Seconds per wrk run (default 5; quick 1)."),
    no_wrk: bool = typer.Option(False, "--no-wrk", help="Skip the wrk sweep."),
    latency_target_ms: float = number_option(10.0, "--latency-target-ms", bound=DURATION_MS,
                                             help="p99 target for 'clients at target'."),
    quick: bool = typer.Option(False, "--quick", help="Short settings (well under a minute for 2 modes)."),
    out: Path = typer.Option(Path("out/tls-bench"), "--out", help="Output folder (bench.json)."),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bar."),
    guest: bool = typer.Option(False, "--guest", help="Run in a Linux guest with kTLS (QEMU, emulated; `make ktls` sets "
                                                      "it up): plain, tls, ktls x TLS 1.2/1.3 with curl; writes "
                                                      "guest.json. Uses --count, --sizes, --seed, --out only."),
) -> None:
    """Fetch files from nginx in each mode, interleaved, with curl/wget; worker CPU per request; wrk sweep."""
    if guest:
        _guest_bench(count, sizes, seed, out)
        return
    from cryptoffload.apps.tls.measure import CLIENTS, FULL_SETTINGS, QUICK_SETTINGS, parse_size, run_bench
    from cryptoffload.apps.tls.nginx import check_mode
    from cryptoffload.apps.tls.tables import bench_tables
    from cryptoffload.errors import ConfigError

    mode_list = [check_mode(m) for m in split_list("--modes", modes)]
    size_list = [parse_size(s) for s in split_list("--sizes", sizes)]
    for size in size_list:
        check_int("--sizes (bytes)", size, maximum=MAX_FILE_BYTES)
    check_output_folder(out)
    client_list = split_list("--clients", clients)
    for name in client_list:
        if name not in CLIENTS:
            raise ConfigError(f"unknown client {name!r}; choose one of {', '.join(CLIENTS)}")
    base = QUICK_SETTINGS if quick else FULL_SETTINGS
    count_ = count if count is not None else base["count"]
    interval_ = interval if interval is not None else base["interval_s"]
    block_ = block if block is not None else base["block"]
    if no_wrk:
        conns: list[int] = []
    elif wrk_connections is not None:
        conns = [CONNECTIONS.parse("--wrk-connections", c, maximum=MAX_CONNECTIONS, allow_zero=False)
                 for c in split_list("--wrk-connections", wrk_connections)]
    else:
        conns = list(base["wrk_connections"])
    duration = wrk_duration if wrk_duration is not None else float(base["wrk_duration_s"])

    with progress_bar(not no_progress) as make:
        result = run_bench(mode_list, size_list, client_list, count=count_, interval_s=interval_, seed=seed,
                           block=block_, wrk_connections=conns, wrk_duration_s=duration,
                           latency_target_ms=latency_target_ms, progress=make)
    for table in bench_tables(result):
        console.print(table)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "bench.json", result.to_dict())
    console.print(f"wrote {out / 'bench.json'} ({result.elapsed_s:.1f} s)", markup=False)


def _guest_bench(count: Optional[int], sizes: str, seed: int, out: Path) -> None:
    """``tls bench --guest``: the fetch series in a guest whose kernel has kTLS; exit 1 when a
    kTLS fetch was not shown in the kernel by the counters (the JSON is written all the same)."""
    from cryptoffload.apps.tls.guest import run_in_guest, summarize, unverified_ktls
    from cryptoffload.apps.tls.measure import parse_size
    from cryptoffload.apps.tls.tables import guest_table

    size_list = [parse_size(s) for s in split_list("--sizes", sizes)]
    for size in size_list:
        check_int("--sizes (bytes)", size, maximum=MAX_GUEST_FILE_BYTES)
    counts = [count if count is not None else GUEST_COUNTS.get(s, GUEST_DEFAULT_COUNT) for s in size_list]
    check_output_folder(out)
    console.print("booting the guest (QEMU TCG; minutes under emulation)", markup=False, highlight=False)
    result = run_in_guest(["--sizes", ",".join(map(str, size_list)), "--counts", ",".join(map(str, counts)),
                           "--seed", str(seed)],
                          echo=lambda line: console.print(line, markup=False, highlight=False))
    console.print(guest_table(result))
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "guest.json", result)
    console.print(f"wrote {out / 'guest.json'} ({result['host']['wall_s']:.0f} s)", markup=False, highlight=False)
    bad = unverified_ktls(summarize(result))
    if bad:
        warn("kTLS not shown in the kernel by the counters for: " + "; ".join(bad))
        raise typer.Exit(1)
