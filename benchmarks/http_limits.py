"""Benchmark: the servers' memory and responsiveness under oversized request bodies (issue 12,
attack 4), measured on the real processes.

Issue 12 reported: four 200 MiB bodies to the ridge platform took it to a 1.6 GB peak and froze
``/status`` for 3.7 s (bodies read, then parsed as JSON on the event loop); three 900 MB posts to
a missing HE-CNN session left 5.5 GB resident (up to 1 GiB read on every route before the
session was looked up). This script replays those attacks, and their variants with a valid
token and with chunked bodies (no ``Content-Length``), against a ridge CSP + platform and an
HE-CNN server started as ``cryptoffload`` subprocesses on loopback (plain http: the bodies,
not TLS, are the subject), and reads each server's peak resident memory (``VmHWM``, reset
through ``/proc/<pid>/clear_refs`` before each attack) and resident memory afterwards, while a
thread times ``GET /status`` (ridge) or ``GET /v1/info`` (HE-CNN) every 50 ms.

    .venv/bin/python benchmarks/http_limits.py

Writes benchmarks/results/http_limits.json (with the machine) and prints a table.
"""

from __future__ import annotations

import socket
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Callable

from rich.console import Console
from rich.table import Table

from cryptoffload.bench import save_results
from server_process import ServerProcess
from cryptoffload.machine import machine_info

RESULTS = Path(__file__).resolve().parent / "results"
MiB = 2**20
CHUNK = MiB


def Server(args: list[str], cwd: Path) -> ServerProcess:
    """A ``cryptoffload`` server subprocess (``server.url`` from its "listening on" line)."""
    return ServerProcess(args, cwd)


def send_body(url: str, path: str, size: int, token: str | None, chunked: bool) -> tuple[int | None, int]:
    """POST ``size`` bytes of JSON-looking filler to ``path``; returns (status or None, bytes
    the server took before answering or closing)."""
    host, port = url.split("//")[1].rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=120)
    head = [f"POST {path} HTTP/1.1", f"Host: {host}", "Content-Type: application/json"]
    head.append("Transfer-Encoding: chunked" if chunked else f"Content-Length: {size}")
    if token:
        head.append(f"Authorization: Bearer {token}")
    sent = 0
    filler = b'{"pad":"' + b"x" * (CHUNK - 8)
    try:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        while sent < size:
            piece = filler[:min(CHUNK, size - sent)]
            sock.sendall(f"{len(piece):x}\r\n".encode() + piece + b"\r\n" if chunked else piece)
            sent += len(piece)
        if chunked:
            sock.sendall(b"0\r\n\r\n")
    except OSError:
        pass
    try:
        first = sock.recv(64).decode(errors="replace")
        status = int(first.split()[1]) if first.startswith("HTTP/") else None
    except (OSError, ValueError, IndexError):
        status = None
    sock.close()
    return status, sent


def attack(server: Server, probe: str, bodies: int, send: Callable[[], tuple[int | None, int]]) -> dict[str, object]:
    """``bodies`` concurrent ``send()`` while ``probe`` is timed; the server's peak and
    resident memory around it."""
    base = server.memory()
    server.reset_peak()
    latencies: list[float] = []
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            t = time.perf_counter()
            try:
                urllib.request.urlopen(probe, timeout=60).read()
            except OSError:
                pass
            latencies.append(time.perf_counter() - t)
            stop.wait(0.05)

    results: list[tuple[int | None, int]] = []
    prober = threading.Thread(target=poll)
    prober.start()
    t0 = time.perf_counter()
    threads = [threading.Thread(target=lambda: results.append(send())) for _ in range(bodies)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    seconds = time.perf_counter() - t0
    time.sleep(0.3)
    stop.set()
    prober.join()
    after = server.memory()
    return {"statuses": sorted(str(s) for s, _ in results), "sent_mib": round(sum(b for _, b in results) / MiB, 1),
            "seconds": round(seconds, 2), "rss_before_mib": round(base["VmRSS"] / MiB, 1),
            "peak_mib": round(after["VmHWM"] / MiB, 1), "rss_after_mib": round(after["VmRSS"] / MiB, 1),
            "probe_max_s": round(max(latencies), 3) if latencies else None}


def main() -> None:
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="http-limits-") as tmp:
        work = Path(tmp)
        csp = Server(["ridge", "csp", "--port", "0", "--d", "20", "--max-records", "100000", "--upload-bits", "2048",
                      "--key-dir", str(work / "csp"), "--insecure-http"], work)
        platform = Server(["ridge", "platform", "--port", "0", "--csp", csp.url, "--db", str(work / "p.db"),
                           "--csp-token-file", str(work / "csp" / "platform.token"), "--providers", "p1",
                           "--token-dir", str(work / "tokens"), "--insecure-http"], work)
        he = Server(["he-cnn", "serve", "--port", "0", "--token-dir", str(work / "he"), "--insecure-http"], work)
        try:
            provider = (work / "tokens" / "p1.token").read_text().strip()
            client = (work / "he" / "client.token").read_text().strip()
            status = platform.url + "/status"
            info = he.url + "/v1/info"
            cases = [
                ("ridge platform", "4 x 200 MiB, no token", platform, status, 4,
                 lambda: send_body(platform.url, "/message", 200 * MiB, None, False)),
                ("ridge platform", "4 x 200 MiB, provider token", platform, status, 4,
                 lambda: send_body(platform.url, "/message", 200 * MiB, provider, False)),
                ("ridge platform", "4 x 200 MiB chunked, provider token", platform, status, 4,
                 lambda: send_body(platform.url, "/message", 200 * MiB, provider, True)),
                ("ridge CSP", "4 x 200 MiB, no token", csp, csp.url + "/status", 4,
                 lambda: send_body(csp.url, "/message", 200 * MiB, None, False)),
                ("he-cnn server", "3 x 900 MB to a missing session", he, info, 3,
                 lambda: send_body(he.url, "/v1/sessions/missing/infer", 900_000_000, client, False)),
                ("he-cnn server", "3 x 900 MB chunked to a missing session", he, info, 3,
                 lambda: send_body(he.url, "/v1/sessions/missing/infer", 900_000_000, client, True)),
                ("he-cnn server", "3 x 900 MB to /v1/sessions, no token", he, info, 3,
                 lambda: send_body(he.url, "/v1/sessions", 900_000_000, None, False)),
            ]
            for name, what, server, probe, bodies, send in cases:
                rows.append({"server": name, "attack": what, **attack(server, probe, bodies, send)})
        finally:
            for s in (he, platform, csp):
                s.stop()
    table = Table(title="oversized request bodies: server memory and responsiveness (measured)")
    cols = ["server", "attack", "statuses", "sent_mib", "rss_before_mib", "peak_mib", "rss_after_mib", "probe_max_s"]
    for c in cols:
        table.add_column(c)
    for r in rows:
        table.add_row(*(str(r[c]) for c in cols))
    Console(width=170).print(table)
    out = {"benchmark": "http_limits", "machine": machine_info(), "provenance": "measured", "rows": rows,
           "reported_in_issue_12": {"ridge_4x200MiB_peak_gb": 1.6, "ridge_status_frozen_s": 3.7,
                                    "he_cnn_3x900MB_kept_gb": 5.5}}
    save_results(out, RESULTS / "http_limits.json", print)


if __name__ == "__main__":
    main()
