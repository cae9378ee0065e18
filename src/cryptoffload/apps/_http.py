"""What the project's aiohttp servers (the ridge parties, the HE-CNN server) share.

Why one module: both servers must bind before slow start-up work (a busy port is a one-line
error at once), load TLS material with one-line errors, answer every refusal with a JSON 4xx
and keep running, bound every request body by what its route expects, and stop cleanly on a
signal; their clients must build TLS contexts the same way and retry an unreachable peer the
same way. Written once here, so a fix to one server is a fix to both.

Bodies: every route is added with :func:`add_route` and its largest body (0 for routes that
take none). A declared ``Content-Length`` above it is refused (413) before a byte is read, and
a handler reads with :func:`read_body`, which stops at its own limit (a chunked body has no
declared length). An error answered while a body is still unread closes the connection, so
the rest of the body is never read either. A JSON body is parsed with :func:`parse_json`:
whatever the parser raises becomes a 400 JSON error.

Slow clients: connections are accepted by :mod:`._listen` (caps per client address and in
total, a bounded TLS handshake, a back-off on EMFILE); a request head must be complete within
``header_timeout`` (aiohttp's keep-alive timer, which also runs from a connection's start) and
a body within ``body_timeout`` plus a second per ``body_min_rate`` bytes (:func:`read_body`).
The values are one :class:`ServerLimits`, set per server (``serve(limits=...)``) or for the
process by the command line (:func:`set_limits`).
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import signal
import socket
import ssl
import threading
from pathlib import Path
from contextlib import contextmanager
from typing import Awaitable, Callable, Iterator, Optional, Sequence, TypeVar

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.typedefs import Middleware

from cryptoffload.apps._listen import Acceptor, ServerLimits
from cryptoffload.checks import MAX_JSON_INT_DIGITS, JsonRefused, JsonValue, strict_json
from cryptoffload.errors import ConfigError, CryptoffloadError
from cryptoffload.io import read_descriptor, read_input, read_input_text
from cryptoffload.private_files import open_private, write_private

T = TypeVar("T")
MAX_BODY = web.AppKey("max_body", dict)
MAX_PEM_BYTES = 1024 * 1024  # a certificate chain or a key (PEM)
LIMITS = web.AppKey("limits", ServerLimits)
log = logging.getLogger("cryptoffload.http")
_limits = ServerLimits()


def set_limits(limits: ServerLimits) -> None:
    """The limits of every server this process starts without its own (the command line's
    ``--max-connections`` and ``--max-connections-per-client``)."""
    global _limits
    _limits = limits


def limits() -> ServerLimits:
    return _limits


Classify = Callable[[Exception], Optional[tuple[int, str, str]]]
Respond = Callable[[int, str, str], web.Response]
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def one_line(text: object) -> str:
    """``text`` with every run of white space as one space (error messages, log lines)."""
    return " ".join(str(text).split())


# -- errors -----------------------------------------------------------------------------------


def error_middleware(classify: Classify, respond: Respond, log: logging.Logger) -> Middleware:
    """A middleware answering ``respond(status, code, message)`` for every refusal.

    ``classify(exc)`` maps an app's own exceptions to ``(status, code, message)`` (or None);
    other aiohttp HTTP errors keep their status; anything else is logged and becomes a 500
    without details for the client. Task cancellation is never swallowed.
    """

    def answer(request: web.Request, exc: Exception) -> web.StreamResponse:
        mapped = classify(exc)
        if mapped is not None:
            status, code, text = mapped
            # a refusal is logged with who asked and why; never a body, a header or a token
            log.warning("refused %s %s from %s: %d %s: %s", request.method, request.path[:100], request.remote,
                        status, code, one_line(text)[:200])
            return respond(status, code, text)
        if isinstance(exc, web.HTTPException):
            if exc.status < 400:
                raise exc
            detail = exc.text if isinstance(exc, (BodyTooLarge, web.HTTPBadRequest, web.HTTPTooManyRequests,
                                                web.HTTPRequestTimeout)) \
                else f"{exc.reason} ({request.method} {request.path})"
            log.warning("refused %s %s from %s: %d %s", request.method, request.path[:100], request.remote,
                        exc.status, exc.reason)
            return respond(exc.status, exc.reason.lower().replace(" ", "_"), detail or exc.reason)
        log.exception("internal error while handling %s %s", request.method, request.path)
        return respond(500, "internal", "internal error (see the server log)")

    @web.middleware
    async def errors(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            return await handler(request)
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as exc:
            resp = answer(request, exc)
            if request.body_exists and not request.content.is_eof():
                resp.force_close()  # never read (or keep) the rest of a refused body
            return resp

    return errors


# -- bodies -----------------------------------------------------------------------------------


class BodyTooLarge(web.HTTPRequestEntityTooLarge):
    """A body beyond what its route (or its sender) may send."""

    def __init__(self, limit: int, what: str) -> None:
        super().__init__(max_size=limit, text=f"{what}: the body is larger than the {limit:,} bytes accepted here"
                         if limit else f"{what} takes no request body")


def new_app(errors: Middleware, *, middlewares: tuple[Middleware, ...] = ()) -> web.Application:
    """An application whose routes are added with :func:`add_route` (body limits checked
    before the handler runs), ``errors`` outermost."""
    app = web.Application(middlewares=[errors, _body_guard, *middlewares])
    app[MAX_BODY] = {}
    return app


def add_route(app: web.Application, method: str, path: str, handler: Handler, *, max_body: int = 0) -> None:
    """Route ``method path`` to ``handler``, which accepts bodies of at most ``max_body``
    bytes (0: none)."""
    route = app.router.add_route(method, path, handler)
    app[MAX_BODY][route] = max_body


@web.middleware
async def _body_guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    limit = request.app[MAX_BODY].get(request.match_info.route)
    if limit is not None:
        declared = request.content_length
        if declared is not None and declared > limit:
            raise BodyTooLarge(limit, f"{request.method} {request.path}")
        if limit == 0 and declared is None and request.body_exists:  # chunked body on a body-less route
            raise BodyTooLarge(0, f"{request.method} {request.path}")
    return await handler(request)


async def read_body(request: web.Request, limit: int) -> bytes:
    """The request body, refused (413) as soon as it passes ``limit`` bytes: at most ``limit``
    bytes are ever held. A sender slower than the server's limits allow (``body_timeout`` plus
    a second per ``body_min_rate`` bytes received) is answered 408 and dropped."""
    what = f"{request.method} {request.path}"
    if request.content_length is not None and request.content_length > limit:
        raise BodyTooLarge(limit, what)
    lim = request.app.get(LIMITS) or _limits
    loop = asyncio.get_running_loop()
    start = loop.time()
    buf = bytearray()
    try:
        while True:
            try:
                async with asyncio.timeout_at(start + lim.body_timeout + len(buf) / lim.body_min_rate):
                    chunk = await request.content.readany()
            except TimeoutError:
                raise web.HTTPRequestTimeout(text=f"{what}: the body came slower than this server accepts "
                                                  f"({len(buf):,} bytes in {loop.time() - start:.0f} s); "
                                                  "send it at once, on a faster link") from None
            if not chunk:
                return bytes(buf)
            if len(buf) + len(chunk) > limit:
                raise BodyTooLarge(limit, what)
            buf += chunk
    except (HttpProcessingError, ConnectionResetError):  # the sender stopped or left before its declared
        # length, or garbled its chunks: its fault, not the server's (no traceback)
        raise web.HTTPBadRequest(text=f"{what}: the body ended before its declared length, or its chunks are "
                                      "garbled (truncated)") from None


#: decimal digits of one JSON integer (the one reader of outside JSON: :func:`cryptoffload.checks.strict_json`)
MAX_INT_DIGITS = MAX_JSON_INT_DIGITS


class MalformedJSON(web.HTTPBadRequest):
    """A body that is not the JSON the route expects (answered 400 with the reason)."""


def parse_json(body: bytes | str, what: str = "the request body", *, expect: type | None = dict) -> JsonValue:
    """``body`` (UTF-8 JSON) as a Python value of type ``expect`` (None: any). Raises
    :class:`MalformedJSON` (400) for anything else, whatever the parser would raise: invalid
    UTF-8, a syntax error, nesting too deep, an integer of more than :data:`MAX_INT_DIGITS`
    digits, NaN/Infinity or an out-of-range number, a key twice in one object (all refused by
    :func:`cryptoffload.checks.strict_json`), another top-level type."""
    try:
        value = strict_json(body)
    except JsonRefused as exc:
        reason = str(exc)
    else:
        if expect is None or isinstance(value, expect):
            return value
        names: dict[type, str] = {dict: "an object", list: "an array", str: "a string"}
        name = names.get(type(value), type(value).__name__)
        reason = f"it must be a JSON {'object' if expect is dict else expect.__name__}, not {name}"
    raise MalformedJSON(text=f"{what} is not acceptable JSON: {reason}; send one UTF-8 JSON "
                             f"{'object' if expect is dict else 'value'}")


class InFlight:
    """At most ``limit`` requests of one caller at a time (429 beyond): what bounds the memory
    one authenticated caller can pin with concurrent large bodies. ``with in_flight(who):``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._count: dict[str, int] = {}

    @contextmanager
    def __call__(self, who: str) -> Iterator[None]:
        n = self._count.get(who, 0)
        if n >= self.limit:
            raise web.HTTPTooManyRequests(text=f"{who} already has {n} request(s) in progress; wait for the answer")
        self._count[who] = n + 1
        try:
            yield
        finally:
            if self._count[who] > 1:
                self._count[who] -= 1
            else:
                del self._count[who]


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


def server_ssl(cert: Path | None, key: Path | None, key_what: str = "TLS key (--tls-key)") -> ssl.SSLContext | None:
    """The server's TLS context from a certificate and its key (PEM); None for plain HTTP.

    The key is a secret under the rule of :mod:`cryptoffload.private_files` (ours, 0600, not a
    link, in folders only we or root can write): whoever planted it could read the traffic and
    the tokens in it. OpenSSL then reads the very file that was checked, through its
    descriptor (``/proc/self/fd``), not the path again."""
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        raise ConfigError("TLS needs both --tls-cert and --tls-key")
    read_input(cert, "TLS file (--tls-cert)", max_bytes=MAX_PEM_BYTES, error=ConfigError)  # a FIFO would block OpenSSL
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    with open_private(key, key_what, error=ConfigError) as (fd, st):
        read_descriptor(fd, st, key, f"the {key_what} file", max_bytes=MAX_PEM_BYTES, error=ConfigError)
        checked = f"/proc/self/fd/{fd}" if os.path.isdir("/proc/self/fd") else key
        try:
            ctx.load_cert_chain(cert, checked)
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError(f"cannot load the TLS certificate {cert} / key {key}: {one_line(exc)}") from None
    return ctx


def tls_options(cert: Path | None, key: Path | None, insecure_http: bool) -> ssl.SSLContext | None:
    """The context of a given certificate (checked now, before anything starts); None when the
    server is to make its own (:func:`own_certificate`) or serve plain http."""
    if insecure_http and (cert is not None or key is not None):
        raise ConfigError("--insecure-http and --tls-cert/--tls-key contradict each other; choose one")
    return None if insecure_http else server_ssl(cert, key)


def own_certificate(folder: Path, host: str) -> tuple[ssl.SSLContext, Path]:
    """TLS with a self-signed certificate kept in ``folder`` (made on first use, then reused,
    so clients keep trusting it across restarts). Returns the context and the certificate
    clients must trust."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    if not (cert.exists() and os.path.lexists(key)):  # a link stays, to be refused by server_ssl
        cert, key = self_signed_certificate(folder, cert_hosts(host))
    ctx = server_ssl(cert, key, "TLS key")
    assert ctx is not None
    return ctx, cert


def tls_context(ctx: ssl.SSLContext | None, folder: Path, host: str, insecure_http: bool,
                party: str) -> ssl.SSLContext | None:
    """What a server serves with: ``ctx`` (a certificate it was given), plain http when asked,
    else its own certificate in ``folder``, whose path it prints for the clients to trust."""
    if ctx is None and not insecure_http:
        ctx, cert = own_certificate(folder, host)
        print(f"{party}: TLS certificate {cert} (clients: --cafile {cert})", flush=True)
    return ctx


def client_ssl(cafile: Path | Sequence[Path] | None) -> ssl.SSLContext | None:
    """A client context trusting ``cafile`` (one file or several, e.g. the self-signed
    certificates of two servers); None: the system's trust store for https URLs."""
    if cafile is None:
        return None
    files = [cafile] if isinstance(cafile, (str, Path)) else list(cafile)
    if not files:
        return None
    ctx = ssl.create_default_context()
    for f in files:
        pem = read_input_text(f, "certificate (--cafile)", max_bytes=MAX_PEM_BYTES, error=ConfigError)
        try:
            ctx.load_verify_locations(cadata=pem)
        except (OSError, ssl.SSLError, ValueError) as exc:
            raise ConfigError(f"cannot load --cafile {f}: {one_line(exc)}") from None
    return ctx


def check_url(url: object, what: str, insecure_http: bool) -> str:
    """``url`` if it is an https URL (or an http one and ``insecure_http``): bearer tokens and
    data must not cross a network in the clear unless the user asks for it."""
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ConfigError(f"the {what} URL must start with https:// (or http:// with --insecure-http), got {url!r}")
    if url.startswith("http://") and not insecure_http:
        raise ConfigError(f"the {what} URL {url} is plain http: tokens and data would cross the network in the "
                          "clear; use the server's https URL, or pass --insecure-http")
    return url


def cert_hosts(host: str) -> tuple[str, ...]:
    """Names a generated certificate covers: the listening host (for a wildcard address, this
    machine's name) and loopback."""
    first = socket.gethostname() if host in ("0.0.0.0", "::", "") else host
    return tuple(dict.fromkeys((first, "127.0.0.1", "localhost")))


def self_signed_certificate(folder: Path, hosts: tuple[str, ...] = ("127.0.0.1", "localhost"),
                            hours: float = 24.0) -> tuple[Path, Path]:
    """A short-lived self-signed certificate for ``hosts`` and its private key (P-256, PEM) in
    ``folder``: ``cert.pem`` (0644: it is what clients trust) and ``key.pem`` (a private file:
    0600 from creation, never through a link, :mod:`cryptoffload.private_files`). For
    parties started together (the ridge demo), each client given ``cert.pem`` as its CA file."""
    import datetime
    import ipaddress
    import secrets

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    from cryptoffload.io import atomic_write

    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = []
    for h in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(h)))
        except ValueError:
            names.append(x509.DNSName(h))
    # a name of its own: clients trusting several such certificates (the CSP's, the platform's)
    # look the issuer up by name, and two certificates called "127.0.0.1" would collide
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"cryptoffload {hosts[0]} {secrets.token_hex(8)}")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=hours))
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256()))
    key_path = write_private(folder / "key.pem", key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()), "TLS key",
        overwrite=True)
    cert_path = atomic_write(folder / "cert.pem", cert.public_bytes(serialization.Encoding.PEM))
    return cert_path, key_path


# -- serving ----------------------------------------------------------------------------------


async def serve(app: web.Application, sock: socket.socket, stop: asyncio.Event, *,
                ssl_context: ssl.SSLContext | None = None, on_ready: Callable[[str], None] | None = None,
                limits: ServerLimits | None = None) -> None:
    """Serve ``app`` on ``sock`` until ``stop`` is set; ``on_ready(url)`` once it accepts.
    ``limits`` (default: :func:`limits`) bound what slow or greedy clients can hold."""
    lim = limits or _limits
    app[LIMITS] = lim
    # after refusing a body it did not read, the server drains the rest for at most a second
    # before closing (aiohttp's default is 10 s): closing at once would make the kernel reset
    # the connection and destroy the error answer; draining longer lets a client hold the
    # connection and the bandwidth. Nothing drained is kept. keepalive_timeout is also the
    # time a connection has, from its start, to send a complete request head (aiohttp arms it
    # in connection_made): the header timeout.
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=2.0, lingering_time=1.0,
                           keepalive_timeout=lim.header_timeout)
    await runner.setup()
    assert runner.server is not None
    acceptor = Acceptor(sock, runner.server, ssl_context=ssl_context, limits=lim, log=log)
    try:
        acceptor.start()
        if on_ready is not None:
            on_ready(url_of(sock, "https" if ssl_context else "http"))
        await stop.wait()
    finally:
        acceptor.close()
        await runner.cleanup()


async def serve_until_signalled(app: web.Application, sock: socket.socket, *,
                                ssl_context: ssl.SSLContext | None = None,
                                on_ready: Callable[[str], None] | None = None,
                                limits: ServerLimits | None = None) -> None:
    """:func:`serve` until SIGINT or SIGTERM arrives (the command-line servers' lifetime)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await serve(app, sock, stop, ssl_context=ssl_context, on_ready=on_ready, limits=limits)


class ServerThread:
    """An app served from a background thread (tests, notebooks):
    ``with ServerThread(make_app) as url:``. ``make_app`` is called on the server's loop."""

    def __init__(self, make_app: Callable[[], web.Application], host: str = "127.0.0.1", port: int = 0, *,
                 ssl_context: ssl.SSLContext | None = None, on_stop: Callable[[], object] | None = None,
                 limits: ServerLimits | None = None) -> None:
        self._make_app = make_app
        self._limits = limits
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
                            on_ready=lambda _url: self._ready.set(), limits=self._limits)
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

    def __exit__(self, *exc: object) -> None:
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
