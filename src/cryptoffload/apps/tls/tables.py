"""Terminal tables of kernel-TLS detection and of the nginx bench (``cryptoffload tls detect``
and ``tls bench`` print them).

Why rich tables rather than study tables: these describe one run on this machine -- per-cell
timings and what each mode really ran -- with no paper column beside them. Text from tools
("[fixed]" from ethtool, nginx's messages) is escaped so rich does not read it as markup.
"""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from rich.table import Table

from cryptoffload.apps.tls.detect import KtlsSupport
from cryptoffload.apps.tls.measure import TlsBenchResult, size_label


def detect_table(support: KtlsSupport) -> Table:
    """What this machine offers for kernel TLS, one row per finding, with the reason."""
    table = Table(title="kernel TLS on this machine")
    for col in ("what", "value", "why"):
        table.add_column(col, overflow="fold")
    for row in support.rows():
        table.add_row(*(escape(cell) for cell in row))
    return table


def bench_tables(result: TlsBenchResult) -> list[Table]:
    """The per-cell table (mode, file, client: timings and worker CPU per request) and the
    per-mode summary (CPU per request, wrk's peak rate, connections within the latency target,
    and what really ran)."""
    b = result.bench
    cells = Table(title=f"nginx file fetches, {b.count} per cell, {b.interval_s:g} s apart, modes interleaved "
                        f"(seed {b.seed})")
    for col in ("mode", "file", "client", "mean ms", "std ms", "worker CPU ms/req"):
        cells.add_column(col, justify="left" if col in ("mode", "file", "client") else "right")
    for c in b.cells:
        cells.add_row(c.mode, size_label(c.size), c.client, f"{1e3 * c.stats.mean:.2f}", f"{1e3 * c.stats.std:.2f}",
                      f"{1e3 * c.cpu_s / c.requests:.3f}")
    cpu = b.cpu_ms_per_request()
    rps = result.max_requests_per_s()
    at = result.clients_at_target()
    summary = Table(title=f"per mode (worker CPU from {b.cpu_source}; wrk on {size_label(b.files[result.wrk_file])})")
    for col in ("mode", "CPU ms/req (all)", "max req/s", f"conns at p99<={result.latency_target_ms:g} ms", "what ran"):
        summary.add_column(col, overflow="fold")
    for m in b.modes:
        summary.add_row(m, f"{cpu[m]:.3f}", f"{rps[m]:,.0f}" if m in rps else "-",
                        str(at.get(m)) if m in at else "-", escape(b.verified[m]))
    return [cells, summary]


def guest_table(result: dict[str, Any]) -> Table:
    """The guest bench (``tls bench --guest``), one row per (mode, TLS version, file): per-fetch
    means of curl's time and the worker's CPU, user and system apart, and the kTLS evidence."""
    from cryptoffload.apps.tls.guest import summarize

    g = result.get("guest", {})
    table = Table(title=f"nginx in a guest: kernel {g.get('kernel', '?')}, {g.get('cpu_model', '?')} "
                        f"(emulated: times are inflated; the user/system split is what to read)")
    for col in ("server", "file", "fetches", "fetch ms", "worker CPU ms", "user ms", "system ms", "protocol",
                "kTLS by counters"):
        table.add_column(col, justify="left" if col in ("server", "file", "protocol") else "right")
    for c in summarize(result):
        table.add_row(c.name, c.file, str(c.fetches), f"{c.fetch_ms:.1f}", "-" if c.cpu_ms is None else f"{c.cpu_ms:.2f}",
                      f"{c.user_ms:.1f}", f"{c.system_ms:.1f}", escape(c.ssl_protocol),
                      f"{c.ktls_engaged} of {c.fetches}" if c.mode == "ktls" else "-")
    return table
