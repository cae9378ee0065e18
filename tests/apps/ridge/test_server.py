"""What the ridge servers share: every refusal a JSON envelope with its status and code (a bug
a 500 that hides its detail), replays refused from the start of processing, large bodies
parsed off the event loop."""

from __future__ import annotations

import asyncio
import threading

import pytest
from aiohttp import web
from ridge_helpers import http

from cryptoffload.apps._credentials import Unauthorized
from cryptoffload.apps._http import ServerThread
from cryptoffload.apps.ridge import messages as m
from cryptoffload.apps.ridge import server
from cryptoffload.apps.ridge.messages import ProtocolError
from cryptoffload.apps.ridge.modular import SingularMatrixError
from cryptoffload.crypto.paillier import KeyMismatchError
from cryptoffload.errors import ConfigError

RAISED = {
    "replay": ProtocolError("seen before", status=409, code="replayed_message"),
    "token": Unauthorized("who are you"),
    "key": KeyMismatchError("another key"),
    "singular": SingularMatrixError("singular system"),
    "user": ConfigError("bad numbers"),
    "bug": RuntimeError("secret internal detail"),
}


def _app() -> web.Application:
    async def fail(request: web.Request) -> web.Response:
        raise RAISED[request.match_info["what"]]

    async def ok(_request: web.Request) -> web.Response:
        return server.json_response({"type": "status", "state": "ready"})

    app = web.Application(middlewares=[server.errors])
    app.router.add_get("/fail/{what}", fail)
    app.router.add_get("/ok", ok)
    return app


def test_refusals_are_json_envelopes_with_status_and_code() -> None:
    want = {"replay": (409, "replayed_message"), "token": (401, "unauthorized"), "key": (400, "foreign_key"),
            "singular": (422, "unsolvable"), "user": (422, "unprocessable"), "bug": (500, "internal")}
    with ServerThread(_app) as url:
        for what, (status, code) in want.items():
            got, body = http(f"{url}/fail/{what}")
            assert (got, body["error"], body["type"], body["status"]) == (status, code, m.ERROR, status), what
        assert "secret" not in http(f"{url}/fail/bug")[1]["message"]
        assert http(url + "/ok") == (200, {"type": "status", "state": "ready"})   # still serving


def test_replays_are_refused() -> None:
    guard = server.ReplayGuard()
    guard.check("m1")
    with pytest.raises(ProtocolError, match="message m1 was already received") as info:
        guard.check("m1")
    assert (info.value.status, info.value.code) == (409, "replayed_message")
    with pytest.raises(ProtocolError):
        server.ReplayGuard({"m2"}.__contains__).check("m2")          # ids in the database (after a restart)


def test_replay_memory_is_bounded_by_the_recent_ids() -> None:
    stored = {"old"}
    guard = server.ReplayGuard(stored.__contains__, recent=3)
    for i in range(10):
        guard.check(f"m{i}")
    assert len(guard) == 3                                  # m7, m8, m9 held; the rest forgotten
    with pytest.raises(ProtocolError):
        guard.check("m9")
    guard.check("m0")                                       # neither recent nor stored: a new id
    with pytest.raises(ProtocolError):
        guard.check("old")


def test_large_bodies_are_parsed_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    threads: list[str] = []
    real = m.parse_message

    def spy(body, expected):
        threads.append(threading.current_thread().name)
        return real(body, expected)

    monkeypatch.setattr(m, "parse_message", spy)
    fp = bytes(range(16))
    small = m.dumps(m.new_message(m.STATUS, fp))
    large = m.dumps(m.new_message(m.STATUS, fp, padding="x" * server.PARSE_INLINE_BYTES))

    async def main() -> list[dict]:
        return [await server.parse(body, {m.STATUS: fp}) for body in (small, large)]

    got = asyncio.run(main())
    assert [g["type"] for g in got] == [m.STATUS, m.STATUS]
    assert threads[0] == "MainThread" and threads[1] != "MainThread"
