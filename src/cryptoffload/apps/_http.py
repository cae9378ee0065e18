"""What the project's aiohttp servers (the ridge parties, the HE-CNN server) share.

Why one module: both servers must bind before slow start-up work (a busy port is a one-line
error at once), load TLS material with one-line errors, answer every refusal with a JSON 4xx
and keep running, and stop cleanly on a signal; their clients must build TLS contexts the
same way and retry an unreachable peer the same way. Written once here, so a fix to one
server is a fix to both.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import socket
import ssl
import threading
from pathlib import Path
from typing import Any, Awaitable, Callable, Optional, TypeVar

from aiohttp import web

from cryptoffload.errors import ConfigError, CryptoffloadError

T = TypeVar("T")
Classify = Callable[[Exception], Optional[tuple[int, str, str]]]
Respond = Callable[[int, str, str], web.Response]
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def one_line(text: object) -> str:
    """``text`` with every run of white space as one space (error messages, log lines)."""
    return " ".join(str(text).split())


# -- errors -----------------------------------------------------------------------------------


def error_middleware(classify: Classify, respond: Respond, log: logging.Logger):
    """A middleware answering ``respond(status, code, message)`` for every refusal.

    ``classify(exc)`` maps an app's own exceptions to ``(status, code, message)`` (or None);
    other aiohttp HTTP errors keep their status; anything else is logged and becomes a 500
    without details for the client. Task cancellation is never swallowed.
    """

    @web.middleware
    async def errors(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            return await handler(request)
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as exc:
            mapped = classify(exc)
            if mapped is not None:
                return respond(*mapped)
            if isinstance(exc, web.HTTPException):
                if exc.status < 400:
                    raise
                return respond(exc.status, exc.reason.lower().replace(" ", "_"),
                               f"{exc.reason} ({request.method} {request.path})")
            log.exception("internal error while handling %s %s", request.method, request.path)
            return respond(500, "internal", "internal error (see the server log)")

    return errors


# -- listening ------------------------------------------------------------------------------


def bind(host: str, port: int) -> socket.socket:
    """A listening socket, made before any slow start-up work so that a busy port is a
    one-line error at once (and clients queue in the backlog while keys are generated)."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ConfigError(f"--port must be 0..65535, got {port!r}")
    try:
        family, type_, proto, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                           flags=socket.AI_PASSIVE)[0]
    except (socket.gaierror, UnicodeError) as exc:
        reason = exc.strerror if isinstance(exc, socket.gaierror) else "not a valid host name"
        raise ConfigError(f"cannot listen on host {host!r}: {reason}") from None
    sock = socket.socket(family, type_, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # restart on the same port at once
        sock.bind(addr)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ConfigError(f"port {port} on {host} is already in use") from None
        if exc.errno == errno.EACCES:
            raise ConfigError(f"no permission to listen on port {port} on {host}") from None
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.setblocking(False)
    return sock


def url_of(sock: socket.socket, scheme: str = "http") -> str:
    host, port = sock.getsockname()[:2]
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}"


# -- TLS ---------------------------------------------------------------------------------------


def server_ssl(cert: Path | None, key: Path | None) -> ssl.SSLContext | None:
    """The server's TLS context from a certificate and its key (PEM); None for plain HTTP."""
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        raise ConfigError("TLS needs both --tls-cert and --tls-key")
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        ctx.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"cannot load the TLS certificate {cert} / key {key}: {one_line(exc)}") from None
    return ctx


def client_ssl(cafile: Path | None) -> ssl.SSLContext | None:
    """A client context trusting ``cafile`` (e.g. a self-signed server certificate); None:
    the system's trust store for https URLs."""
    if cafile is None:
        return None
    try:
        return ssl.create_default_context(cafile=str(cafile))
    except (OSError, ssl.SSLError, ValueError) as exc:
        raise ConfigError(f"cannot load --cafile {cafile}: {one_line(exc)}") from None


# -- serving ----------------------------------------------------------------------------------


async def serve(app: web.Application, sock: socket.socket, stop: asyncio.Event, *,
                ssl_context: ssl.SSLContext | None = None, on_ready: Callable[[str], None] | None = None) -> None:
    """Serve ``app`` on ``sock`` until ``stop`` is set; ``on_ready(url)`` once it accepts."""
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=2.0)
    await runner.setup()
    try:
        await web.SockSite(runner, sock, ssl_context=ssl_context).start()
        if on_ready is not None:
            on_ready(url_of(sock, "https" if ssl_context else "http"))
        await stop.wait()
    finally:
        await runner.cleanup()


class ServerThread:
    """An app served from a background thread (tests, notebooks):
    ``with ServerThread(make_app) as url:``. ``make_app`` is called on the server's loop."""

    def __init__(self, make_app: Callable[[], web.Application], host: str = "127.0.0.1", port: int = 0, *,
                 ssl_context: ssl.SSLContext | None = None, on_stop: Callable[[], Any] | None = None) -> None:
        self._make_app = make_app
        self._ssl = ssl_context
        self._on_stop = on_stop
        self._sock = bind(host, port)
        self.url = url_of(self._sock, "https" if ssl_context else "http")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, name="http-server", daemon=True)

    def _main(self) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            try:
                await serve(self._make_app(), self._sock, self._stop, ssl_context=self._ssl,
                            on_ready=lambda _url: self._ready.set())
            finally:
                if self._on_stop is not None:
                    self._on_stop()
        try:
            asyncio.run(main())
        finally:
            self._ready.set()
            self._sock.close()

    def start(self) -> str:
        self._thread.start()
        if not self._ready.wait(30) or not self._thread.is_alive():
            raise RuntimeError("the server thread did not start")
        return self.url

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


# -- clients ----------------------------------------------------------------------------------


class Unreachable(CryptoffloadError):
    """A peer could not be reached or dropped the connection (worth retrying)."""


async def retrying(call: Callable[[], Awaitable[T]], retry_for: float,
                   on_retry: Callable[[str], None] | None = None) -> T:
    """``call()`` again while it raises :class:`Unreachable`, backing off from 0.1 s to 2 s,
    for at most ``retry_for`` seconds; then the last error goes to the caller."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + retry_for
    delay = 0.1
    while True:
        try:
            return await call()
        except Unreachable as exc:
            if loop.time() + delay > deadline:
                raise
            if on_retry is not None:
                on_retry(str(exc))
            await asyncio.sleep(delay)
            delay = min(2.0, delay * 2)
