"""The servers' shared HTTP plumbing: binding, TLS contexts, JSON errors, retries."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from aiohttp import web

from attacker_helpers import ATTACKER, root_only
from cryptoffload.apps import _http
from cryptoffload.errors import ConfigError


def test_bind_refuses_bad_ports_and_busy_ones() -> None:
    for bad in (-1, 65536, True, "80"):
        with pytest.raises(ConfigError, match="--port must be 0..65535"):
            _http.bind("127.0.0.1", bad)  # type: ignore[arg-type]
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        with pytest.raises(ConfigError, match="already in use"):
            _http.bind("127.0.0.1", busy.getsockname()[1])
    with pytest.raises(ConfigError, match="cannot listen on host"):
        _http.bind("no-such-host.invalid", 0)


def test_tls_contexts_are_one_line_errors(tmp_path: Path) -> None:
    assert _http.server_ssl(None, None) is None and _http.client_ssl(None) is None
    with pytest.raises(ConfigError, match="both --tls-cert and --tls-key"):
        _http.server_ssl(tmp_path / "c.pem", None)
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate")
    with pytest.raises(ConfigError, match="open to others .mode 0644.; run: chmod 600"):
        _http.server_ssl(junk, junk)  # a TLS key is a private file (tests/test_private_files.py)
    junk.chmod(0o600)
    with pytest.raises(ConfigError, match="cannot load the TLS certificate"):
        _http.server_ssl(junk, junk)
    with pytest.raises(ConfigError, match="cannot load --cafile"):
        _http.client_ssl(junk)


class _Refused(Exception):
    pass


def _app() -> web.Application:
    def classify(exc: Exception) -> tuple[int, str, str] | None:
        return (418, "refused", str(exc)) if isinstance(exc, _Refused) else None

    def respond(status: int, code: str, text: str) -> web.Response:
        return web.json_response({"type": "error", "error": code, "message": text}, status=status)

    async def refuse(_: web.Request) -> web.Response:
        raise _Refused("no\nthanks")

    async def crash(_: web.Request) -> web.Response:
        raise RuntimeError("secret detail")

    app = web.Application(middlewares=[_http.error_middleware(classify, respond, logging.getLogger("test"))])
    app.router.add_get("/refuse", refuse)
    app.router.add_get("/crash", crash)
    return app


def _get(url: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_error_middleware_answers_json_and_hides_internal_errors() -> None:
    with _http.ServerThread(_app) as url:
        assert _get(url + "/refuse") == (418, {"type": "error", "error": "refused", "message": "no\nthanks"})
        status, body = _get(url + "/nowhere")
        assert status == 404 and body["error"] == "not_found"
        status, body = _get(url + "/crash")
        assert status == 500 and body["error"] == "internal" and "secret" not in body["message"]
        status, body = _get(url + "/refuse")
        assert status == 418  # still serving


class _ClockLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock only the test's sleep advances: retrying's back-off is checked
    exactly, whatever the machine's load."""

    now = 0.0

    def time(self) -> float:
        return self.now


@pytest.mark.parametrize("retry_for, delays", [
    (0.05, []),                                              # the first back-off already passes the deadline
    (1.0, [0.1, 0.2, 0.4]),                                  # 0.7 + 0.8 > 1.0: the fourth failure is final
    (10.0, [0.1, 0.2, 0.4, 0.8, 1.6, 2.0, 2.0, 2.0]),        # doubling, capped at 2 s
])
def test_retrying_backs_off_and_gives_up_after_its_time(monkeypatch: pytest.MonkeyPatch, retry_for: float,
                                                        delays: list[float]) -> None:
    loop = _ClockLoop()
    slept: list[float] = []
    retried: list[str] = []
    calls = []

    async def sleep(delay: float) -> None:
        slept.append(delay)
        loop.now += delay

    async def call() -> None:
        calls.append(loop.now)
        raise _http.Unreachable("down")

    monkeypatch.setattr(_http.asyncio, "sleep", sleep)
    try:
        with pytest.raises(_http.Unreachable, match="down"):
            loop.run_until_complete(_http.retrying(call, retry_for, on_retry=retried.append))
    finally:
        loop.close()
    assert slept == pytest.approx(delays)
    assert len(calls) == len(delays) + 1 and retried == ["down"] * len(delays)


def test_retrying_returns_once_the_call_succeeds(monkeypatch: pytest.MonkeyPatch) -> None:
    attempts = []

    async def sleep(delay: float) -> None:
        return None

    async def call() -> str:
        attempts.append(1)
        if len(attempts) < 3:
            raise _http.Unreachable("not yet")
        return "up"

    monkeypatch.setattr(_http.asyncio, "sleep", sleep)
    assert asyncio.run(_http.retrying(call, 60.0)) == "up" and len(attempts) == 3


def test_a_server_makes_its_own_certificate_unless_given_one_or_told_plain(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture) -> None:
    given = object()
    assert _http.tls_context(given, tmp_path, "127.0.0.1", False, "x") is given   # type: ignore[arg-type]
    assert _http.tls_context(None, tmp_path, "127.0.0.1", True, "x") is None and not list(tmp_path.iterdir())
    ctx = _http.tls_context(None, tmp_path, "127.0.0.1", False, "test server")
    assert ctx is not None and (tmp_path / "cert.pem").exists()
    cert = tmp_path / "cert.pem"
    assert capsys.readouterr().out == f"test server: TLS certificate {cert} (clients: --cafile {cert})\n"
    before = cert.read_bytes()
    _http.tls_context(None, tmp_path, "127.0.0.1", False, "test server")
    assert cert.read_bytes() == before                                  # reused across restarts


def test_a_tls_key_is_a_private_file(tmp_path: Path) -> None:
    """Whoever chose the server's TLS key reads its traffic, tokens included: a linked key (to
    a file the attacker controls) is refused, given or kept in the server's folder, and OpenSSL
    reads the very file that was checked."""
    cert, key = _http.self_signed_certificate(tmp_path)
    assert (key.stat().st_mode & 0o777) == 0o600 and _http.server_ssl(cert, key) is not None
    link = tmp_path / "link.pem"
    link.symlink_to(key)
    with pytest.raises(ConfigError, match=f"the TLS key .--tls-key. file {link} is a symbolic link"):
        _http.server_ssl(cert, link)
    served = tmp_path / "served"
    served.mkdir(mode=0o700)
    (served / "cert.pem").write_bytes(cert.read_bytes())
    (served / "key.pem").symlink_to(key)  # a kept key swapped for a link: refused, not replaced
    with pytest.raises(ConfigError, match="the TLS key file .*key.pem is a symbolic link"):
        _http.own_certificate(served, "127.0.0.1")


@root_only
def test_a_tls_key_another_user_wrote_is_refused(tmp_path: Path) -> None:
    cert, key = _http.self_signed_certificate(tmp_path)
    os.chown(key, ATTACKER, ATTACKER)
    with pytest.raises(ConfigError, match=f"TLS key file {key} belongs to uid {ATTACKER}"):
        _http.own_certificate(tmp_path, "127.0.0.1")  # what a restarted server reuses
    with pytest.raises(ConfigError, match=f"TLS key .--tls-key. file {key} belongs to uid {ATTACKER}"):
        _http.server_ssl(cert, key)


# -- JSON bodies and slow senders (issue 22, items 4 and 5) -------------------------------------

HOSTILE_JSON = {
    "a 5,000-digit integer": (b'{"n": ' + b"7" * 5000 + b"}", "5,000 digits"),
    "deep nesting": (b"[" * 100_000 + b"]" * 100_000, "too deeply"),
    "invalid UTF-8": (b'{"n": "\xff\xfe"}', "not UTF-8"),
    "an array at the top": (b"[1, 2]", "must be a JSON object, not an array"),
    "NaN": (b'{"n": NaN}', "NaN is not JSON"),
    "-Infinity": (b'{"n": -Infinity}', "-Infinity is not JSON"),
    "an out-of-range number": (b'{"n": 1e999}', "out of range"),
    "a key twice": (b'{"n": 1, "n": 2}', "appears twice"),
    "a truncated object": (b'{"n": ', "truncated or garbled"),
}


@pytest.mark.parametrize("name", list(HOSTILE_JSON))
def test_parse_json_turns_whatever_the_parser_raises_into_a_400(name: str) -> None:
    body, reason = HOSTILE_JSON[name]
    with pytest.raises(_http.MalformedJSON) as info:
        _http.parse_json(body, "the test body")
    assert info.value.status == 400 and reason in info.value.text and "send one UTF-8 JSON object" in info.value.text


def test_parse_json_accepts_what_the_protocols_send() -> None:
    assert _http.parse_json(b'{"n": -' + b"9" * 4300 + b', "x": [1.5, "\xc3\xa9"]}')["x"] == [1.5, "é"]
    assert _http.parse_json("[1]", expect=list) == [1] and _http.parse_json("3", expect=None) == 3


def _json_app(seen: list) -> web.Application:
    def respond(status: int, code: str, text: str) -> web.Response:
        return web.json_response({"type": "error", "error": code, "message": text}, status=status)

    async def store(request: web.Request) -> web.Response:
        seen.append(_http.parse_json(await _http.read_body(request, 1 << 20)))
        return web.json_response({"stored": len(seen)})

    app = _http.new_app(_http.error_middleware(lambda exc: None, respond, logging.getLogger("test")))
    _http.add_route(app, "POST", "/store", store, max_body=1 << 20)
    return app


def _post(url: str, body: bytes) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_every_malformed_body_is_a_400_json_error_and_stores_nothing() -> None:
    seen: list = []
    with _http.ServerThread(lambda: _json_app(seen)) as url:
        for name, (body, reason) in HOSTILE_JSON.items():
            status, err = _post(url + "/store", body)
            assert status == 400 and err["error"] == "bad_request" and reason in err["message"], (name, err)
        assert seen == []
        assert _post(url + "/store", b'{"n": 1}') == (200, {"stored": 1})


def _connect(url: str, source: str = "127.0.0.1") -> socket.socket:
    host, port = url.split("//")[1].rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=10, source_address=(source, 0))


def _until_closed(s: socket.socket) -> tuple[bytes, float]:
    """Everything the server sends until it closes, and how long that took."""
    t0, data = time.monotonic(), b""
    while True:
        try:
            piece = s.recv(65536)
        except ConnectionResetError:
            piece = b""
        if not piece:
            return data, time.monotonic() - t0
        data += piece


def test_a_client_that_never_completes_its_headers_is_dropped_in_time() -> None:
    limits = _http.ServerLimits(header_timeout=0.5)
    with _http.ServerThread(lambda: _json_app([]), limits=limits) as url:
        t0 = time.monotonic()
        silent = [_connect(url) for _ in range(3)]
        with _connect(url) as slow:  # a header byte every 50 ms: data does not restart the clock
            slow.sendall(b"POST /store HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            with pytest.raises(OSError):
                while time.monotonic() - t0 < 5.0:
                    slow.sendall(b"a")
                    time.sleep(0.05)
        for s in silent:
            with s:
                assert _until_closed(s)[0] == b""
        assert time.monotonic() - t0 < 5.0
        assert _post(url + "/store", b"{}")[0] == 200  # still serving


def test_a_body_sent_too_slowly_is_answered_408_and_dropped() -> None:
    seen: list = []
    limits = _http.ServerLimits(body_timeout=0.5, body_min_rate=1 << 20)
    with _http.ServerThread(lambda: _json_app(seen), limits=limits) as url:
        with _connect(url) as s:
            s.sendall(b"POST /store HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 100\r\n\r\n{\"n\": ")
            data, waited = _until_closed(s)
        head, _, body = data.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408") and waited < 5.0
        assert json.loads(body)["error"] == "request_timeout" and "slower than this server accepts" in \
            json.loads(body)["message"]
        assert seen == []


def test_tls_files_that_are_fifos_or_devices_are_refused_without_blocking(tmp_path: Path) -> None:
    """issue 22: OpenSSL would block for ever reading a FIFO given as a certificate."""
    import os

    os.mkfifo(tmp_path / "fifo.pem")
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate")
    with pytest.raises(ConfigError, match="--tls-cert.*not a regular file"):
        _http.server_ssl(tmp_path / "fifo.pem", junk)
    with pytest.raises(ConfigError, match="--tls-key.*not a regular file"):
        _http.server_ssl(junk, Path("/dev/zero"))
    with pytest.raises(ConfigError, match="--cafile.*not a regular file"):
        _http.client_ssl(tmp_path / "fifo.pem")
