"""One ridge party talking to another: envelopes out, checked envelopes back.

A :class:`Peer` posts :mod:`.messages` envelopes to a party at a URL and checks the envelope
of the answer (type and key fingerprint); a refused message comes back as a
:class:`~cryptoffload.apps.ridge.messages.ProtocolError` with the peer's reason, an
unreachable peer as :class:`~cryptoffload.apps._http.Unreachable` (worth retrying).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import aiohttp

from cryptoffload.apps import _http
from cryptoffload.apps._http import Unreachable
from cryptoffload.apps.ridge import messages as m
from cryptoffload.apps.ridge.messages import Message, ProtocolError, SessionInfo
from cryptoffload.checks import JsonValue
from cryptoffload.errors import ConfigError


class Peer:
    """One remote party at ``url``: posts envelopes and checks the answers' envelopes."""

    def __init__(self, session: aiohttp.ClientSession, url: str, role: str, *, insecure_http: bool = False) -> None:
        _http.check_url(url, role, insecure_http)
        self.session = session
        self.url = url.rstrip("/")
        self.role = role

    async def _request(self, method: str, path: str, body: bytes | None = None,
                       headers: Mapping[str, str] | None = None) -> tuple[int, bytes]:
        try:
            async with self.session.request(method, self.url + path, data=body, headers=headers) as resp:
                return resp.status, await resp.read()
        except aiohttp.InvalidURL:
            raise ConfigError(f"invalid {self.role} URL {self.url!r}") from None
        except aiohttp.ClientConnectorCertificateError as exc:
            raise ConfigError(f"TLS certificate of the {self.role} at {self.url} not trusted "
                              f"({_http.one_line(exc.certificate_error)}); pass --cafile") from None
        except aiohttp.ClientConnectorError as exc:
            err = exc.os_error.errno if exc.os_error is not None else None
            reason = os.strerror(err).lower() if err else _http.one_line(exc)
            raise Unreachable(f"cannot reach the {self.role} at {self.url} ({reason})") from None
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
            what = type(exc).__name__ if not str(exc) else _http.one_line(exc)
            raise Unreachable(f"connection to the {self.role} at {self.url} failed ({what})") from None

    def _answer(self, status: int, body: bytes, what: str, expect: Mapping[str, bytes | None]) -> Message:
        if status == 200:
            try:
                return m.parse_message(body, expect)
            except ProtocolError as exc:
                raise ProtocolError(f"the {self.role} sent an invalid answer to {what}: {exc}", status=502,
                                    code="bad_answer") from None
        try:
            err = _http.parse_json(body, f"the {self.role}'s error answer")
            if not isinstance(err, dict):   # parse_json checked it is an object
                raise TypeError("not an object")
            text, code = str(err["message"]), str(err["error"])
        except (_http.MalformedJSON, KeyError, TypeError):
            text, code = f"HTTP {status}", "http_error"
        if status == 503:
            raise Unreachable(f"the {self.role} is unavailable for {what}: {text}")
        raise ProtocolError(f"the {self.role} refused {what}: {text} (HTTP {status})", status=status, code=code)

    async def get(self, path: str, expect_type: str, expect_fp: bytes | None = None) -> Message:
        status, body = await self._request("GET", path)
        return self._answer(status, body, f"GET {path}", {expect_type: expect_fp})

    async def post(self, message: Mapping[str, JsonValue], expect_type: str, expect_fp: bytes | None,
                   token: str | None = None) -> Message:
        headers = {"Content-Type": "application/json"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        status, body = await self._request("POST", "/message", m.dumps(message), headers)
        return self._answer(status, body, str(message.get("type")), {expect_type: expect_fp})


def client_session(cafile: Path | Sequence[Path] | None = None, read_timeout: float = 600.0) -> aiohttp.ClientSession:
    ctx = _http.client_ssl(cafile)
    connector = aiohttp.TCPConnector(ssl=ctx if ctx is not None else True)
    return aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(
        total=None, sock_connect=10, sock_read=read_timeout))


async def fetch_session(peer: Peer, wait: float = 0.0) -> SessionInfo:
    """The session's parameters and public keys as ``peer`` serves them (retrying an
    unreachable peer for ``wait`` seconds)."""
    msg = await _http.retrying(lambda: peer.get("/params", m.PARAMS), wait)
    try:
        return SessionInfo.from_message(msg)
    except ProtocolError as exc:
        raise ProtocolError(f"the {peer.role} at {peer.url} sent invalid parameters: {exc}", 502) from None
