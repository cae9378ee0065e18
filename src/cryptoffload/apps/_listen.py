"""Accepting connections for the project's aiohttp servers: what aiohttp's sites leave open.

aiohttp's sites hand the listening socket to asyncio's own accept loop, which accepts every
connection, gives a TLS client 60 s to finish its handshake, and on EMFILE (no file
descriptor left) logs a traceback and retries every second. One client that opens
connections and never sends a byte could then hold every descriptor of the process. Here
the server accepts itself (``loop.sock_accept``), and for each connection:

- refuses it at once, before any TLS handshake or byte read, when its client address already
  holds ``max_per_client`` connections or the server ``max_connections`` (a plain-http
  client gets a short 503 JSON answer first; a TLS one just sees the connection close);
- hands it to aiohttp's request handler (``loop.connect_accepted_socket``) with the TLS
  handshake bounded by ``handshake_timeout``;
- on EMFILE/ENFILE/ENOBUFS/ENOMEM backs off (50 ms doubling to 1 s) instead of spinning,
  and logs one line per interval with the count of what it left out (:class:`RateLimitedLog`).

The header and body timeouts are aiohttp's and :func:`cryptoffload.apps._http.read_body`'s;
their values live here too, in :class:`ServerLimits`, so one object says what a server
tolerates.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import math
import resource
import socket
import ssl
import time
from dataclasses import dataclass, fields
from typing import Callable

from cryptoffload.errors import ConfigError

#: the limits the command line sets (the others are ServerLimits fields only)
_OPTIONS = {"max_connections": "--max-connections", "max_per_client": "--max-connections-per-client"}
#: accept errors that mean "no resource now, later may work": back off, never crash
RESOURCE_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
#: accept errors about one connection (the client gave up between SYN and accept): skip it
TRANSIENT_ERRNOS = frozenset({errno.ECONNABORTED, errno.EPROTO, errno.EPERM, errno.EAGAIN, errno.EINTR})


def _fd_limit() -> int:
    try:
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (OSError, ValueError):  # pragma: no cover - every POSIX system has it
        return 1024
    return 1 << 20 if soft == resource.RLIM_INFINITY else int(soft)


def default_max_connections() -> int:
    """Half the process's open-file limit (512 under the usual 1,024), at most 4,096: the
    other half stays for the database, the logs, the worker threads and accept itself."""
    return max(8, min(4096, _fd_limit() // 2))


@dataclass(frozen=True)
class ServerLimits:
    """What one server tolerates from its clients (all times in seconds).

    ``max_connections`` 0 means :func:`default_max_connections`. ``header_timeout`` bounds
    the time from a connection's start (or the end of its previous answer) to a complete
    request head, so it is also how long an idle keep-alive connection stays open. A body
    must arrive within ``body_timeout`` plus one second per ``body_min_rate`` bytes received.
    """

    max_connections: int = 0
    max_per_client: int = 32
    handshake_timeout: float = 10.0
    header_timeout: float = 20.0
    body_timeout: float = 30.0
    body_min_rate: int = 16 * 1024

    def __post_init__(self) -> None:
        for f in fields(self):
            value, integer = getattr(self, f.name), f.type == "int"
            floor = 0 if f.name == "max_connections" else 1 if integer else 0.01
            if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)) \
                    or not floor <= value < math.inf:
                name = _OPTIONS.get(f.name, f"ServerLimits.{f.name}")
                kind = "an integer" if integer else "a number of seconds"
                raise ConfigError(f"server limit {name} must be {kind} >= {floor}, got {value!r}")

    @property
    def total(self) -> int:
        return self.max_connections or default_max_connections()


class RateLimitedLog:
    """At most one log line per ``interval`` seconds and key; the next line that passes says
    how many were left out since the previous one."""

    def __init__(self, log: logging.Logger, interval: float = 10.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.log, self.interval, self._clock = log, interval, clock
        self._last: dict[str, tuple[float, int]] = {}

    def warning(self, key: str, fmt: str, *args: object) -> bool:
        """Log ``fmt % args`` unless ``key`` was logged less than ``interval`` ago; True if logged."""
        now = self._clock()
        seen = self._last.get(key)
        if seen is not None and now - seen[0] < self.interval:
            self._last[key] = (seen[0], seen[1] + 1)
            return False
        if seen is not None and seen[1]:
            fmt += " (%d similar message(s) left out in the last %.0f s)"
            args = (*args, seen[1], now - seen[0])
        self.log.warning(fmt, *args)
        self._last[key] = (now, 0)
        return True


_BUSY_BODY = (b'{"type":"error","status":503,"error":"too_many_connections","message":"this server holds as '
              b'many connections from your address (or in all) as it allows; close idle ones and retry"}')
BUSY = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\n"
        b"Retry-After: 1\r\nContent-Length: %d\r\n\r\n" % len(_BUSY_BODY)) + _BUSY_BODY


class _Slot(asyncio.Protocol):
    """aiohttp's request handler for one connection, holding that connection's place in the
    counts until the connection is lost (or its handshake fails)."""

    def __init__(self, acceptor: "Acceptor", client: str, inner: asyncio.Protocol) -> None:
        self._acceptor, self._client, self._inner = acceptor, client, inner
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._acceptor._release(self._client)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received()

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        try:
            self._inner.connection_lost(exc)
        finally:
            self.release()


class Acceptor:
    """Accepts on ``sock`` for ``protocol_factory`` (an aiohttp ``Server``) within ``limits``.
    ``start()`` once on the serving loop; ``close()`` stops accepting and closes ``sock``."""

    def __init__(self, sock: socket.socket, protocol_factory: Callable[[], asyncio.Protocol], *,
                 ssl_context: ssl.SSLContext | None, limits: ServerLimits, log: logging.Logger) -> None:
        self._sock, self._factory, self._ssl, self.limits = sock, protocol_factory, ssl_context, limits
        self._total_cap = limits.total
        self._quiet = RateLimitedLog(log)
        self.per_client: dict[str, int] = {}
        self.open = 0
        self._task: asyncio.Task[None] | None = None
        self._pending: set[asyncio.Task[None]] = set()

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._accept_loop())

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
        for task in list(self._pending):
            task.cancel()
        self._sock.close()

    async def _accept_loop(self) -> None:
        loop = asyncio.get_running_loop()
        delay = 0.0
        while True:
            try:
                conn, addr = await loop.sock_accept(self._sock)
            except OSError as exc:
                if exc.errno in TRANSIENT_ERRNOS:
                    continue
                if exc.errno not in RESOURCE_ERRNOS:
                    raise
                delay = min(1.0, delay * 2 or 0.05)
                self._quiet.warning("accept", "cannot accept connections: %s (%d open here, open-file limit "
                                    "%d); retrying every %.2f s: raise the limit (ulimit -n) or lower "
                                    "--max-connections", exc.strerror, self.open, _fd_limit(), delay)
                await asyncio.sleep(delay)
                continue
            delay = 0.0
            self._admit(conn, addr)

    def _admit(self, conn: socket.socket, addr: object) -> None:
        client = str(addr[0]) if isinstance(addr, tuple) and addr else str(addr)
        held = self.per_client.get(client, 0)
        if held >= self.limits.max_per_client or self.open >= self._total_cap:
            why = (f"it holds {held} already (--max-connections-per-client {self.limits.max_per_client})"
                   if held >= self.limits.max_per_client
                   else f"{self.open} are open (--max-connections {self._total_cap})")
            self._quiet.warning("refuse", "refused a connection from %s: %s", client, why)
            if self._ssl is None:
                try:
                    conn.send(BUSY)  # non-blocking: whatever fits, never a wait
                except OSError:
                    pass
            conn.close()
            return
        self.per_client[client] = held + 1
        self.open += 1
        slot = _Slot(self, client, self._factory())
        task = asyncio.get_running_loop().create_task(self._connect(conn, slot))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _connect(self, conn: socket.socket, slot: _Slot) -> None:
        loop = asyncio.get_running_loop()
        try:
            await loop.connect_accepted_socket(lambda: slot, conn, ssl=self._ssl, ssl_handshake_timeout=(
                self.limits.handshake_timeout if self._ssl is not None else None))
        except OSError:  # handshake failed or timed out (TimeoutError is an OSError): closed already
            slot.release()
        except BaseException:
            slot.release()
            conn.close()
            raise

    def _release(self, client: str) -> None:
        self.open -= 1
        left = self.per_client.get(client, 1) - 1
        if left > 0:
            self.per_client[client] = left
        else:
            self.per_client.pop(client, None)
