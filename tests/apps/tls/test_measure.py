"""Measurements with the real clients: fetch series (bytes checked), the interleaved schedule,
wrk parsing (a captured report) and a real 1 s wrk run, a small bench end to end (the ``tls``
CLI is tested in tests/cli/test_tls.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tls_helpers import needs_nginx, needs_tools

from cryptoffload.apps.tls.measure import (QUICK_SETTINGS, FetchError, WrkResult, _curl_phases, block_order,
                                           clients_at_latency_target, fetch_series, file_sha256, interleaved_bench,
                                           make_files, parse_size, parse_wrk_output, size_label, wrk_load)
from cryptoffload.apps.tls.nginx import NginxServer
from cryptoffload.errors import ConfigError


WRK_SAMPLE = """Running 1s test @ https://127.0.0.1:42037/a.bin
  1 threads and 4 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency    67.23us   95.25us   2.95ms   97.85%
    Req/Sec    62.52k     9.75k   74.86k    54.55%
  Latency Distribution
     50%   53.00us
     75%   73.00us
     90%   95.00us
     99%  284.00us
  68199 requests in 1.10s, 149.72MB read
Requests/sec:  62011.10
Transfer/sec:    136.14MB
"""

WRK_SLOW = """Running 5s test @ http://127.0.0.1:8080/big
  2 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.20s   300.00ms   2.00s    70.00%
    Req/Sec    10.00      3.00    20.00     60.00%
  Latency Distribution
     50%    1.10s
     75%    1.40s
     90%    1.80s
     99%    2.00s
  100 requests in 5.00s, 6.25GB read
  Socket errors: connect 0, read 0, write 0, timeout 3
  Non-2xx or 3xx responses: 2
Requests/sec:     20.00
Transfer/sec:      1.25GB
"""


def test_parse_wrk_output() -> None:
    r = parse_wrk_output(WRK_SAMPLE)
    assert r["requests_per_s"] == 62011.10 and r["requests"] == 68199
    assert r["latency_avg_ms"] == pytest.approx(0.06723) and r["latency_max_ms"] == pytest.approx(2.95)
    assert (r["p50_ms"], r["p90_ms"], r["p99_ms"]) == pytest.approx((0.053, 0.095, 0.284))
    assert r["transfer_bytes_per_s"] == pytest.approx(136.14 * 2**20)
    s = parse_wrk_output(WRK_SLOW)
    assert s["latency_avg_ms"] == pytest.approx(1200.0) and s["p99_ms"] == pytest.approx(2000.0)
    assert s["socket_errors"]["timeout"] == 3 and s["non_2xx"] == 2
    with pytest.raises(ValueError):
        parse_wrk_output("unable to connect to 127.0.0.1:1 Connection refused")


def _wrk(conns: int, p99: float, errors: int = 0) -> WrkResult:
    return WrkResult(url="u", connections=conns, threads=1, duration_s=1, requests=1, requests_per_s=1.0,
                     transfer_bytes_per_s=None, latency_avg_ms=p99 / 2, latency_stdev_ms=None, latency_max_ms=None,
                     p50_ms=p99 / 2, p75_ms=None, p90_ms=None, p99_ms=p99, socket_errors={"timeout": errors})


def test_clients_at_latency_target() -> None:
    rs = [_wrk(16, 12.0), _wrk(1, 1.0), _wrk(4, 3.0), _wrk(64, 5.0)]  # 64 is a lucky point after a miss
    assert clients_at_latency_target(rs, 10.0) == 4
    assert clients_at_latency_target(rs, 0.5) is None
    assert clients_at_latency_target(rs, 100.0) == 64
    assert clients_at_latency_target([_wrk(1, 1.0), _wrk(2, 1.0, errors=1)], 10.0) == 1
    assert clients_at_latency_target(rs, 10.0, "p50") == 64


def test_sizes_and_files(tmp_path: Path) -> None:
    assert parse_size("2K") == 2048 and parse_size("64M") == 64 << 20 and parse_size("1000") == 1000
    assert [size_label(s) for s in (2048, 64 << 20, 1000)] == ["2K", "64M", "1000B"]
    with pytest.raises(ConfigError, match="bad file size"):
        parse_size("2Q")
    a = make_files(tmp_path / "a", [2048, 4096], seed=3)
    b = make_files(tmp_path / "b", [2048, 4096], seed=3)
    assert [p.name for p in a] == ["2K.bin", "4K.bin"]
    assert [file_sha256(p) for p in a] == [file_sha256(p) for p in b]  # seeded: reproducible


def test_block_order_interleaves_reproducibly() -> None:
    combos = [(m, f, c) for m in ("plain", "tls") for f in ("2K.bin", "64M.bin") for c in ("curl", "wget")]
    order = block_order(combos, count=5, block=2, seed=7)
    assert order == block_order(combos, count=5, block=2, seed=7)
    assert order != block_order(combos, count=5, block=2, seed=8)
    for k in combos:
        assert sum(n for m, f, c, n in order if (m, f, c) == k) == 5
    # rounds: every combination once per round (blocks of 2, 2, 1)
    for r in range(3):
        assert sorted((m, f, c) for m, f, c, _ in order[r * 8:(r + 1) * 8]) == sorted(combos)
    assert {n for *_, n in order[16:]} == {1}


def test_curl_phases_from_cumulative_timers() -> None:
    assert _curl_phases(0.010, 0.002, 0.007, 0.009) == pytest.approx(
        {"connect": 0.002, "handshake": 0.005, "first_byte": 0.002, "transfer": 0.001})
    # plain HTTP: curl reports appconnect 0, so there is no handshake
    assert _curl_phases(0.004, 0.001, 0.0, 0.003)["handshake"] == 0.0


@needs_nginx
@needs_tools
def test_fetch_series_real_clients(tmp_path: Path) -> None:
    (f,) = make_files(tmp_path, [64 << 10])
    with NginxServer("tls", tmp_path) as srv:
        for client in ("curl", "wget"):
            st = fetch_series(srv.url + f.name, client, count=3, interval_s=0.0, cafile=srv.cert_path, expected_file=f)
            assert st.sha256_ok is True and st.bytes == 64 << 10
            assert st.count == 3 and st.mean > 0 and st.std >= 0 and len(st.wall_samples) == 3
            phases = st.phase_means()
            if client == "curl":  # curl's own timers, as the phases of a fetch that sum to its time
                assert set(phases) == {"connect", "handshake", "first_byte", "transfer"}
                assert phases["handshake"] > 0 and sum(phases.values()) == pytest.approx(st.mean, rel=1e-6)
            else:
                assert phases == {}
        with pytest.raises(FetchError, match="differs"):
            fetch_series(srv.url + f.name, "curl", 1, 0.0, srv.cert_path, expected_sha256="0" * 64)
        with pytest.raises(FetchError, match="failed to fetch"):
            fetch_series(srv.url + "missing.bin", "curl", 1, 0.0, srv.cert_path)
        with pytest.raises(ConfigError, match="unknown client"):
            fetch_series(srv.url + f.name, "lynx", 1)


@needs_nginx
@needs_tools
def test_real_wrk_run(tmp_path: Path) -> None:
    (f,) = make_files(tmp_path, [2048])
    with NginxServer("tls", tmp_path) as srv:
        (r,) = wrk_load(srv.url + f.name, [2], duration_s=1.0, threads=2)
    assert r.threads == 2 and r.connections == 2
    assert r.requests_per_s > 0 and r.requests > 0 and r.non_2xx == 0
    assert r.p50_ms is not None and r.p99_ms is not None and r.p99_ms >= r.p50_ms
    # wrk's requests (no User-Agent) are not logged; the access log stays small
    assert len(srv.access_entries()) == 0


@needs_nginx
@needs_tools
def test_interleaved_bench_small(tmp_path: Path) -> None:
    files = make_files(tmp_path, [2048, 1 << 20], seed=2)
    res = interleaved_bench(["plain", "tls", "ktls"], files, ["curl", "wget"], count=3, interval_s=0.0, seed=5,
                            block=2)
    assert len(res.cells) == 12 and all(c.requests == 3 and c.stats.sha256_ok for c in res.cells)
    assert [o[:3] for o in res.order][:12] != [(c.mode, c.file, c.client) for c in res.cells]  # shuffled
    cpu = res.cpu_ms_per_request()
    assert set(cpu) == {"plain", "tls", "ktls"} and all(v >= 0 for v in cpu.values())
    if res.cpu_source.startswith("schedstat"):  # ns resolution: never rounds to zero
        assert all(v > 0 for v in cpu.values())
    by_file = res.cpu_ms_per_request_by_file()
    assert set(by_file["tls"]) == {"2K.bin", "1M.bin"}
    assert res.verified["plain"].startswith("plain HTTP (verified")
    assert res.verified["tls"].startswith("user-space TLS")
    if not Path("/proc/net/tls_stat").exists():
        assert res.verified["ktls"].startswith("requested ktls, ran user-space TLS (no tls ULP in this kernel")
    json.dumps(res.to_dict())


def test_quick_settings_are_short() -> None:
    # 2 modes x 2 files x 2 clients x count fetches plus wrk must stay well under a minute
    assert QUICK_SETTINGS["count"] <= 10 and QUICK_SETTINGS["wrk_duration_s"] <= 1
    assert len(QUICK_SETTINGS["wrk_connections"]) <= 3
