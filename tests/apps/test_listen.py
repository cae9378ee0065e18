"""Accepting connections (issue 22, item 4): caps per client address and in total, a bounded
TLS handshake, and EMFILE on accept handled with a back-off and a bounded log."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from aiohttp import web

from cryptoffload.apps import _http
from cryptoffload.apps._listen import RateLimitedLog, ServerLimits, default_max_connections
from cryptoffload.errors import ConfigError


def _app() -> web.Application:
    async def hello(_: web.Request) -> web.Response:
        return web.json_response({"hello": 1})

    app = web.Application()
    app.router.add_get("/hello", hello)
    return app


def _connect(url: str, source: str = "127.0.0.1") -> socket.socket:
    host, port = url.split("//")[1].rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=10, source_address=(source, 0))


def _served(url: str, source: str = "127.0.0.1") -> bool:
    """Whether a GET from ``source`` is answered 200 (not refused at the door: a refusal that
    crosses the request is a reset)."""
    with _connect(url, source) as s:
        s.sendall(b"GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        return _refused(s).startswith(b"HTTP/1.1 200")


def _refused(s: socket.socket) -> bytes:
    data = b""
    try:
        while piece := s.recv(65536):
            data += piece
    except ConnectionResetError:
        pass
    return data


def test_limits_are_checked_and_the_default_total_leaves_half_the_descriptors() -> None:
    with pytest.raises(ConfigError, match="--max-connections-per-client must be"):
        ServerLimits(max_per_client=0)
    with pytest.raises(ConfigError, match="ServerLimits.header_timeout must be a number of seconds"):
        ServerLimits(header_timeout=float("nan"))
    with pytest.raises(ConfigError, match="--max-connections must be"):
        ServerLimits(max_connections=2.5)  # type: ignore[arg-type]
    import resource
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    assert ServerLimits().total == default_max_connections() == max(8, min(4096, soft // 2))
    assert ServerLimits(max_connections=7).total == 7


def test_rate_limited_log_says_what_it_left_out(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    quiet = RateLimitedLog(logging.getLogger("test.quiet"), interval=10.0, clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, "test.quiet"):
        assert quiet.warning("k", "full %d", 1)
        for i in range(500):
            now[0] += 0.01
            assert not quiet.warning("k", "full %d", i)
        assert quiet.warning("other", "another key")
        now[0] = 10.5
        assert quiet.warning("k", "full %d", 2)
    assert [r.getMessage() for r in caplog.records] == [
        "full 1", "another key", "full 2 (500 similar message(s) left out in the last 10 s)"]


def test_a_client_at_its_cap_is_refused_while_others_are_served() -> None:
    limits = ServerLimits(max_per_client=2, max_connections=3)
    with _http.ServerThread(_app, limits=limits) as url:
        held = [_connect(url), _connect(url)]
        with _connect(url) as third:
            busy = _refused(third)
        head, _, body = busy.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 503") and json.loads(body)["error"] == "too_many_connections"
        assert _served(url, "127.0.0.2")           # another address still gets in
        held.append(_connect(url, "127.0.0.3"))    # now 3 open: the total cap
        time.sleep(0.2)
        with _connect(url, "127.0.0.4") as fourth:
            assert _refused(fourth).startswith(b"HTTP/1.1 503")
        for s in held:
            s.close()
        deadline = time.monotonic() + 5
        while not _served(url):                    # places come back once connections close
            assert time.monotonic() < deadline
            time.sleep(0.05)


def test_a_tls_client_that_never_handshakes_is_dropped(tmp_path: Path) -> None:
    ctx = _http.server_ssl(*_http.self_signed_certificate(tmp_path))
    limits = ServerLimits(handshake_timeout=0.5, max_per_client=3)
    with _http.ServerThread(_app, ssl_context=ctx, limits=limits) as url:
        silent = [_connect(url) for _ in range(3)]
        t0 = time.monotonic()
        for s in silent:
            with s:
                assert _refused(s) == b""
        assert time.monotonic() - t0 < 5.0
        client = _http.client_ssl(tmp_path / "cert.pem")
        deadline = time.monotonic() + 5
        while True:  # the three places are free again
            try:
                with urllib.request.urlopen(url + "/hello", timeout=10, context=client) as resp:
                    assert json.loads(resp.read()) == {"hello": 1}
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.05)


_EMFILE_SERVER = r"""
import logging, resource, sys, time
from aiohttp import web
from cryptoffload.apps import _http
logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s: %(message)s")

def app():
    async def hello(_):
        return web.json_response({"hello": 1})
    a = web.Application()
    a.router.add_get("/hello", hello)
    return a

resource.setrlimit(resource.RLIMIT_NOFILE, (48, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
with _http.ServerThread(app, limits=_http.ServerLimits(max_connections=1000, max_per_client=1000)) as url:
    print(url, flush=True)
    sys.stdin.readline()
"""


def test_out_of_descriptors_backs_off_logs_little_and_recovers() -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen([sys.executable, "-c", _EMFILE_SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://"), proc.stderr.read()
        flood = [_connect(url) for _ in range(100)]   # past 48 descriptors: accept fails with EMFILE
        time.sleep(3.0)
        for s in flood:
            s.close()
        deadline = time.monotonic() + 10
        while True:
            try:
                if _served(url):
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "the server did not recover once descriptors were free"
            time.sleep(0.1)
    finally:
        proc.stdin.close()
        proc.wait(20)
    err = proc.stderr.read()
    lines = [line for line in err.splitlines() if "cannot accept connections" in line]
    # the flood lasts 3 s, less than the log's 10 s interval, and closing it frees the descriptors:
    # hundreds of failed accepts, exactly one line
    assert len(lines) == 1 and "Too many open files" in lines[0] and "ulimit -n" in lines[0], err
    assert "Traceback" not in err and len(err.splitlines()) <= 4, err
