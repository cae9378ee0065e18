"""One party talking to another: https unless told otherwise, answers' envelopes checked, and
each kind of failure as the error a caller acts on (refused, invalid answer, unavailable,
unreachable)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiohttp import web
from ridge_helpers import free_port

from cryptoffload.apps._http import ServerThread, Unreachable
from cryptoffload.apps.ridge import messages as m
from cryptoffload.apps.ridge.messages import ProtocolError
from cryptoffload.apps.ridge.peer import Peer, client_session, fetch_session
from cryptoffload.errors import ConfigError

FP = bytes(range(16))


def _app() -> web.Application:
    async def status(_request: web.Request) -> web.Response:
        return web.json_response(m.new_message(m.STATUS, FP, state="ready"))

    async def message(request: web.Request) -> web.Response:
        body = await request.json()
        if request.headers.get("Authorization") != "Bearer right-token":
            return web.json_response(m.error_message(403, "forbidden", "not yours"), status=403)
        return web.json_response(m.new_message(m.UPLOAD_ACK, FP, echo=body["type"]))

    async def garbled(_request: web.Request) -> web.Response:
        return web.Response(body=b"{not json")

    async def busy(_request: web.Request) -> web.Response:
        return web.json_response(m.error_message(503, "busy", "solving"), status=503)

    async def broken(_request: web.Request) -> web.Response:
        return web.Response(status=500, body=b"<html>oops</html>")

    async def bad_params(_request: web.Request) -> web.Response:
        return web.json_response(m.new_message(m.PARAMS, FP, params={}))

    app = web.Application()
    app.router.add_get("/status", status)
    app.router.add_post("/message", message)
    app.router.add_get("/garbled", garbled)
    app.router.add_get("/busy", busy)
    app.router.add_get("/broken", broken)
    app.router.add_get("/params", bad_params)
    return app


def _run(url: str, call: Any) -> Any:
    async def main() -> Any:
        async with client_session() as session:
            return await call(Peer(session, url, "platform", insecure_http=True))
    return asyncio.run(main())


def test_answers_and_refusals() -> None:
    with ServerThread(_app) as url:
        assert _run(url, lambda p: p.get("/status", m.STATUS, FP))["state"] == "ready"
        msg = m.new_message(m.UPLOAD, FP)
        assert _run(url, lambda p: p.post(msg, m.UPLOAD_ACK, FP, token="right-token"))["echo"] == m.UPLOAD
        with pytest.raises(ProtocolError, match=r"the platform refused upload: not yours \(HTTP 403\)") as info:
            _run(url, lambda p: p.post(msg, m.UPLOAD_ACK, FP, token="wrong"))
        assert (info.value.status, info.value.code) == (403, "forbidden")
        with pytest.raises(ProtocolError, match="sent an invalid answer to GET /status") as info:
            _run(url, lambda p: p.get("/status", m.STATUS, bytes(16)))      # another key's fingerprint
        assert (info.value.status, info.value.code) == (502, "bad_answer")
        with pytest.raises(ProtocolError, match="invalid answer to GET /garbled"):
            _run(url, lambda p: p.get("/garbled", m.STATUS))
        with pytest.raises(Unreachable, match="the platform is unavailable for GET /busy: solving"):
            _run(url, lambda p: p.get("/busy", m.STATUS))
        with pytest.raises(ProtocolError, match=r"refused GET /broken: HTTP 500 \(HTTP 500\)") as info:
            _run(url, lambda p: p.get("/broken", m.STATUS))
        assert info.value.code == "http_error"
        with pytest.raises(ProtocolError, match="sent invalid parameters") as info:
            _run(url, lambda p: fetch_session(p))
        assert info.value.status == 502


def test_plain_http_needs_the_flag_and_a_dead_peer_is_unreachable() -> None:
    async def make(url: str, insecure: bool) -> Peer:
        async with client_session() as session:
            return Peer(session, url, "CSP", insecure_http=insecure)

    with pytest.raises(ConfigError, match="plain http"):
        asyncio.run(make("http://127.0.0.1:9", False))
    with pytest.raises(ConfigError, match="must start with https://"):
        asyncio.run(make("ftp://127.0.0.1:9", True))
    dead = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(Unreachable, match=f"cannot reach the platform at {dead}"):
        _run(dead, lambda p: p.get("/status", m.STATUS))
