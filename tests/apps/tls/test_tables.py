"""The detection and bench tables: every cell and mode gets its row, numbers in the units the
headers name, and tool text with brackets survives (escaped, not read as rich markup)."""

from __future__ import annotations

from rich.console import Console

from cryptoffload.apps.tls.detect import Finding, KtlsSupport
from cryptoffload.apps.tls.measure import BenchResult, CellResult, FetchStats, TlsBenchResult, WrkResult
from cryptoffload.apps.tls.tables import bench_tables, detect_table


def _text(table) -> str:
    console = Console(width=300, record=True)
    console.print(table)
    return console.export_text()


def _support() -> KtlsSupport:
    f = Finding(False, "tx-tls-offload: off [fixed]")
    return KtlsSupport(f, f, f, f, f, f, f, f)


def _wrk(conns: int, rps: float, p99: float) -> WrkResult:
    return WrkResult("u", conns, 1, 1.0, int(rps), rps, None, 1.0, None, None, None, None, None, p99)


def test_detect_table_keeps_bracketed_tool_text() -> None:
    assert "off [fixed]" in _text(detect_table(_support()))


def test_bench_tables_rows_and_units() -> None:
    stats = FetchStats("u", "curl", [0.001, 0.003], [0.001, 0.003], 0.1)
    cells = [CellResult(m, "a", 2048, "curl", stats, cpu_s=0.004) for m in ("plain", "tls")]
    bench = BenchResult(["plain", "tls"], {"a": 2048}, ["curl"], 2, 0.1, 7, 1, cells, [],
                        {"plain": "requested plain, ran plain", "tls": "requested tls, ran [user-space] TLS"},
                        {}, "cgroup", 1.0)
    result = TlsBenchResult(bench, {"plain": [_wrk(1, 900, 2.0), _wrk(4, 1500, 20.0)], "tls": [_wrk(1, 700, 3.0)]},
                            "a", 10.0, _support(), 1.0)
    per_cell, per_mode = (_text(t) for t in bench_tables(result))
    assert "2 per cell, 0.1 s apart" in per_cell and "(seed 7)" in per_cell
    # mean 2 ms, worker CPU 4 ms over 2 requests = 2 ms per request
    assert per_cell.count(" 2.00 ") == 2 and per_cell.count(" 2.000 ") == 2
    assert "1,500" in per_mode and "700" in per_mode  # the best wrk rate per mode
    assert "conns at p99<=10 ms" in per_mode
    assert "ran [user-space] TLS" in per_mode


def test_guest_table_rows_per_server_and_file_with_the_ktls_evidence() -> None:
    from cryptoffload.apps.tls.tables import guest_table

    def cell(mode: str, version: str | None, engaged: bool) -> dict:
        return {"mode": mode, "tls_version": version, "file": "64M.bin", "size": 64 << 20, "fetches": [
            {"seconds": 10.5, "cpu_ns": 9_815_000_000, "user_ms": 20.0, "system_ms": 9795.0,
             "ssl_protocol": version or "-", "ktls_engaged": engaged}]}

    result = {"kind": "bench", "guest": {"kernel": "6.1.0-56-amd64", "cpu_model": "QEMU TCG CPU [2.5+]"},
              "cells": [cell("plain", None, False), cell("ktls", "TLSv1.3", True)]}
    lines = _text(guest_table(result)).splitlines()
    assert "kernel 6.1.0-56-amd64, QEMU TCG CPU [2.5+]" in lines[0]
    rows = [" ".join(ln.replace("│", " ").split()) for ln in lines if "64M.bin" in ln]
    assert rows == ["plain 64M.bin 1 10500.0 9815.00 20.0 9795.0 - -",
                    "ktls TLSv1.3 64M.bin 1 10500.0 9815.00 20.0 9795.0 TLSv1.3 1 of 1"]
