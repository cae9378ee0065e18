"""What the ridge servers (CSP, platform) share on top of :mod:`cryptoffload.apps._http`.

Every answer is a :mod:`.messages` envelope; a refused message becomes a 4xx JSON error
(``{"type": "error", "error": code, "message": ...}``) and the party keeps running. CPU work
(encryption, decryption, native products, fsync) runs off the event loop (:func:`run`) so a
server keeps answering status requests while it works.
"""

from __future__ import annotations

import asyncio
import functools
from collections import OrderedDict
import logging
import os
import socket
import ssl
import sys
from typing import Callable, Mapping, TypeVar

from aiohttp import web

from cryptoffload.apps import _http
from cryptoffload.apps._credentials import Unauthorized
from cryptoffload.apps.ridge import messages as m
from cryptoffload.apps.ridge.messages import Message, ProtocolError
from cryptoffload.apps.ridge.modular import ReconstructionError, SingularMatrixError
from cryptoffload.apps.ridge.proofs import CspProofError
from cryptoffload.checks import JsonValue
from cryptoffload.crypto.paillier import KeyMismatchError
from cryptoffload.errors import CryptoffloadError

log = logging.getLogger("cryptoffload.ridge")

READY_MARK = " listening on "

T = TypeVar("T")

_in_flight = 0


async def run(fn: Callable[..., T], *args: object, **kwargs: object) -> T:
    """``fn`` on the default executor, counted so that :func:`serve_party` knows whether a
    thread is still inside native code when it is asked to stop."""
    global _in_flight
    _in_flight += 1
    try:
        return await asyncio.get_running_loop().run_in_executor(None, functools.partial(fn, *args, **kwargs))
    finally:
        _in_flight -= 1


def json_response(message: Mapping[str, JsonValue], status: int = 200) -> web.Response:
    return web.Response(body=m.dumps(message), status=status, content_type="application/json")


def error_response(status: int, code: str, text: str) -> web.Response:
    return json_response(m.error_message(status, code, _http.one_line(text)), status)


def _classify(exc: Exception) -> tuple[int, str, str] | None:
    """The parties' refusals (see :func:`cryptoffload.apps._http.error_middleware`)."""
    if isinstance(exc, (ProtocolError, Unauthorized)):
        return exc.status, exc.code, str(exc)
    if isinstance(exc, CspProofError):
        return 502, "csp_proof_failed", str(exc)
    if isinstance(exc, KeyMismatchError):
        return 400, "foreign_key", str(exc)
    if isinstance(exc, (SingularMatrixError, ReconstructionError)):
        return 422, "unsolvable", str(exc)
    if isinstance(exc, CryptoffloadError):
        return 422, "unprocessable", str(exc)
    return None


errors = _http.error_middleware(_classify, error_response, log)


#: bodies above this are parsed on a worker thread, so a large upload never freezes the loop
PARSE_INLINE_BYTES = 64 * 1024


async def parse(body: bytes, expected: Mapping[str, bytes | None]) -> Message:
    """:func:`~.messages.parse_message`, off the event loop when the body is large."""
    if len(body) > PARSE_INLINE_BYTES:
        return await run(m.parse_message, body, expected)
    return m.parse_message(body, expected)


class ReplayGuard:
    """Message ids already seen: every processed one, looked up in the party's database
    (``stored``: a replay stays refused across restarts, and memory does not grow with the
    messages), and the most recent ``recent`` ids in memory. Why ids are also remembered from
    the *start* of processing: a replay that arrives while the original is still being
    processed is refused too, and so is the replay of a recent message that was refused (its id
    never reaches the database)."""

    RECENT = 65_536

    def __init__(self, stored: Callable[[str], bool] | None = None, recent: int = RECENT) -> None:
        self._stored = stored if stored is not None else (lambda _id: False)
        self._recent: OrderedDict[str, None] = OrderedDict()
        self._cap = recent

    def check(self, message_id: str) -> None:
        if message_id in self._recent or self._stored(message_id):
            raise ProtocolError(f"message {message_id} was already received (replay refused)", status=409,
                                code="replayed_message")
        self._recent[message_id] = None
        if len(self._recent) > self._cap:
            self._recent.popitem(last=False)

    def __len__(self) -> int:
        """How many ids are held in memory (at most ``recent``)."""
        return len(self._recent)


def configure_logging() -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    logging.getLogger("aiohttp").setLevel(logging.WARNING)


async def serve_party(app: web.Application, sock: socket.socket, role: str, ssl_context: ssl.SSLContext | None,
                      on_ready: Callable[[str], None] | None = None) -> None:
    """Serve until SIGINT/SIGTERM, then stop cleanly (exit status 0). Prints
    ``ridge ROLE listening on URL`` once the socket accepts (what the demo waits for)."""
    def ready(url: str) -> None:
        if on_ready is not None:
            on_ready(url)
        print(f"ridge {role}{READY_MARK}{url}", flush=True)

    await _http.serve_until_signalled(app, sock, ssl_context=ssl_context, on_ready=ready)
    log.info("%s stopping", role)
    if _in_flight:
        # A thread is still inside native code (say the platform's masked solve, tens of
        # seconds) and cannot be interrupted; asyncio.run would wait for it. Every state
        # change is already committed (a SIGKILL is survivable by design), so leave now.
        log.info("%s abandons %d computation(s) in progress; its state is on disk", role, _in_flight)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
