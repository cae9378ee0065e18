"""Measurements of nginx in the four modes, with the real client programs.

* :func:`fetch_series` -- the paper's measurement: one client process (curl or wget) per fetch,
  ``count`` fetches ``interval_s`` apart, mean and standard deviation. Real binaries rather
  than a Python client because the client's TLS stack is part of what is timed (wget's GnuTLS
  adds a ~40 ms Nagle/delayed-ACK stall to small HTTPS fetches that curl does not).
* :func:`interleaved_bench` -- all modes at once, one server each, run in small blocks in a
  seeded random order, so a noisy neighbour or a frequency change hits every mode alike instead
  of whichever mode happened to run at that minute; plus the server workers' CPU time per
  request and what each mode really ran (:func:`~cryptoffload.apps.tls.detect.verify_mode`).
* :func:`wrk_load` -- throughput and latency percentiles under concurrent load (wrk),
  :func:`clients_at_latency_target` -- how many connections fit under a latency target.
* :func:`run_bench` -- all of it on generated files, as ``cryptoffload tls bench`` and the
  study call it.
"""

from __future__ import annotations

import hashlib
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence

from cryptoffload.apps.tls.detect import KtlsSupport, detect_ktls, read_tls_stat, tls_stat_delta, verify_mode
from cryptoffload.apps.tls.nginx import NginxServer, check_mode
from cryptoffload.checks import JsonDict
from cryptoffload.errors import BackendUnavailable, ConfigError, CryptoffloadError

CLIENTS: tuple[str, ...] = ("curl", "wget")
_PACKAGES = {"curl": "curl", "wget": "wget", "wrk": "wrk"}

#: ``run_bench`` settings of a full run (the paper: 100 fetches 100 ms apart) and of ``--quick``
#: (a 2-mode x 2-file x 2-client bench and a short wrk sweep in well under a minute).
FULL_SETTINGS: dict[str, Any] = dict(count=100, interval_s=0.1, block=10, wrk_connections=(1, 2, 4, 8, 16, 32, 64),
                                     wrk_duration_s=5.0)
QUICK_SETTINGS: dict[str, Any] = dict(count=10, interval_s=0.05, block=5, wrk_connections=(1, 4, 16),
                                      wrk_duration_s=1.0)

Progress = Callable[[int], Callable[[str], None]]


class FetchError(CryptoffloadError):
    """A client could not fetch a file, or fetched other bytes than the file's: the numbers of
    that series would time something else, so the series stops with the client's message."""


def _binary(name: str) -> str:
    exe = shutil.which(name)
    if exe is None:
        raise BackendUnavailable(f"{name} not found on PATH; install the Debian package '{_PACKAGES[name]}'")
    return exe


def _client_env() -> dict[str, str]:
    """No proxies (loopback must not go through one) and the C locale (curl prints 0.001, not 0,001)."""
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("http_proxy", "https_proxy", "all_proxy")}
    env["LC_ALL"] = "C"
    return env


def parse_size(text: str) -> int:
    """``"2K"`` -> 2048, ``"64M"`` -> 67108864, ``"1G"``, or plain bytes; ConfigError otherwise."""
    m = re.fullmatch(r"\s*(\d{1,12})\s*([KMG]?)i?B?\s*", text, re.I | re.ASCII)  # ASCII: the one grammar
    if not m or int(m[1]) <= 0:
        raise ConfigError(f"bad file size {text!r}; use e.g. 2K, 64M, 1G or bytes")
    return int(m[1]) << {"": 0, "K": 10, "M": 20, "G": 30}[m[2].upper()]


def size_label(size: int) -> str:
    """2048 -> ``"2K"``, 67108864 -> ``"64M"``, 1000 -> ``"1000B"``."""
    for shift, unit in ((30, "G"), (20, "M"), (10, "K")):
        if size % (1 << shift) == 0:
            return f"{size >> shift}{unit}"
    return f"{size}B"


def make_files(docroot: Path, sizes: Sequence[int], seed: int = 1) -> list[Path]:
    """Random (incompressible, seeded) files ``<label>.bin`` of the given sizes in ``docroot``."""
    docroot.mkdir(parents=True, exist_ok=True)
    out = []
    for i, size in enumerate(sizes):
        path = docroot / f"{size_label(size)}.bin"
        path.write_bytes(random.Random(seed * 1_000_003 + i).randbytes(size))
        out.append(path)
    return out


def file_sha256(path: Path) -> str:
    """sha256 of a file; ConfigError when it cannot be read."""
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    return h.hexdigest()


# ---- one series of fetches -------------------------------------------------------------------
@dataclass
class FetchStats:
    """Timings of one series: ``samples`` are the client's own (curl's ``time_total``; for wget,
    which reports none, the wall time of its process), ``wall_samples`` the process wall time
    for both, so the clients can be compared on the same footing. Seconds."""

    url: str
    client: str
    samples: list[float]
    wall_samples: list[float]
    interval_s: float
    sha256_ok: Optional[bool] = None
    bytes: Optional[int] = None
    phases: list[dict[str, float]] = field(default_factory=list)

    def phase_means(self) -> dict[str, float]:
        """Mean seconds of each phase of a fetch, from curl's own timers (empty for wget, which
        has none): ``connect`` (TCP), ``handshake`` (TLS, 0 for plain HTTP), ``first_byte`` (from
        the handshake's end to the response's first byte), ``transfer`` (the rest)."""
        if not self.phases:
            return {}
        return {k: statistics.fmean(p[k] for p in self.phases) for k in self.phases[0]}

    @property
    def count(self) -> int:
        return len(self.samples)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.samples) if self.samples else math.nan

    @property
    def std(self) -> float:
        """Sample standard deviation (0 for one sample)."""
        return statistics.stdev(self.samples) if len(self.samples) > 1 else 0.0

    def to_dict(self) -> JsonDict:
        d = asdict(self)
        d.update(count=self.count, mean=self.mean, std=self.std, phase_means=self.phase_means())
        return d


def _client_cmd(client: str, url: str, cafile: Optional[Path], out: str) -> list[str]:
    if client == "curl":
        cmd = [_binary("curl"), "-s", "-S", "-f", "--noproxy", "*", "-o", out, "-w",
               "%{time_total} %{time_connect} %{time_appconnect} %{time_starttransfer}"]
        if cafile is not None:
            cmd += ["--cacert", str(cafile)]
        return cmd + [url]
    if client == "wget":
        cmd = [_binary("wget"), "--no-config", "-q", "--no-hsts", "--no-proxy", "-O", out]
        if cafile is not None:
            cmd += [f"--ca-certificate={cafile}"]
        return cmd + [url]
    raise ConfigError(f"unknown client {client!r}; choose one of {', '.join(CLIENTS)}")


def _curl_phases(total: float, connect: float, appconnect: float, starttransfer: float) -> dict[str, float]:
    """curl's cumulative timers as the durations of a fetch's phases (appconnect is 0 without TLS)."""
    tls_done = appconnect if appconnect > 0 else connect
    return {"connect": connect, "handshake": tls_done - connect, "first_byte": starttransfer - tls_done,
            "transfer": total - starttransfer}


def _run_client(client: str, url: str, cafile: Optional[Path], out: str,
                timeout_s: float) -> tuple[float, float, dict[str, float]]:
    """One fetch: (client's time, wall time) in seconds, and curl's phases (empty for wget)."""
    cmd = _client_cmd(client, url, cafile, out)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, env=_client_env())
    except subprocess.TimeoutExpired:
        raise FetchError(f"{client} took over {timeout_s:g} s to fetch {url}") from None
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        msg = " ".join(proc.stderr.split())[:300] or "no message"
        raise FetchError(f"{client} failed to fetch {url} (exit {proc.returncode}): {msg}")
    if client == "curl":
        try:
            total, connect, appconnect, start = (float(x) for x in proc.stdout.split())
        except ValueError:
            raise FetchError(f"curl printed no times for {url}: {proc.stdout[:100]!r}") from None
        return total, wall, _curl_phases(total, connect, appconnect, start)
    return wall, wall, {}


def verify_download(url: str, client: str, cafile: Optional[Path], expected_sha256: str,
                    timeout_s: float = 300.0) -> int:
    """Fetch once into a temporary file and compare its sha256; returns the byte count.

    Why once per series and not per fetch: hashing 64 MB in every timed fetch would time the
    hash; the timed fetches write to /dev/null like the paper's.
    """
    with tempfile.TemporaryDirectory(prefix="cryptoffload-fetch-") as tmp:
        target = Path(tmp) / "body"
        _run_client(client, url, cafile, str(target), timeout_s)
        got = file_sha256(target)
        size = target.stat().st_size
    if got != expected_sha256:
        raise FetchError(f"{client} fetched {size} bytes from {url} whose sha256 {got[:16]}... "
                         f"differs from the file's {expected_sha256[:16]}...")
    return size


def client_startup_s(client: str, count: int = 5, timeout_s: float = 30.0) -> float:
    """Median wall time of one client process that starts, initialises its TLS library (wget
    loads the system's CA store here) and fails at once on a closed loopback port: the part of
    a wget fetch that no server-side mode changes."""
    if count < 1:
        raise ConfigError(f"count must be >= 1, got {count!r}")
    url = "https://127.0.0.1:1/"
    cmd = ([_binary("wget"), "-q", "-t", "1", "--no-check-certificate", "-O", os.devnull, url] if client == "wget"
           else [_binary("curl"), "-s", "-k", "--noproxy", "*", "-o", os.devnull, url] if client == "curl" else None)
    if cmd is None:
        raise ConfigError(f"unknown client {client!r}; choose one of {', '.join(CLIENTS)}")
    times = []
    for _ in range(count):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_client_env(), timeout=timeout_s)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def fetch_series(url: str, client: str = "curl", count: int = 100, interval_s: float = 0.1,
                 cafile: Optional[Path] = None, *, expected_sha256: Optional[str] = None,
                 expected_file: Optional[Path] = None, timeout_s: float = 300.0) -> FetchStats:
    """``count`` fetches of ``url`` with the real ``client``, ``interval_s`` apart.

    With ``expected_file`` (or ``expected_sha256``) one extra, untimed fetch first checks the
    bytes. ``cafile`` is the server's certificate for https URLs.
    """
    if client not in CLIENTS:
        raise ConfigError(f"unknown client {client!r}; choose one of {', '.join(CLIENTS)}")
    if count < 1:
        raise ConfigError(f"count must be >= 1, got {count}")
    if interval_s < 0:
        raise ConfigError(f"interval must be >= 0 s, got {interval_s}")
    if expected_file is not None and expected_sha256 is None:
        expected_sha256 = file_sha256(expected_file)
    stats = FetchStats(url=url, client=client, samples=[], wall_samples=[], interval_s=interval_s)
    if expected_sha256 is not None:
        stats.bytes = verify_download(url, client, cafile, expected_sha256, timeout_s)
        stats.sha256_ok = True
    for i in range(count):
        if i:
            time.sleep(interval_s)
        t, wall, phases = _run_client(client, url, cafile, os.devnull, timeout_s)
        stats.samples.append(t)
        stats.wall_samples.append(wall)
        if phases:
            stats.phases.append(phases)
    return stats


# ---- servers for several modes ---------------------------------------------------------------
@contextmanager
def mode_servers(modes: Sequence[str], docroot: Path, **kwargs: Any) -> Iterator[dict[str, NginxServer]]:
    """One running nginx per mode (each on its own free port), all stopped on exit."""
    for m in modes:
        check_mode(m)
    with ExitStack() as stack:
        yield {m: stack.enter_context(NginxServer(m, docroot, **kwargs)) for m in modes}


# ---- the interleaved bench -------------------------------------------------------------------
@dataclass
class CellResult:
    """One (mode, file, client) combination of the bench: its timings and its server's CPU."""

    mode: str
    file: str
    size: int
    client: str
    stats: FetchStats
    cpu_s: float = 0.0          # worker CPU during this cell's blocks (best source available)
    cpu_tick_s: float = 0.0     # the same from /proc/<pid>/stat utime+stime (10 ms ticks)

    @property
    def requests(self) -> int:
        return self.stats.count

    def to_dict(self) -> JsonDict:
        return {"mode": self.mode, "file": self.file, "size": self.size, "client": self.client,
                "requests": self.requests, "mean_s": self.stats.mean, "std_s": self.stats.std,
                "cpu_s": self.cpu_s, "cpu_tick_s": self.cpu_tick_s,
                "cpu_ms_per_request": 1e3 * self.cpu_s / self.requests if self.requests else None,
                "stats": self.stats.to_dict()}


@dataclass
class BenchResult:
    """Everything :func:`interleaved_bench` measured; ``verified`` says what each mode ran."""

    modes: list[str]
    files: dict[str, int]
    clients: list[str]
    count: int
    interval_s: float
    seed: int
    block: int
    cells: list[CellResult]
    order: list[tuple[str, str, str, int]]
    verified: dict[str, str]
    tls_stat_delta: dict[str, dict[str, int]]
    cpu_source: str
    elapsed_s: float
    support: Optional[JsonDict] = None

    def cell(self, mode: str, file: str, client: str) -> CellResult:
        for c in self.cells:
            if (c.mode, c.file, c.client) == (mode, file, client):
                return c
        raise KeyError((mode, file, client))

    def cpu_ms_per_request(self) -> dict[str, float]:
        """Worker CPU ms per request, per mode, over all files and clients of that mode."""
        out = {}
        for m in self.modes:
            cells = [c for c in self.cells if c.mode == m]
            n = sum(c.requests for c in cells)
            out[m] = 1e3 * sum(c.cpu_s for c in cells) / n if n else math.nan
        return out

    def cpu_ms_per_request_by_file(self) -> dict[str, dict[str, float]]:
        """Worker CPU ms per request, per mode and file (a 64 MB file dominates the per-mode mean)."""
        out: dict[str, dict[str, float]] = {}
        for m in self.modes:
            out[m] = {}
            for f in self.files:
                cells = [c for c in self.cells if c.mode == m and c.file == f]
                n = sum(c.requests for c in cells)
                out[m][f] = 1e3 * sum(c.cpu_s for c in cells) / n if n else math.nan
        return out

    def to_dict(self) -> JsonDict:
        return {"modes": self.modes, "files": self.files, "clients": self.clients, "count": self.count,
                "interval_s": self.interval_s, "seed": self.seed, "block": self.block,
                "cells": [c.to_dict() for c in self.cells], "order": [list(o) for o in self.order],
                "verified": self.verified, "tls_stat_delta": self.tls_stat_delta, "cpu_source": self.cpu_source,
                "cpu_ms_per_request": self.cpu_ms_per_request(),
                "cpu_ms_per_request_by_file": self.cpu_ms_per_request_by_file(),
                "elapsed_s": self.elapsed_s, "support": self.support}


def block_order(combos: Sequence[tuple[str, str, str]], count: int, block: int,
                seed: int) -> list[tuple[str, str, str, int]]:
    """The bench's schedule: rounds of one block (``block`` fetches, fewer at the end) of every
    (mode, file, client), each round in its own seeded random order, until each has ``count``.

    Why rounds and not one shuffle of all blocks: every combination then advances at the same
    pace, so slow drifts (thermal, a neighbour's job) are spread evenly over all of them.
    """
    rng = random.Random(seed)
    remaining = {k: count for k in combos}
    out: list[tuple[str, str, str, int]] = []
    while any(remaining.values()):
        todo = [k for k in combos if remaining[k]]
        rng.shuffle(todo)
        for k in todo:
            n = min(block, remaining[k])
            remaining[k] -= n
            out.append((k[0], k[1], k[2], n))
    return out


def _cpu_snapshot(server: NginxServer) -> tuple[Optional[int], float]:
    return server.worker_cpu_ns(), server.worker_cpu_seconds()


def interleaved_bench(modes: Sequence[str], files: Sequence[Path], clients: Sequence[str] = ("curl",),
                      count: int = 100, interval_s: float = 0.1, seed: int = 1, *, block: int = 10,
                      servers: Optional[Mapping[str, NginxServer]] = None, support: Optional[KtlsSupport] = None,
                      progress: Optional[Progress] = None) -> BenchResult:
    """``count`` timed fetches per (mode, file, client), the modes interleaved.

    The fetches run in blocks of ``block``; each round runs one block of every combination in
    an order shuffled with ``seed``, ``interval_s`` between any two fetches. One server per mode
    stays up throughout (``servers``, else started here on the files' folder). Around each block
    the serving workers' CPU time and the kernel's kTLS counters are read, so CPU per request
    and kTLS evidence are attributed to the mode that ran. Each combination's bytes are checked
    once (sha256, untimed) before its first block.
    """
    modes, paths = _check_bench(modes, files, clients, count, block, interval_s)
    docroot = paths[0].parent
    sha = {p.name: file_sha256(p) for p in paths}
    sizes = {p.name: p.stat().st_size for p in paths}
    support = support if support is not None else detect_ktls()

    with ExitStack() as stack:
        if servers is None:
            servers = stack.enter_context(mode_servers(modes, docroot))
        missing = [m for m in modes if m not in servers]
        if missing:
            raise ConfigError(f"no server given for mode(s) {', '.join(missing)}")
        t_start = time.perf_counter()
        combos = [(m, p.name, c) for m in modes for p in paths for c in clients]
        cells = _empty_cells(combos, sizes, servers, interval_s)
        stat_delta: dict[str, dict[str, int]] = {m: {} for m in modes}
        order = block_order(combos, count, block, seed)
        advance = progress(len(order)) if progress is not None else None
        use_ns = all(servers[m].worker_cpu_ns() is not None for m in modes)
        for i, (mode, fname, client, n) in enumerate(order):
            srv, cell = servers[mode], cells[(mode, fname, client)]
            if cell.stats.sha256_ok is None:
                cell.stats.bytes = verify_download(srv.url + fname, client, srv.cert_path, sha[fname])
                cell.stats.sha256_ok = True
            if i:
                time.sleep(interval_s)
            _run_block(srv, cell, fname, client, n, interval_s, use_ns, stat_delta[mode])
            if advance is not None:
                advance(f"{mode} {size_label(sizes[fname])} {client}")
        elapsed = time.perf_counter() - t_start
        verified = _verify_modes(modes, stat_delta, servers, support)
    return BenchResult(modes=list(modes), files=sizes, clients=list(clients), count=count, interval_s=interval_s,
                       seed=seed, block=block, cells=[cells[k] for k in combos], order=order, verified=verified,
                       tls_stat_delta=stat_delta,
                       cpu_source="schedstat (ns)" if use_ns else "stat utime+stime (clock ticks)",
                       elapsed_s=elapsed, support=support.to_dict())


def _check_bench(modes: Sequence[str], files: Sequence[Path], clients: Sequence[str], count: int, block: int,
                 interval_s: float) -> tuple[list[str], list[Path]]:
    """The bench's modes and resolved files, every argument checked (clients installed, the
    files in one folder)."""
    modes = [check_mode(m) for m in modes]
    if not modes or not files or not clients:
        raise ConfigError("the bench needs at least one mode, one file and one client")
    if len(set(modes)) != len(modes):
        raise ConfigError(f"modes repeated: {', '.join(modes)}")
    for c in clients:
        if c not in CLIENTS:
            raise ConfigError(f"unknown client {c!r}; choose one of {', '.join(CLIENTS)}")
        _binary(c)
    if count < 1 or block < 1:
        raise ConfigError(f"count and block must be >= 1 (got {count}, {block})")
    if interval_s < 0:
        raise ConfigError(f"interval must be >= 0 s, got {interval_s}")
    paths = [Path(f).resolve() for f in files]
    docroot = paths[0].parent
    if any(p.parent != docroot for p in paths):
        raise ConfigError("all bench files must be in one folder (the server's document root)")
    return modes, paths


def _empty_cells(combos: Sequence[tuple[str, str, str]], sizes: Mapping[str, int],
                 servers: Mapping[str, NginxServer], interval_s: float) -> dict[tuple[str, str, str], CellResult]:
    return {k: CellResult(k[0], k[1], sizes[k[1]], k[2],
                          FetchStats(url=servers[k[0]].url + k[1], client=k[2], samples=[], wall_samples=[],
                                     interval_s=interval_s)) for k in combos}


def _run_block(srv: NginxServer, cell: CellResult, fname: str, client: str, n: int, interval_s: float,
               use_ns: bool, stat_delta: dict[str, int]) -> None:
    """One block of ``n`` timed fetches, with the serving workers' CPU time and the kernel's
    kTLS counters read around it and added to the cell and the mode."""
    ns0, tick0 = _cpu_snapshot(srv)
    st0 = read_tls_stat()
    s = fetch_series(srv.url + fname, client, n, interval_s, srv.cert_path)
    st1 = read_tls_stat()
    ns1, tick1 = _cpu_snapshot(srv)
    cell.stats.samples += s.samples
    cell.stats.wall_samples += s.wall_samples
    cell.stats.phases += s.phases
    cell.cpu_tick_s += tick1 - tick0
    cell.cpu_s += (ns1 - ns0) / 1e9 if use_ns and ns0 is not None and ns1 is not None else tick1 - tick0
    for k, v in tls_stat_delta(st0, st1).items():
        stat_delta[k] = stat_delta.get(k, 0) + v


def _verify_modes(modes: Sequence[str], stat_delta: Mapping[str, dict[str, int]],
                  servers: Mapping[str, NginxServer], support: KtlsSupport) -> dict[str, str]:
    """Each mode's evidence that it ran as named (kTLS counters, the servers' access logs)."""
    verified = {}
    for m in modes:
        have_stat = bool(stat_delta[m])
        before = {k: 0 for k in stat_delta[m]} if have_stat else {}
        verified[m] = verify_mode(m, before, stat_delta[m], access_entries=servers[m].access_entries(),
                                  support=support)
    return verified


# ---- wrk -------------------------------------------------------------------------------------
@dataclass
class WrkResult:
    """One wrk run: throughput and latency (milliseconds) at ``connections`` open connections."""

    url: str
    connections: int
    threads: int
    duration_s: float
    requests: int
    requests_per_s: float
    transfer_bytes_per_s: Optional[float]
    latency_avg_ms: float
    latency_stdev_ms: Optional[float]
    latency_max_ms: Optional[float]
    p50_ms: Optional[float]
    p75_ms: Optional[float]
    p90_ms: Optional[float]
    p99_ms: Optional[float]
    non_2xx: int = 0
    socket_errors: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> JsonDict:
        return asdict(self)


_TIME_UNITS_MS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3, "h": 3600e3}
_BYTE_UNITS = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}


def _ms(text: str) -> float:
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m|h)", text)
    if not m:
        raise ValueError(text)
    return float(m[1]) * _TIME_UNITS_MS[m[2]]


def parse_wrk_output(text: str) -> dict[str, Any]:
    """wrk's report (run with ``--latency``) -> numbers in ms, bytes and requests per second.

    wrk prints latencies with their own unit (``67.23us``, ``1.20ms``, ``2.00s``) and sizes
    as ``136.14MB``; everything is normalised. Raises ValueError when the report has no
    ``Requests/sec`` line (wrk failed).
    """
    out: dict[str, Any] = {"p50_ms": None, "p75_ms": None, "p90_ms": None, "p99_ms": None,
                           "latency_stdev_ms": None, "latency_max_ms": None, "transfer_bytes_per_s": None,
                           "non_2xx": 0, "socket_errors": {}, "requests": 0}
    m = re.search(r"^Requests/sec:\s*([\d.]+)", text, re.M)
    if not m:
        raise ValueError("no 'Requests/sec' in wrk output")
    out["requests_per_s"] = float(m[1])
    m = re.search(r"^\s*Latency\s+([\d.]+\w+)\s+([\d.]+\w+)\s+([\d.]+\w+)", text, re.M)
    if not m:
        raise ValueError("no latency line in wrk output")
    out["latency_avg_ms"], out["latency_stdev_ms"], out["latency_max_ms"] = (_ms(m[1]), _ms(m[2]), _ms(m[3]))
    for pct in ("50", "75", "90", "99"):
        m = re.search(rf"^\s*{pct}%\s+([\d.]+\w+)", text, re.M)
        if m:
            out[f"p{pct}_ms"] = _ms(m[1])
    m = re.search(r"^\s*(\d+) requests in", text, re.M)
    if m:
        out["requests"] = int(m[1])
    m = re.search(r"^Transfer/sec:\s*([\d.]+)(B|KB|MB|GB|TB)", text, re.M)
    if m:
        out["transfer_bytes_per_s"] = float(m[1]) * _BYTE_UNITS[m[2]]
    m = re.search(r"Non-2xx or 3xx responses:\s*(\d+)", text)
    if m:
        out["non_2xx"] = int(m[1])
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if m:
        out["socket_errors"] = dict(zip(("connect", "read", "write", "timeout"), map(int, m.groups())))
    return out


def wrk_load(url: str, connections_list: Sequence[int], duration_s: float = 5.0, threads: int = 2,
             timeout_s: float = 5.0) -> list[WrkResult]:
    """wrk at each connection count (``--latency``), one run after the other.

    wrk needs at least as many connections as threads, so threads are capped by connections.
    wrk does not verify certificates, so https URLs of the self-signed server work as is.
    """
    exe = _binary("wrk")
    if not connections_list or any(c < 1 for c in connections_list):
        raise ConfigError(f"connection counts must be >= 1, got {list(connections_list)}")
    if duration_s <= 0:
        raise ConfigError(f"wrk duration must be > 0 s, got {duration_s}")
    dur = max(1, round(duration_s))
    out = []
    for conns in connections_list:
        t = max(1, min(threads, conns))
        cmd = [exe, f"-t{t}", f"-c{conns}", f"-d{dur}s", f"--timeout={max(1, round(timeout_s))}s", "--latency", url]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=dur + timeout_s + 30,
                                  env=_client_env())
        except subprocess.TimeoutExpired:
            raise FetchError(f"wrk did not finish against {url}") from None
        try:
            parsed = parse_wrk_output(proc.stdout)
        except ValueError:
            msg = " ".join((proc.stderr or proc.stdout).split())[:300] or f"exit {proc.returncode}"
            raise FetchError(f"wrk failed against {url}: {msg}") from None
        out.append(WrkResult(url=url, connections=conns, threads=t, duration_s=float(dur), **parsed))
    return out


def clients_at_latency_target(results: Sequence[WrkResult], target_ms: float, percentile: str = "p99") -> Optional[int]:
    """The largest connection count whose ``percentile`` latency meets ``target_ms``, counting
    up from the smallest and stopping at the first miss (a lucky point past a miss is noise,
    not capacity). None when even the smallest misses. Runs with errors or non-2xx answers
    count as misses."""
    if percentile not in ("p50", "p75", "p90", "p99", "avg"):
        raise ConfigError(f"unknown percentile {percentile!r}")
    best = None
    for r in sorted(results, key=lambda r: r.connections):
        lat = r.latency_avg_ms if percentile == "avg" else getattr(r, f"{percentile}_ms")
        failed = r.non_2xx > 0 or any(r.socket_errors.values())
        if lat is None or lat > target_ms or failed:
            break
        best = r.connections
    return best


# ---- everything ------------------------------------------------------------------------------
@dataclass
class TlsBenchResult:
    """:func:`run_bench`'s result: the interleaved bench and the wrk sweep of every mode."""

    bench: BenchResult
    wrk: dict[str, list[WrkResult]]
    wrk_file: str
    latency_target_ms: float
    support: KtlsSupport
    elapsed_s: float

    def max_requests_per_s(self) -> dict[str, float]:
        return {m: max((r.requests_per_s for r in rs), default=math.nan) for m, rs in self.wrk.items()}

    def clients_at_target(self) -> dict[str, Optional[int]]:
        return {m: clients_at_latency_target(rs, self.latency_target_ms) for m, rs in self.wrk.items()}

    def to_dict(self) -> JsonDict:
        return {"bench": self.bench.to_dict(), "wrk": {m: [r.to_dict() for r in rs] for m, rs in self.wrk.items()},
                "wrk_file": self.wrk_file, "latency_target_ms": self.latency_target_ms,
                "max_requests_per_s": self.max_requests_per_s(), "clients_at_latency_target": self.clients_at_target(),
                "elapsed_s": self.elapsed_s}


def run_bench(modes: Sequence[str] = ("plain", "tls", "ktls"), sizes: Sequence[int] = (2048, 64 << 20),
              clients: Sequence[str] = CLIENTS, *, count: int = 100, interval_s: float = 0.1, seed: int = 1,
              block: int = 10, wrk_connections: Sequence[int] = FULL_SETTINGS["wrk_connections"],
              wrk_duration_s: float = 5.0, wrk_threads: int = 2, latency_target_ms: float = 10.0,
              docroot: Optional[Path] = None, progress: Optional[Progress] = None) -> TlsBenchResult:
    """Generate the files (random bytes, seeded) into a temporary document root, run
    :func:`interleaved_bench` on them and then a wrk sweep of every mode on the smallest file
    (request rate is what matters for small files; a large file measures bandwidth instead).
    ``wrk_connections=()`` skips wrk."""
    for m in modes:
        check_mode(m)
    if not sizes:
        raise ConfigError("at least one file size is needed")
    if wrk_connections:
        _binary("wrk")
    t0 = time.perf_counter()
    support = detect_ktls()
    with ExitStack() as stack:
        if docroot is None:
            docroot = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="cryptoffload-docroot-")))
        files = make_files(Path(docroot), sizes, seed)
        small = min(files, key=lambda p: p.stat().st_size)
        with mode_servers(modes, Path(docroot)) as servers:
            bench = interleaved_bench(modes, files, clients, count, interval_s, seed, block=block, servers=servers,
                                      support=support, progress=progress)
            wrk: dict[str, list[WrkResult]] = {}
            if wrk_connections:
                order = list(modes)
                random.Random(seed + 1).shuffle(order)  # no mode always first (cold) or last
                for m in order:
                    wrk[m] = wrk_load(servers[m].url + small.name, wrk_connections, wrk_duration_s, wrk_threads)
                wrk = {m: wrk[m] for m in modes}
    return TlsBenchResult(bench=bench, wrk=wrk, wrk_file=small.name, latency_target_ms=latency_target_ms,
                          support=support, elapsed_s=time.perf_counter() - t0)
