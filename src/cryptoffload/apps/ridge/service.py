"""The ridge protocol (:mod:`.protocol`) as separate processes talking HTTP (aiohttp).

Roles and who talks to whom (loopback by default; ``https`` with ``--tls-cert/--tls-key`` on
the servers and ``--cafile`` on their clients)::

    provider --upload--> platform --unpack_request, solve_request--> CSP
    buyer --finalize, mask_request--> platform            buyer --coefficients_request--> CSP

* **CSP** (:class:`CspService`): makes both key pairs (private keys never leave the process;
  with ``--key-dir`` they are saved 0600 and reused on restart), publishes the parameters
  and public keys (``GET /params``), splits and re-encrypts one masked aggregate, solves one
  masked system and hands w' only to a caller presenting the buyer token. Why "one": a CSP
  that decrypted whatever it is sent would be a decryption oracle for anyone who can reach
  it (a captured provider upload, unmasked, would come back field by field). So a key pair
  serves one session: the first aggregate (and the first system) is processed, an identical
  retry is answered from a cache, anything else is refused with 409.
* **Platform** (:class:`PlatformService`): fetches parameters and keys from the CSP, accepts
  uploads (idempotent by ``upload_id``, committed to SQLite with the new aggregate before the
  200, :mod:`.store`), folds each upload into the aggregate with one native call
  (:func:`~cryptoffload.crypto._native.core.column_products`), and on ``finalize`` runs the
  masked unpacking with the CSP and the masked solve, keeping R, r for the buyer.
* **Provider** (:func:`run_provider`): encodes, packs and encrypts its records in batches and
  uploads them; a failed batch is retried with the same ``upload_id`` (and a fresh message
  id), so a batch whose acknowledgement was lost is not counted twice.
* **Buyer** (:func:`run_buyer`): asks the platform to finalize, gets R, r from it and w' from
  the CSP, and recovers the model.

The buyer token: the CSP publishes only a hash of it (``buyer_token_sha256`` in its
parameters); the platform checks the buyer's ``finalize`` and ``mask_request`` against that
hash, the CSP its ``coefficients_request``. So w' goes only to the buyer, and so do R, r.

Every message is a :mod:`.messages` envelope; a server answers a refused message with a 4xx
JSON error (``{"type": "error", "error": code, "message": ...}``) and keeps running.
Logs never contain private keys or plaintexts: one line per accepted upload (records, bytes)
and one per protocol step.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import hashlib
import json
import logging
import os
import queue
import secrets
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable, Mapping, Sequence, TypeVar

import aiohttp
import gmpy2
import numpy as np
from aiohttp import web

from cryptoffload.apps.http_errors import error_middleware

from cryptoffload.apps.ridge import messages as m
from cryptoffload.apps.ridge.messages import ProtocolError
from cryptoffload.apps.ridge.protocol import (
    MODES,
    Aggregate,
    Csp,
    MaskedSystem,
    MaskSecret,
    Platform,
    Provider,
    ReconstructionError,
    RidgeModel,
    RidgeParams,
    SingularMatrixError,
    Upload,
    check_solve_key,
    error_bound,
    recover_model,
    required_solve_key_bits,
    upload_layout,
)
from cryptoffload.apps.ridge.store import FinalizeState, PlatformStore, UploadRecord
from cryptoffload.crypto._native import core as native
from cryptoffload.crypto.paillier import (
    MIN_SECURE_KEY_BITS,
    KeyMismatchError,
    PrivateKey,
    PublicKey,
    generate_keypair,
    load_key,
    save_key,
)
from cryptoffload.errors import ConfigError, CryptoffloadError
from cryptoffload.workloads.ridge_data import RidgeData, generate, load_csv, load_diabetes_scaled

log = logging.getLogger("cryptoffload.ridge")

TOKEN_ENV = "CRYPTOFFLOAD_RIDGE_BUYER_TOKEN"
#: fault injection for tests: ``stall-after-commit:N`` makes the platform hang (without
#: answering) right after committing its N-th upload, i.e. "killed between commit and 200"
FAULT_ENV = "CRYPTOFFLOAD_RIDGE_FAULT"
READY_MARK = " listening on "

T = TypeVar("T")


_in_flight = 0


async def _run(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """CPU work (encryption, decryption, native products, fsync) off the event loop, so a
    server keeps answering status requests while it works."""
    global _in_flight
    _in_flight += 1
    try:
        return await asyncio.get_running_loop().run_in_executor(None, functools.partial(fn, *args, **kwargs))
    finally:
        _in_flight -= 1


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


# ============================================================================================
# server plumbing


def _json(message: Mapping[str, Any], status: int = 200) -> web.Response:
    return web.Response(body=m.dumps(message), status=status, content_type="application/json")


def _error(status: int, code: str, text: str) -> web.Response:
    return _json(m.error_message(status, code, _one_line(text)), status)


def _classify(exc: Exception) -> tuple[int, str, str] | None:
    """The parties' refusals (see :mod:`cryptoffload.apps.http_errors`); the party keeps running."""
    if isinstance(exc, ProtocolError):
        return exc.status, exc.code, str(exc)
    if isinstance(exc, KeyMismatchError):
        return 400, "foreign_key", str(exc)
    if isinstance(exc, (SingularMatrixError, ReconstructionError)):
        return 422, "unsolvable", str(exc)
    if isinstance(exc, CryptoffloadError):
        return 422, "unprocessable", str(exc)
    return None


_errors = error_middleware(_classify, _error, log)


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket, made before any slow start-up work so that a busy port is a
    one-line error at once (and clients queue in the backlog while keys are generated)."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ConfigError(f"--port must be 0..65535, got {port!r}")
    try:
        family, type_, proto, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                           flags=socket.AI_PASSIVE)[0]
    except socket.gaierror as exc:
        raise ConfigError(f"cannot listen on host {host!r}: {exc.strerror}") from None
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


def _url_of(sock: socket.socket, scheme: str) -> str:
    host, port = sock.getsockname()[:2]
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{port}"


def _server_ssl(cert: Path | None, key: Path | None) -> ssl.SSLContext | None:
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        raise ConfigError("TLS needs both --tls-cert and --tls-key")
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        ctx.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"cannot load the TLS certificate {cert} / key {key}: {_one_line(exc)}") from None
    return ctx


def client_ssl(cafile: Path | None) -> ssl.SSLContext | None:
    """A client context trusting ``cafile`` (e.g. a self-signed server certificate); None:
    the system's trust store for https URLs."""
    if cafile is None:
        return None
    try:
        return ssl.create_default_context(cafile=str(cafile))
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"cannot load --cafile {cafile}: {_one_line(exc)}") from None


async def _serve(app: web.Application, sock: socket.socket, role: str, ssl_context: ssl.SSLContext | None,
                 on_ready: Callable[[str], None] | None = None) -> None:
    """Serve until SIGINT/SIGTERM, then stop cleanly (exit status 0)."""
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=2.0)
    await runner.setup()
    try:
        site = web.SockSite(runner, sock, ssl_context=ssl_context)
        await site.start()
        url = _url_of(sock, "https" if ssl_context else "http")
        if on_ready is not None:
            on_ready(url)
        print(f"ridge {role}{READY_MARK}{url}", flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        log.info("%s stopping", role)
    finally:
        await runner.cleanup()
    if _in_flight:
        # A thread is still inside native code (say the platform's masked solve, tens of
        # seconds) and cannot be interrupted; asyncio.run would wait for it. Every state
        # change is already committed (a SIGKILL is survivable by design), so leave now.
        log.info("%s abandons %d computation(s) in progress; its state is on disk", role, _in_flight)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def configure_logging() -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    logging.getLogger("aiohttp").setLevel(logging.WARNING)


class _ReplayGuard:
    """Message ids already seen. Why ids are remembered from the *start* of processing: a
    replay that arrives while the original is still being processed is refused too."""

    def __init__(self, seen: set[str] | None = None) -> None:
        self.seen = seen if seen is not None else set()

    def check(self, message_id: str) -> None:
        if message_id in self.seen:
            raise ProtocolError(f"message {message_id} was already received (replay refused)", status=409,
                                code="replayed_message")
        self.seen.add(message_id)


# ============================================================================================
# session description (what GET /params carries)


@dataclass(frozen=True)
class SessionInfo:
    """Parameters and public keys of one CSP session, as every party learns them."""

    params: RidgeParams
    upload_pk: PublicKey
    solve_pk: PublicKey
    buyer_token_sha256: str

    def to_message(self, role: str) -> dict[str, Any]:
        layout = upload_layout(self.params, self.upload_pk)
        return m.new_message(
            m.PARAMS, self.upload_pk.fingerprint, role=role, params=m.params_to_dict(self.params),
            upload_key=self.upload_pk.to_dict(), solve_key=self.solve_pk.to_dict(),
            buyer_token_sha256=self.buyer_token_sha256,
            plaintexts_per_record=layout.plaintexts_needed(self.params.value_count))

    @classmethod
    def from_message(cls, msg: Mapping[str, Any]) -> "SessionInfo":
        params = m.params_from_dict(msg.get("params"))
        upk = m.public_key_from(msg.get("upload_key"), "upload_key")
        spk = m.public_key_from(msg.get("solve_key"), "solve_key")
        if msg.get("key_fingerprint") != upk.fingerprint.hex():
            raise ProtocolError("parameters message names another key than its upload key", code="foreign_key")
        th = msg.get("buyer_token_sha256")
        if not isinstance(th, str) or len(th) != 64:
            raise ProtocolError("parameters lack buyer_token_sha256", code="malformed")
        return cls(params, upk, spk, th)


# ============================================================================================
# CSP


def _csp_keys(params: RidgeParams, upload_bits: int, solve_bits: int | None, insecure_study_size: bool,
              key_dir: Path | None) -> tuple[tuple[PublicKey, PrivateKey], tuple[PublicKey, PrivateKey], bool]:
    """Both key pairs: reused from ``key_dir`` when it holds them (for the same parameters),
    else generated (and saved there, private keys 0600). Returns (upload, solve, reused)."""
    if key_dir is not None:
        up, sp, pj = key_dir / "upload.key", key_dir / "solve.key", key_dir / "params.json"
        if up.exists() or sp.exists():
            if not (up.exists() and sp.exists() and pj.exists()):
                raise ConfigError(f"{key_dir} holds only part of a CSP key set (upload.key, solve.key, params.json)")
            try:
                saved = json.loads(pj.read_text())
            except (OSError, json.JSONDecodeError):
                raise ConfigError(f"{pj} is unreadable") from None
            if saved != m.params_to_dict(params):
                raise ConfigError(f"{key_dir} holds keys made for other parameters; use another --key-dir")
            keys = []
            for path in (up, sp):
                sk = load_key(path)
                if not isinstance(sk, PrivateKey):
                    raise ConfigError(f"{path} holds no private key")
                keys.append((sk.public_key, sk))
            return keys[0], keys[1], True
    upload = generate_keypair(upload_bits, insecure_study_size=insecure_study_size)
    bits = solve_bits if solve_bits is not None else max(MIN_SECURE_KEY_BITS, required_solve_key_bits(params))
    solve = generate_keypair(bits, insecure_study_size=insecure_study_size)
    upload_layout(params, upload[0])  # refuse unusable keys before saving them for reuse
    check_solve_key(params, solve[0])
    if key_dir is not None:
        try:
            key_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            save_key(upload[1], key_dir / "upload.key")
            save_key(upload[0], key_dir / "upload.pub")
            save_key(solve[1], key_dir / "solve.key")
            save_key(solve[0], key_dir / "solve.pub")
            (key_dir / "params.json").write_text(json.dumps(m.params_to_dict(params)))
        except OSError as exc:
            raise ConfigError(f"cannot write keys to {key_dir}: {exc.strerror}") from None
    return upload, solve, False


class CspService:
    """The crypto service provider's HTTP face (module docstring)."""

    def __init__(self, csp: Csp, token_sha256: str) -> None:
        self.csp = csp
        self.params = csp.params
        self.info = SessionInfo(csp.params, csp.upload_pk, csp.solve_pk, token_sha256)
        self.plaintexts = upload_layout(csp.params, csp.upload_pk).plaintexts_needed(csp.params.value_count)
        self._replay = _ReplayGuard()
        self._lock = asyncio.Lock()
        self._unpacked: tuple[str, str | None] | None = None  # (request digest, response batch or failed)
        self._solved: tuple[str, list[int]] | None = None  # (system digest, w')
        self._solve_failed: str | None = None  # digest of a system that could not be solved
        up, sp = csp.upload_pk.fingerprint, csp.solve_pk.fingerprint
        self._expected = {m.UNPACK_REQUEST: up, m.SOLVE_REQUEST: sp, m.COEFFICIENTS_REQUEST: sp}
        self._handlers = {m.UNPACK_REQUEST: self._unpack, m.SOLVE_REQUEST: self._solve,
                          m.COEFFICIENTS_REQUEST: self._coefficients}

    def app(self) -> web.Application:
        app = web.Application(middlewares=[_errors], client_max_size=m.MAX_BODY_BYTES)
        app.router.add_get("/params", self._params)
        app.router.add_get("/status", self._status)
        app.router.add_post("/message", self._message)
        return app

    async def _params(self, request: web.Request) -> web.Response:
        return _json(self.info.to_message("csp"))

    async def _status(self, request: web.Request) -> web.Response:
        state = "solved" if self._solved else "unpacked" if self._unpacked else "ready"
        return _json(m.new_message(m.STATUS, self.csp.upload_pk.fingerprint, role="csp", state=state,
                                   solve_key=self.csp.solve_pk.fingerprint.hex()))

    async def _message(self, request: web.Request) -> web.Response:
        msg = m.parse_message(await request.read(), self._expected)
        self._replay.check(msg["message_id"])
        return _json(await self._handlers[msg["type"]](msg, request))

    async def _unpack(self, msg: dict[str, Any], request: web.Request) -> dict[str, Any]:
        batch = await _run(m.decode_ciphertexts, msg.get("ciphertexts"), self.csp.upload_pk, count=self.plaintexts)
        async with self._lock:
            if self._unpacked is not None:
                digest, cached = self._unpacked
                if digest != batch.digest:
                    raise ProtocolError("this CSP session has already unpacked another aggregate (one per key pair)",
                                        status=409, code="already_unpacked")
                if cached is None:
                    raise ProtocolError("this aggregate already failed to unpack", status=409, code="already_unpacked")
                text = cached
                log.info("unpack request repeated: answered from cache")
            else:
                # the one use is spent even if unpacking fails: a failure says something about
                # the decrypted values, so it must not be repeatable with variations
                self._unpacked = (batch.digest, None)
                try:
                    fields = await _run(self.csp.split_and_reencrypt, batch.values)
                except CryptoffloadError:
                    raise ProtocolError("the aggregate does not unpack with this session's layout (not masked by "
                                        "the platform, or overflowed); this CSP session is spent", status=422,
                                        code="unprocessable") from None
                text = m.encode_ciphertexts(fields, self.csp.solve_pk)
                self._unpacked = (batch.digest, text)
                log.info("unpacked a masked aggregate: %d ciphertexts -> %d fields under the solve key",
                         len(batch.values), len(fields))
        return m.new_message(m.UNPACK_RESPONSE, self.csp.solve_pk.fingerprint, ciphertexts=text,
                             request_digest=batch.digest)

    async def _solve(self, msg: dict[str, Any], request: web.Request) -> dict[str, Any]:
        d = self.params.d
        batch = await _run(m.decode_ciphertexts, msg.get("ciphertexts"), self.csp.solve_pk, count=d * d + d)
        async with self._lock:
            if self._solved is not None or self._solve_failed is not None:
                if (self._solved[0] if self._solved else self._solve_failed) != batch.digest:
                    raise ProtocolError("this CSP session has already solved another system (one per key pair)",
                                        status=409, code="already_solved")
                if self._solved is None:
                    raise ProtocolError("this system already failed: it is singular modulo n", status=409,
                                        code="already_solved")
                log.info("solve request repeated: answered from cache")
            else:
                v = batch.values
                system = MaskedSystem(self.csp.solve_pk.fingerprint, [v[i * d:(i + 1) * d] for i in range(d)], v[d * d:])
                self._solve_failed = batch.digest  # spent even on failure (as for unpacking)
                w_prime = await _run(self.csp.solve, system)
                self._solve_failed = None
                self._solved = (batch.digest, w_prime)
                log.info("solved a masked %dx%d system; w' kept for the buyer", d, d)
        return m.new_message(m.SOLVE_ACK, self.csp.solve_pk.fingerprint, system_digest=batch.digest)

    async def _coefficients(self, msg: dict[str, Any], request: web.Request) -> dict[str, Any]:
        m.check_token(request.headers.get("Authorization"), self.info.buyer_token_sha256)
        if self._solved is None:
            raise ProtocolError("no system has been solved yet: ask the platform to finalize first", status=409,
                                code="not_ready")
        digest, w_prime = self._solved
        if msg.get("system_digest") != digest:
            raise ProtocolError("the solved system is not the one the platform named (system_digest differs)",
                                status=409, code="digest_mismatch")
        log.info("w' handed to the buyer")
        return m.new_message(m.COEFFICIENTS, self.csp.solve_pk.fingerprint, w_prime=m.ints_to_hex(w_prime),
                             system_digest=digest)


def read_buyer_token(path: Path | None) -> str | None:
    """The buyer token from ``path`` or the environment (``CRYPTOFFLOAD_RIDGE_BUYER_TOKEN``)."""
    if path is not None:
        try:
            token = path.read_text().strip()
        except OSError as exc:
            raise ConfigError(f"cannot read the buyer token file {path}: {exc.strerror}") from None
        if not token:
            raise ConfigError(f"the buyer token file {path} is empty")
        return token
    token = os.environ.get(TOKEN_ENV, "").strip()
    return token or None


def serve_csp(params: RidgeParams, *, host: str = "127.0.0.1", port: int = 0, upload_bits: int = 2048,
              solve_bits: int | None = None, insecure_study_size: bool = False, key_dir: Path | None = None,
              token_file: Path | None = None, backend: str = "auto", tls_cert: Path | None = None,
              tls_key: Path | None = None) -> None:
    """Run the CSP until SIGINT/SIGTERM."""
    configure_logging()
    ctx = _server_ssl(tls_cert, tls_key)
    sock = _bind(host, port)
    upload, solve, reused = _csp_keys(params, upload_bits, solve_bits, insecure_study_size, key_dir)
    csp = Csp(params, upload, solve, backend=backend)
    token = read_buyer_token(token_file)
    if token is None:
        token = secrets.token_urlsafe(32)
        if key_dir is not None and (key_dir / "buyer.token").exists():
            token = read_buyer_token(key_dir / "buyer.token") or token
        elif key_dir is not None:
            key_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(key_dir / "buyer.token", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as fh:
                fh.write(token + "\n")
            print(f"buyer token written to {key_dir / 'buyer.token'} (0600); give it to the buyer", flush=True)
        else:
            print(f"buyer token: {token}  (give it to the buyer: {TOKEN_ENV} or --buyer-token-file)", flush=True)
    service = CspService(csp, m.token_hash(token))
    print(f"ridge csp: {'reused' if reused else 'generated'} upload key {upload[0].bits} bits "
          f"({upload[0].fingerprint.hex()}), solve key {solve[0].bits} bits ({solve[0].fingerprint.hex()})", flush=True)
    try:
        asyncio.run(_serve(service.app(), sock, "csp", ctx))
    finally:
        sock.close()


# ============================================================================================
# HTTP clients


class Unreachable(CryptoffloadError):
    """A peer could not be reached or dropped the connection (worth retrying)."""


class _Peer:
    """One remote party at ``url``: posts envelopes and checks the answers' envelopes."""

    def __init__(self, session: aiohttp.ClientSession, url: str, role: str) -> None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ConfigError(f"the {role} URL must start with http:// or https://, got {url!r}")
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
                              f"({_one_line(exc.certificate_error)}); pass --cafile") from None
        except aiohttp.ClientConnectorError as exc:
            err = exc.os_error.errno if exc.os_error is not None else None
            reason = os.strerror(err).lower() if err else _one_line(exc)
            raise Unreachable(f"cannot reach the {self.role} at {self.url} ({reason})") from None
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
            what = type(exc).__name__ if not str(exc) else _one_line(exc)
            raise Unreachable(f"connection to the {self.role} at {self.url} failed ({what})") from None

    def _answer(self, status: int, body: bytes, what: str, expect: Mapping[str, bytes | None]) -> dict[str, Any]:
        if status == 200:
            try:
                return m.parse_message(body, expect)
            except ProtocolError as exc:
                raise ProtocolError(f"the {self.role} sent an invalid answer to {what}: {exc}", status=502,
                                    code="bad_answer") from None
        try:
            err = json.loads(body)
            text, code = str(err["message"]), str(err["error"])
        except (ValueError, KeyError, TypeError):
            text, code = f"HTTP {status}", "http_error"
        if status == 503:
            raise Unreachable(f"the {self.role} is unavailable for {what}: {text}")
        raise ProtocolError(f"the {self.role} refused {what}: {text} (HTTP {status})", status=status, code=code)

    async def get(self, path: str, expect_type: str, expect_fp: bytes | None = None) -> dict[str, Any]:
        status, body = await self._request("GET", path)
        return self._answer(status, body, f"GET {path}", {expect_type: expect_fp})

    async def post(self, message: Mapping[str, Any], expect_type: str, expect_fp: bytes | None,
                   token: str | None = None) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        status, body = await self._request("POST", "/message", m.dumps(message), headers)
        return self._answer(status, body, str(message.get("type")), {expect_type: expect_fp})


def _session(cafile: Path | None = None, read_timeout: float = 600.0) -> aiohttp.ClientSession:
    ctx = client_ssl(cafile)
    connector = aiohttp.TCPConnector(ssl=ctx if ctx is not None else True)
    return aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(
        total=None, sock_connect=10, sock_read=read_timeout))


async def _retrying(call: Callable[[], Awaitable[T]], retry_for: float, on_retry: Callable[[str], None] | None = None
                    ) -> T:
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


async def fetch_session(peer: _Peer, wait: float = 0.0) -> SessionInfo:
    msg = await _retrying(lambda: peer.get("/params", m.PARAMS), wait)
    try:
        return SessionInfo.from_message(msg)
    except ProtocolError as exc:
        raise ProtocolError(f"the {peer.role} at {peer.url} sent invalid parameters: {exc}", 502) from None


# ============================================================================================
# platform


def _parse_fault(text: str | None) -> int | None:
    if not text:
        return None
    kind, _, count = text.partition(":")
    if kind != "stall-after-commit" or not count.isdigit() or int(count) < 1:
        raise ConfigError(f"{FAULT_ENV} must be 'stall-after-commit:N', got {text!r}")
    return int(count)


class PlatformService:
    """The platform's HTTP face (module docstring); state survives restarts (:mod:`.store`)."""

    def __init__(self, info: SessionInfo, csp_url: str, store: PlatformStore, *, workers: int = 1,
                 backend: str = "auto", cafile: Path | None = None) -> None:
        self.info = info
        self.params = info.params
        self.upload_pk, self.solve_pk = info.upload_pk, info.solve_pk
        self.protocol = Platform(info.params, info.upload_pk, info.solve_pk, workers=workers, backend=backend)
        self.plaintexts = self.protocol.layout.plaintexts_needed(info.params.value_count)
        self.store = store
        self.csp_url = csp_url
        self._cafile = cafile
        state = store.load()
        n2 = self.upload_pk.nsquare
        self.agg_words = state.aggregate if state.aggregate is not None else native.ints_to_words([1] * self.plaintexts, n2)
        self.records = state.records
        self.bytes = state.bytes
        self.uploads: dict[str, UploadRecord] = state.uploads
        self.fin: FinalizeState = state.finalize
        self._replay = _ReplayGuard(state.message_ids)
        self._lock = asyncio.Lock()
        self._fault = _parse_fault(os.environ.get(FAULT_ENV))
        self._accepted_here = 0
        self._csp: _Peer | None = None
        up, sp = self.upload_pk.fingerprint, self.solve_pk.fingerprint
        self._expected = {m.UPLOAD: up, m.FINALIZE: up, m.MASK_REQUEST: sp}
        self._handlers = {m.UPLOAD: self._upload, m.FINALIZE: self._finalize, m.MASK_REQUEST: self._mask}
        if state.uploads or state.finalize.state != "collecting":
            log.info("reloaded %d accepted uploads (%d records), finalisation state %s", len(self.uploads),
                     self.records, self.fin.state)

    def app(self) -> web.Application:
        app = web.Application(middlewares=[_errors], client_max_size=m.MAX_BODY_BYTES)
        app.router.add_get("/params", self._params)
        app.router.add_get("/status", self._status)
        app.router.add_post("/message", self._message)
        app.cleanup_ctx.append(self._csp_client)
        return app

    async def _csp_client(self, app: web.Application) -> AsyncIterator[None]:
        async with _session(self._cafile) as session:
            self._csp = _Peer(session, self.csp_url, "CSP")
            yield

    async def _params(self, request: web.Request) -> web.Response:
        return _json(self.info.to_message("platform"))

    async def _status(self, request: web.Request) -> web.Response:
        return _json(m.new_message(m.STATUS, self.upload_pk.fingerprint, role="platform", state=self.fin.state,
                                   records=self.records, uploads=len(self.uploads), bytes=self.bytes,
                                   max_records=self.params.max_records))

    async def _message(self, request: web.Request) -> web.Response:
        msg = m.parse_message(await request.read(), self._expected)
        self._replay.check(msg["message_id"])
        return _json(await self._handlers[msg["type"]](msg, request))

    async def _remember(self, msg: Mapping[str, Any]) -> None:
        await _run(self.store.remember_message, msg["message_id"], msg["type"])

    # -- uploads --------------------------------------------------------------------------------
    def _ack(self, upload_id: str, status: str) -> dict[str, Any]:
        return m.new_message(m.UPLOAD_ACK, self.upload_pk.fingerprint, upload_id=upload_id, status=status,
                             records_total=self.records, uploads_total=len(self.uploads))

    def _duplicate(self, msg: Mapping[str, Any], upload_id: str, records: int, vectors: int) -> None:
        prior = self.uploads[upload_id]
        if (prior.records, prior.vectors) != (records, vectors):
            raise ProtocolError(f"upload id {upload_id!r} was already accepted for {prior.records} records in "
                                f"{prior.vectors} vectors, not {records} in {vectors}", status=409,
                                code="upload_id_conflict")

    async def _already_accepted(self, msg: Mapping[str, Any], upload_id: str, provider_id: str, records: int,
                                vectors: int, locked: bool = False) -> dict[str, Any]:
        self._duplicate(msg, upload_id, records, vectors)
        if locked:
            await self._remember(msg)
        else:
            async with self._lock:  # every database write runs under the lock
                await self._remember(msg)
        log.info("upload %s from %s repeated: already accepted, not counted again", upload_id, provider_id)
        return self._ack(upload_id, "already accepted")

    def _fold(self, words: bytes, vectors: int) -> bytes:
        """The running aggregate times every vector of the upload, one native call (the
        aggregate is row 0 of the matrix). Refuses an upload holding a non-unit mod n: the
        product of units is a unit, so one gcd per column checks every ciphertext."""
        n2, nn = self.upload_pk.nsquare, gmpy2.mpz(self.upload_pk.n)
        products = native.column_products(self.agg_words + words, vectors + 1, self.plaintexts, n2)
        if any(gmpy2.gcd(p, nn) != 1 for p in products):
            raise ProtocolError("the upload holds a value that is not a ciphertext of the upload key (garbled)",
                                code="malformed")
        return native.ints_to_words(products, n2)

    async def _upload(self, msg: dict[str, Any], request: web.Request) -> dict[str, Any]:
        upload_id = m.str_field(msg, "upload_id")
        provider_id = m.str_field(msg, "provider_id")
        vectors = m.int_field(msg, "vectors", 1, self.params.max_records)
        records = m.int_field(msg, "records", 0, self.params.max_records)
        if upload_id in self.uploads:  # a retry: answered without decoding (even after finalisation)
            return await self._already_accepted(msg, upload_id, provider_id, records, vectors)
        batch = await _run(m.decode_ciphertexts, msg.get("ciphertexts"), self.upload_pk,
                           count=vectors * self.plaintexts, check_units=False)
        if upload_id in self.uploads:  # accepted while this copy was being decoded
            return await self._already_accepted(msg, upload_id, provider_id, records, vectors)
        async with self._lock:
            if upload_id in self.uploads:
                return await self._already_accepted(msg, upload_id, provider_id, records, vectors, locked=True)
            if self.fin.state != "collecting":
                raise ProtocolError(f"the platform is {self.fin.state}: no more uploads", status=409, code="finalized")
            if self.records + records > self.params.max_records:
                raise ProtocolError(f"{self.records + records} records would exceed max_records = "
                                    f"{self.params.max_records} (the slots' guard bits)", status=422,
                                    code="too_many_records")
            new_words = await _run(self._fold, batch.words, vectors)
            rec = UploadRecord(upload_id, provider_id, msg["message_id"], records, vectors, len(batch.words),
                               batch.digest)
            await _run(self.store.accept_upload, rec, new_words, self.records + records, self.bytes + len(batch.words))
            self.agg_words = new_words
            self.records += records
            self.bytes += len(batch.words)
            self.uploads[upload_id] = rec
            self._accepted_here += 1
            log.info("accepted upload %s from %s: %d records, %d bytes (total %d records)", upload_id, provider_id,
                     records, len(batch.words), self.records)
            ack = self._ack(upload_id, "accepted")
        if self._fault is not None and self._accepted_here == self._fault:
            log.warning("fault injection (%s): committed upload %s, now hanging without answering", FAULT_ENV,
                        upload_id)
            await asyncio.Event().wait()
        return ack

    # -- finalisation ---------------------------------------------------------------------------
    async def _csp_post(self, message: dict[str, Any], expect: str, fp: bytes) -> dict[str, Any]:
        assert self._csp is not None
        peer = self._csp
        try:
            # retries resend the same content under a new message id (the CSP caches by content)
            msg = message

            async def call() -> dict[str, Any]:
                nonlocal msg
                try:
                    return await peer.post(msg, expect, fp)
                finally:
                    msg = m.with_new_id(msg)
            return await _retrying(call, 10.0)
        except Unreachable as exc:
            raise ProtocolError(str(exc), status=503, code="csp_unreachable") from None
        except ProtocolError as exc:
            raise ProtocolError(str(exc), status=502, code="csp_refused") from None

    async def _finalize(self, msg: dict[str, Any], request: web.Request) -> dict[str, Any]:
        m.check_token(request.headers.get("Authorization"), self.info.buyer_token_sha256)
        async with self._lock:
            await self._advance()
            await self._remember(msg)
            return m.new_message(m.FINALIZED, self.upload_pk.fingerprint, state=self.fin.state,
                                 records=self.fin.records, uploads=len(self.uploads),
                                 system_digest=self.fin.system_digest)

    async def _advance(self) -> None:
        """Drive finalisation to the end from wherever it stands (store docstring)."""
        p, fin = self.params, self.fin
        ufp, sfp = self.upload_pk.fingerprint, self.solve_pk.fingerprint
        if fin.state == "collecting":
            t0 = time.perf_counter()
            values = [int.from_bytes(self.agg_words[i:i + m.value_bytes(self.upload_pk)], "little")
                      for i in range(0, len(self.agg_words), m.value_bytes(self.upload_pk))]
            masked = await _run(self.protocol.mask_for_unpack, Aggregate(ufp, values, self.records))
            # the protocol object keeps the masks for unmask(); they are persisted with the
            # masked aggregate so that a restart resends the same unpack request
            masks = list(self.protocol._masks or [])
            masked_words = native.ints_to_words(masked, self.upload_pk.nsquare)
            await _run(self.store.save_unpacking, self.records, masks, masked_words)
            self.fin = fin = FinalizeState("unpacking", self.records, masks, masked_words)
            log.info("finalizing %d records from %d uploads: aggregate masked (%.2f s)", self.records,
                     len(self.uploads), time.perf_counter() - t0)
        if fin.state == "unpacking":
            t0 = time.perf_counter()
            req = m.new_message(m.UNPACK_REQUEST, ufp, ciphertexts=m.encode_words(fin.masked, self.plaintexts,
                                                                                   self.upload_pk))
            resp = await self._csp_post(req, m.UNPACK_RESPONSE, sfp)
            fields = await _run(m.decode_ciphertexts, resp.get("ciphertexts"), self.solve_pk, count=p.value_count,
                                name="unpack_response")
            self.protocol._masks = list(fin.masks)
            system = await _run(self.protocol.unmask, fields.values)
            t1 = time.perf_counter()
            masked_system, secret = await _run(self.protocol.mask_system, system)
            flat = [v for row in masked_system.AR for v in row] + list(masked_system.c)
            words = native.ints_to_words(flat, self.solve_pk.nsquare)
            digest = hashlib.sha256(words).hexdigest()
            await _run(self.store.save_solving, secret.R, secret.r, words, digest)
            self.fin = fin = FinalizeState("solving", fin.records, [], b"", secret.R, secret.r, words, digest)
            log.info("unpacked with the CSP (%.2f s); masked the %dx%d system: %d exponentiations, %s (%.2f s)",
                     t1 - t0, p.d, p.d, self.protocol.exponentiations, self.protocol.powm_backend,
                     time.perf_counter() - t1)
        if fin.state == "solving":
            t0 = time.perf_counter()
            req = m.new_message(m.SOLVE_REQUEST, sfp, ciphertexts=m.encode_words(fin.system, p.d * p.d + p.d,
                                                                                  self.solve_pk),
                                system_digest=fin.system_digest)
            resp = await self._csp_post(req, m.SOLVE_ACK, sfp)
            if resp.get("system_digest") != fin.system_digest:
                raise ProtocolError("the CSP acknowledged another system than the one sent", status=502,
                                    code="csp_refused")
            await _run(self.store.mark_finalized)
            fin.state = "finalized"
            fin.system = b""
            log.info("the CSP solved the masked system (%.2f s): finalized", time.perf_counter() - t0)

    async def _mask(self, msg: dict[str, Any], request: web.Request) -> dict[str, Any]:
        m.check_token(request.headers.get("Authorization"), self.info.buyer_token_sha256)
        if self.fin.state != "finalized":
            raise ProtocolError(f"not finalized yet (state {self.fin.state}): send 'finalize' first", status=409,
                                code="not_finalized")
        await self._remember(msg)
        log.info("R, r handed to the buyer")
        return m.new_message(m.MASK, self.solve_pk.fingerprint, R=[m.ints_to_hex(row) for row in self.fin.R],
                             r=m.ints_to_hex(self.fin.r), records=self.fin.records,
                             system_digest=self.fin.system_digest)


def serve_platform(*, csp_url: str, db: Path, host: str = "127.0.0.1", port: int = 0, workers: int | None = None,
                   wait_csp: float = 10.0, backend: str = "auto", cafile: Path | None = None,
                   tls_cert: Path | None = None, tls_key: Path | None = None) -> None:
    """Run the platform until SIGINT/SIGTERM."""
    configure_logging()
    ctx = _server_ssl(tls_cert, tls_key)
    _parse_fault(os.environ.get(FAULT_ENV))
    sock = _bind(host, port)
    stores: list[PlatformStore] = []

    async def main() -> None:
        async with _session(cafile) as session:
            info = await fetch_session(_Peer(session, csp_url, "CSP"), wait_csp)
        store = PlatformStore(db)  # opened once the CSP answered: a failed start leaves no file
        stores.append(store)
        store.bind_session(info.upload_pk.fingerprint.hex(), info.solve_pk.fingerprint.hex(),
                           m.params_to_dict(info.params))
        service = PlatformService(info, csp_url, store, workers=workers or os.cpu_count() or 1, backend=backend,
                                  cafile=cafile)
        await _serve(service.app(), sock, "platform", ctx)

    try:
        asyncio.run(main())
    finally:
        for store in stores:
            store.close()
        sock.close()


# ============================================================================================
# provider


def load_data_spec(spec: str, d: int | None = None, x_bound: float | None = None,
                   y_bound: float | None = None) -> RidgeData:
    """``generate:n=N[,seed=S][,d=D]`` (seed 003's generator, d from the session unless
    given), ``csv:PATH`` (bounds as declared, a value beyond them refused) or ``diabetes``."""
    kind, _, rest = spec.partition(":")
    if kind == "generate":
        opts: dict[str, int] = {}
        for part in filter(None, (p.strip() for p in rest.split(","))):
            key, eq, value = part.partition("=")
            if not eq or key not in ("n", "seed", "d"):
                raise ConfigError(f"--data {spec!r}: expected generate:n=N[,seed=S][,d=D], got {part!r}")
            try:
                opts[key] = int(value)
            except ValueError:
                raise ConfigError(f"--data {spec!r}: {key} must be an integer, got {value!r}") from None
        if "n" not in opts:
            raise ConfigError(f"--data {spec!r}: generate needs n=RECORDS")
        dd = opts.get("d", d)
        if dd is None:
            raise ConfigError(f"--data {spec!r}: generate needs d=DIMENSIONS here")
        if d is not None and dd != d:
            raise ConfigError(f"--data {spec!r} asks for d = {dd}, the session has d = {d}")
        return generate(opts["n"], dd, opts.get("seed", 1))
    if kind == "csv" and rest:
        return load_csv(rest, x_bound=x_bound, y_bound=y_bound)
    if spec == "diabetes":
        return load_diabetes_scaled()
    raise ConfigError(f"unknown --data {spec!r}: use generate:n=N[,seed=S], csv:PATH or diabetes")


def parse_part(text: str) -> tuple[int, int]:
    """``i/K``: the i-th (1-based) of K contiguous parts of the data set."""
    i, slash, k = text.partition("/")
    if not slash or not i.isdigit() or not k.isdigit() or not 1 <= int(i) <= int(k):
        raise ConfigError(f"--part must be i/K with 1 <= i <= K, got {text!r}")
    return int(i), int(k)


@dataclass
class ProviderReport:
    provider_id: str
    records: int = 0
    uploads: int = 0
    already_accepted: int = 0
    retries: int = 0
    bytes: int = 0
    seconds: float = 0.0


ProgressHook = Callable[[int, int], None]  # (records just acknowledged, total records)


async def run_provider(platform_url: str, data: str | tuple[np.ndarray, np.ndarray], *, mode: str = "per-record",
                       batch: int = 1000, provider_id: str | None = None, part: tuple[int, int] = (1, 1),
                       retry_for: float = 60.0, progress: ProgressHook | None = None, cafile: Path | None = None,
                       backend: str = "auto", on_retry: Callable[[str], None] | None = None) -> ProviderReport:
    """Fetch the session from the platform, then encode, pack, encrypt and upload ``data``
    (a ``--data`` spec or arrays ``(X, y)``), part ``i`` of ``K``.

    Batches are encrypted one ahead of the upload in progress (a thread; the native
    encryption releases the GIL). Upload ids are ``<provider_id>:<batch index>``: a re-run with
    the same provider id and data resumes, its accepted batches answered "already accepted"."""
    if mode not in MODES:
        raise ConfigError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ConfigError(f"--batch must be a positive integer, got {batch!r}")
    provider_id = provider_id or f"provider-{secrets.token_hex(6)}"
    report = ProviderReport(provider_id)
    t0 = time.perf_counter()
    async with _session(cafile) as session:
        peer = _Peer(session, platform_url, "platform")
        info = await fetch_session(peer)
        p = info.params
        if isinstance(data, str):
            rd = load_data_spec(data, p.d, p.x_bound, p.y_bound)
            X, y = rd.X, rd.y
        else:
            X, y = np.asarray(data[0], dtype=np.float64), np.asarray(data[1], dtype=np.float64).ravel()
        if X.ndim != 2 or X.shape[1] != p.d:
            raise ConfigError(f"the data has {X.shape[1] if X.ndim == 2 else '?'} features, the session expects d = {p.d}")
        i, k = part
        X, y = np.array_split(X, k)[i - 1], np.array_split(y, k)[i - 1]
        prov = Provider(p, info.upload_pk, backend=backend)
        fp = info.upload_pk.fingerprint
        total = len(X)
        if mode == "per-record":
            bounds = [(s, min(s + batch, total)) for s in range(0, total, batch)]
        else:
            bounds = [(0, total)]

        def make(index: int) -> Upload:
            s, e = bounds[index]
            if mode == "per-provider":
                return prov.per_provider(X, y)
            return next(prov.per_record(X[s:e], y[s:e], chunk=e - s))

        async def send(index: int, up: Upload) -> None:
            upload_id = f"{provider_id}:{index}" if mode == "per-record" else f"{provider_id}:all"
            msg = m.new_message(m.UPLOAD, fp, upload_id=upload_id, provider_id=provider_id, vectors=up.vectors,
                                records=up.records, ciphertexts=m.encode_ciphertexts(up.ciphertexts, info.upload_pk))

            async def call() -> dict[str, Any]:
                nonlocal msg
                try:
                    return await peer.post(msg, m.UPLOAD_ACK, fp)
                finally:
                    msg = m.with_new_id(msg)  # a retry is a new message with the same upload id

            def retrying(reason: str) -> None:
                report.retries += 1
                if on_retry is not None:
                    on_retry(f"upload {upload_id}: {reason}; retrying")

            ack = await _retrying(call, retry_for, retrying)
            if ack.get("upload_id") != upload_id:
                raise ProtocolError(f"the platform acknowledged {ack.get('upload_id')!r}, not {upload_id!r}", 502)
            report.uploads += 1
            report.records += up.records
            report.bytes += len(up.ciphertexts) * m.value_bytes(info.upload_pk)
            if ack.get("status") == "already accepted":
                report.already_accepted += 1
            if progress is not None:
                progress(up.records, total)

        if progress is not None:
            progress(0, total)
        pending: asyncio.Task[Upload] | None = asyncio.ensure_future(_run(make, 0)) if bounds else None
        try:
            for index in range(len(bounds)):
                assert pending is not None
                up = await pending
                pending = asyncio.ensure_future(_run(make, index + 1)) if index + 1 < len(bounds) else None
                await send(index, up)
        finally:
            if pending is not None:
                pending.cancel()
    report.seconds = time.perf_counter() - t0
    return report


# ============================================================================================
# buyer


@dataclass
class BuyerResult:
    model: RidgeModel
    params: RidgeParams
    records: int
    system_digest: str
    upload_key: str
    solve_key: str
    timings: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"coef": [float(c) for c in self.model.coef], "fractions": [str(f) for f in self.model.fractions],
                "records": self.records, "params": m.params_to_dict(self.params), "system_digest": self.system_digest,
                "upload_key": self.upload_key, "solve_key": self.solve_key, "timings": self.timings}


async def run_buyer(platform_url: str, csp_url: str, token: str, *, cafile: Path | None = None,
                    timeout: float = 600.0) -> BuyerResult:
    """Finalize (if needed), then R, r from the platform, w' from the CSP, and the model."""
    t: dict[str, float] = {}
    async with _session(cafile, timeout) as session:
        csp = _Peer(session, csp_url, "CSP")
        platform = _Peer(session, platform_url, "platform")
        info = await fetch_session(csp)
        if m.token_hash(token) != info.buyer_token_sha256:
            raise ConfigError("the buyer token does not match the one the CSP was started with")
        relayed = await fetch_session(platform)
        if (relayed.upload_pk.fingerprint, relayed.solve_pk.fingerprint) != (info.upload_pk.fingerprint,
                                                                             info.solve_pk.fingerprint):
            raise ConfigError("the platform serves another CSP session than the CSP at --csp (key fingerprints differ)")
        ufp, sfp = info.upload_pk.fingerprint, info.solve_pk.fingerprint
        s = time.perf_counter()
        fin = await platform.post(m.new_message(m.FINALIZE, ufp), m.FINALIZED, ufp, token)
        t["finalize"] = time.perf_counter() - s
        s = time.perf_counter()
        mask = await platform.post(m.new_message(m.MASK_REQUEST, sfp), m.MASK, sfp, token)
        d, n = info.params.d, info.solve_pk.n
        R_raw = mask.get("R")
        if not isinstance(R_raw, list) or len(R_raw) != d:
            raise ProtocolError("the platform sent a malformed R", 502)
        R = [m.hex_to_ints(row, d, n, "R") for row in R_raw]
        r = m.hex_to_ints(mask.get("r"), d, n, "r")
        digest = mask.get("system_digest")
        if not isinstance(digest, str) or digest != fin.get("system_digest"):
            raise ProtocolError("the platform's R, r belong to another system than the one it finalized", 502)
        coef = await csp.post(m.new_message(m.COEFFICIENTS_REQUEST, sfp, system_digest=digest), m.COEFFICIENTS,
                              sfp, token)
        w_prime = m.hex_to_ints(coef.get("w_prime"), d, n, "w_prime")
        t["fetch"] = time.perf_counter() - s
    s = time.perf_counter()
    model = recover_model(w_prime, MaskSecret(R, r), info.params, info.solve_pk)
    t["recover"] = time.perf_counter() - s
    records = mask.get("records")
    return BuyerResult(model, info.params, records if isinstance(records, int) else -1, digest,
                       ufp.hex(), sfp.hex(), t)


# ============================================================================================
# demo: CSP and platform as subprocesses, providers and buyer here


def _death_signal_hook() -> Callable[[], None] | None:
    """Linux: a ``preexec_fn`` that makes the child get SIGTERM when the demo dies, even by
    SIGKILL (no orphaned servers). libc is resolved here, in the parent: between fork and
    exec the child must not import or allocate (another thread may hold a lock)."""
    if sys.platform != "linux":
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig, sigterm = 1, int(signal.SIGTERM)

    def hook() -> None:  # pragma: no cover - runs in the child
        prctl(pr_set_pdeathsig, sigterm)
    return hook


class ServerProcess:
    """A ``cryptoffload ridge csp|platform`` subprocess whose output is drained by a thread
    (so its pipe never fills) and kept (the last lines) for error messages."""

    def __init__(self, name: str, args: Sequence[str], env: Mapping[str, str]) -> None:
        self.name = name
        self.lines: deque[str] = deque(maxlen=200)
        self._queue: queue.Queue[str | None] = queue.Queue()
        self.proc = subprocess.Popen([sys.executable, "-m", "cryptoffload.cli", "ridge", *args], env=dict(env),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, preexec_fn=_death_signal_hook())
        self._thread = threading.Thread(target=self._drain, name=f"{name}-output", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            line = line.rstrip("\n")
            self.lines.append(line)
            self._queue.put(line)
        self._queue.put(None)

    def last_line(self) -> str:
        for line in reversed(self.lines):
            if line.strip():
                return line.strip()
        return "no output"

    def wait_url(self, timeout: float) -> str:
        """The URL from the server's "listening on" line."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ConfigError(f"the {self.name} did not start within {timeout:g} s (last output: {self.last_line()})")
            try:
                line = self._queue.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                self.proc.wait()
                text = self.last_line()
                raise ConfigError(f"the {self.name} exited with status {self.proc.returncode} at start: "
                                  f"{text[7:] if text.startswith('error: ') else text}")
            if READY_MARK in line:
                return line.split(READY_MARK, 1)[1].strip()

    def stop(self, timeout: float = 5.0) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._thread.join(timeout=2)


async def wait_ready(url: str, role: str, timeout: float = 30.0) -> None:
    """Until ``GET /status`` answers."""
    async with _session() as session:
        peer = _Peer(session, url, role)
        await _retrying(lambda: peer.get("/status", m.STATUS), timeout)


@dataclass
class DemoResult:
    coef: np.ndarray
    sklearn: np.ndarray
    bound: float
    records: int
    params: RidgeParams
    timings: dict[str, float]
    providers: list[ProviderReport]
    buyer: BuyerResult
    upload_bits: int

    def to_dict(self) -> dict[str, Any]:
        return {"coef": [float(v) for v in self.coef], "sklearn": [float(v) for v in self.sklearn],
                "max_abs_diff": float(np.max(np.abs(self.coef - self.sklearn))) if len(self.coef) else 0.0,
                "l2_diff": float(np.linalg.norm(self.coef - self.sklearn)), "error_bound": self.bound,
                "records": self.records, "params": m.params_to_dict(self.params), "timings": self.timings,
                "fractions": [str(f) for f in self.buyer.model.fractions],
                "uploads": sum(p.uploads for p in self.providers), "upload_bits": self.upload_bits}


def demo_data(records: int, d: int, data: str | None, seed: int) -> RidgeData:
    if data is None:
        return generate(records, d, seed)
    if data.startswith("csv:"):
        return load_data_spec(data)
    return load_data_spec(data, d if data.startswith("generate") and "d=" not in data else None)


def run_demo(*, records: int = 1000, d: int = 20, providers: int = 1, mode: str = "per-record",
             data: str | None = None, seed: int = 1, lam: float = 1.0, frac_bits: int = 16, stat_bits: int = 40,
             upload_bits: int = 1024, batch: int = 1000, workdir: Path | None = None,
             make_progress: Callable[[int], ProgressHook] | None = None,
             say: Callable[[str], None] = lambda s: None) -> DemoResult:
    """The whole protocol on this machine: CSP and platform as subprocesses on free loopback
    ports, ``providers`` providers (each a contiguous part of the data) and the buyer here.
    Both servers are stopped on return, on error and on Ctrl-C."""
    if mode not in MODES:
        raise ConfigError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    if isinstance(providers, bool) or not isinstance(providers, int) or providers < 1:
        raise ConfigError(f"--providers must be a positive integer, got {providers!r}")
    rd = demo_data(records, d, data, seed)
    if providers > rd.n:
        raise ConfigError(f"{providers} providers for {rd.n} records: each provider needs at least one record")
    params = RidgeParams(d=rd.d, max_records=rd.n, x_bound=rd.x_bound, y_bound=rd.y_bound, lam=lam,
                         frac_bits=frac_bits, stat_bits=stat_bits)
    from sklearn.linear_model import Ridge

    sk = Ridge(alpha=lam, fit_intercept=False).fit(rd.X, rd.y).coef_
    bound = error_bound(rd.X, rd.y, params)
    token = secrets.token_urlsafe(32)
    env = {**os.environ, TOKEN_ENV: token, "PYTHONUNBUFFERED": "1"}
    env.pop(FAULT_ENV, None)
    timings: dict[str, float] = {}
    servers: list[ServerProcess] = []
    t_all = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ridge-demo-") as tmp:
        work = workdir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        db = work / "platform.db"
        if db.exists():
            raise ConfigError(f"{db} exists: the demo starts a fresh session (remove it or pick another --workdir)")
        previous = signal.getsignal(signal.SIGTERM)

        def on_term(signum: int, frame: object) -> None:
            raise KeyboardInterrupt  # runs the finally below: the servers are stopped

        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, on_term)
        try:
            s = time.perf_counter()
            csp_args = ["csp", "--port", "0", "--host", "127.0.0.1", "--d", str(params.d), "--max-records",
                        str(params.max_records), "--x-bound", repr(params.x_bound), "--y-bound", repr(params.y_bound),
                        "--lam", repr(params.lam), "--frac-bits", str(params.frac_bits), "--stat-bits",
                        str(params.stat_bits), "--upload-bits", str(upload_bits)]
            if upload_bits < MIN_SECURE_KEY_BITS:
                csp_args.append("--insecure-study-size")
            servers.append(ServerProcess("CSP", csp_args, env))
            csp_url = servers[0].wait_url(180)
            timings["csp_start"] = time.perf_counter() - s
            s = time.perf_counter()
            servers.append(ServerProcess("platform", ["platform", "--port", "0", "--host", "127.0.0.1", "--csp",
                                                      csp_url, "--db", str(db)], env))
            platform_url = servers[1].wait_url(60)
            asyncio.run(wait_ready(platform_url, "platform"))
            timings["platform_start"] = time.perf_counter() - s
            say(f"CSP at {csp_url}, platform at {platform_url}")

            async def clients() -> tuple[list[ProviderReport], BuyerResult]:
                s = time.perf_counter()
                hooks = [make_progress(k) if make_progress else None for k in range(providers)]
                reports = await asyncio.gather(*(
                    run_provider(platform_url, (rd.X, rd.y), mode=mode, batch=batch, provider_id=f"provider-{k + 1}",
                                 part=(k + 1, providers), progress=hooks[k])
                    for k in range(providers)))
                timings["upload"] = time.perf_counter() - s
                buyer = await run_buyer(platform_url, csp_url, token)
                timings.update({f"buyer_{k}": v for k, v in buyer.timings.items()})
                return list(reports), buyer

            reports, buyer = asyncio.run(clients())
        finally:
            for server in reversed(servers):
                server.stop()
            if threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGTERM, previous)
    timings["total"] = time.perf_counter() - t_all
    return DemoResult(buyer.model.coef, np.asarray(sk), bound, rd.n, params, timings, reports, buyer, upload_bits)
