"""Encrypted MNIST inference: the server (aiohttp), loopback and TLS by default.

Who holds what: the server holds the model (plaintext weights) and, per client session, only
that client's *public context*: parameters, public key, relinearisation and Galois keys. It
evaluates (:meth:`PerChannelPlan.run`) and cannot decrypt; a secret context sent to it is
refused unread. The client side is :mod:`.client`.

Protocol (bodies are ``application/octet-stream`` serialised objects of
:mod:`cryptoffload.crypto.ckks`; answers JSON unless noted)::

    GET    /v1/info                    {"type": "info", "backend", "params", "model", "rotation_steps", ...}
    POST   /v1/sessions                public context -> {"type": "session", "session": id, "prepare_s"}
    POST   /v1/sessions/<id>/infer     ciphertext -> ciphertext (octet-stream; X-Evaluate-Seconds header)
    DELETE /v1/sessions/<id>           {"type": "closed"}

Clients: every request but ``/v1/info`` carries a client's bearer token
(:mod:`cryptoffload.apps._credentials`; ``serve --clients alice,bob`` issues ``alice.token``,
``bob.token``). A session belongs to the client that opened it: another client's requests
for it are answered as for a session that does not exist. Each client may hold
``max_sessions_per_client`` sessions (opening one more drops that client's least recently
used); when the server holds ``max_sessions`` in all, a new session is refused (503) rather
than another client's dropped (each holds ~0.3 GB of keys and ~0.09 GB of encoded weights).

Bodies (issue 12, attack 4): every route's limit follows from the parameters (no body for
``GET``/``DELETE``; a fresh ciphertext for ``infer``; the keys the plan needs for a context);
the token, and for ``infer`` the session, are checked before a byte of the body is read, and
a client has one request with a body in progress at a time. A refusal is a 4xx JSON error
``{"type": "error", "error": code, "message": text}`` and the server keeps serving:
``bad_context``, ``secret_context``, ``foreign_ciphertext`` (a ciphertext of another key set
or other parameters: the serialised header carries both and is checked before SEAL parses
anything), ``bad_ciphertext`` (garbled, truncated, wrong level), ``unknown_session`` (404),
``request_entity_too_large`` (413), ``unauthorized``/``forbidden`` (401/403),
``too_many_requests`` (429), ``server_full`` (503), ``decompression_limit`` and
``too_many_keys`` (413), ``memory_budget`` (503). Evaluations run one at a time on one
worker thread, so the event loop keeps answering while a ciphertext is evaluated.

Memory (issue 22): a body's limit counts compressed bytes, and SEAL inflates what it loads, so
a context's header is checked before anything is loaded (its parameters, a relinearisation key,
Galois keys for the plan's steps and none beyond them: ``too_many_keys``), and every SEAL
object in it, or in a ciphertext, is measured before SEAL inflates it, by its zstd frame's
declared size and by inflating it into a throw-away buffer, against SEAL's size of the keys it
may hold (:mod:`cryptoffload.crypto.ckks.inflate`, :func:`cryptoffload.crypto.ckks.seal.inflate_limits`;
``decompression_limit`` beyond). Each session request reserves ``session_memory`` (default:
its bound from the parameters and the plan, :mod:`.budget`) against ``memory_budget``
(default: ``max_sessions + 1`` sessions) before its body is read (``memory_budget`` refusal
when it cannot), and is charged what it holds once open; a refused request leaves nothing
alive and the freed memory is handed back to the system (``malloc_trim`` on glibc). SEAL keeps
the memory of keys it loaded in its own pool, reused by the next keys but never returned, which
is why every check that can runs before SEAL loads anything.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import secrets
import socket
import ssl
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence, TypeVar

from aiohttp import web

from cryptoffload.apps import _http
from cryptoffload.apps._credentials import Credentials, Unauthorized, issue_tokens
from cryptoffload.apps._private_tmp import secrets_folder
from cryptoffload.apps.he_cnn.budget import MemoryBudget, release_memory, session_bounds
from cryptoffload.apps.he_cnn.model import CnnModel, load_model
from cryptoffload.apps.he_cnn.packing import PerChannelPlan, PreparedWeights
from cryptoffload.apps.he_cnn.train import DEFAULT_WEIGHTS
from cryptoffload.checks import JsonDict, check_int
from cryptoffload.crypto.ckks import (
    DEFAULT_PARAMS,
    KIND_SECRET,
    CkksBackend,
    CkksError,
    CkksParams,
    backend_from_context,
    make_backend,
    peek_context,
)
from cryptoffload.crypto.ckks.framing import galois_steps, peek_context_header
from cryptoffload.crypto.ckks.inflate import InflateLimit
from cryptoffload.crypto.ckks.rotations import rotation_plan
from cryptoffload.crypto.ckks.timing import timed
from cryptoffload.errors import ConfigError, CryptoffloadError

_R = TypeVar("_R")

log = logging.getLogger("cryptoffload.he_cnn")

DEFAULT_PORT = 8765
READY_MARK = " listening on "
API = "/v1"
#: a serialised object's header and framing, beyond its polynomials: a generous bound
FRAME_SLACK = 1 << 20


class RequestError(CryptoffloadError):
    """A request the server refuses (becomes a 4xx JSON error)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code = status, code


def _galois_step(step: object, slots: int) -> int:
    """A Galois key's step as the context's header lists it: an integer (not ``true``, ``1.5``
    or a string, which ``int()`` would read) of magnitude below the slot count."""
    if isinstance(step, bool) or not isinstance(step, int) or not abs(step) < slots:
        raise ValueError(f"a Galois step {step!r} is not an integer below the {slots} slots")
    return step


def _error(status: int, code: str, text: str) -> web.Response:
    return web.json_response({"type": "error", "error": code, "message": _http.one_line(text)}, status=status)


def _classify(exc: Exception) -> tuple[int, str, str] | None:
    """This server's own refusals (see :func:`cryptoffload.apps._http.error_middleware`)."""
    if isinstance(exc, (RequestError, Unauthorized)):
        return exc.status, exc.code, str(exc)
    return None


_errors = _http.error_middleware(_classify, _error, log)


@dataclass
class _Session:
    owner: str
    backend: CkksBackend
    weights: PreparedWeights
    created: float
    charge: int = 0  # bytes charged to the memory budget
    inferences: int = 0


class HeCnnServer:
    """The server's state: model, plan parameters, clients, sessions (public contexts + encoded
    weights)."""

    def __init__(self, model: CnnModel | str | Path = DEFAULT_WEIGHTS, *, clients: Credentials, backend: str = "seal",
                 params: CkksParams = DEFAULT_PARAMS, max_sessions: int = 4, max_sessions_per_client: int = 2,
                 session_memory: int | None = None, memory_budget: int | None = None) -> None:
        self.model = model if isinstance(model, CnnModel) else load_model(model)
        self.backend_name = str(backend).lower()
        self.params = params
        self.plan = PerChannelPlan(self.model, params)
        make_backend(self.backend_name, params)          # fail now if unavailable or insecure
        self.max_sessions = check_int("max_sessions", max_sessions)
        self.max_per_client = min(check_int("max_sessions_per_client", max_sessions_per_client), self.max_sessions)
        if not clients.names():
            raise ConfigError("the server needs at least one client credential (--clients)")
        self.clients = clients
        self.sessions: OrderedDict[str, _Session] = OrderedDict()
        self._in_flight = _http.InFlight(1)  # one request with a body per client at a time
        self._opening = 0
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="he-cnn-eval")
        #: a fresh ciphertext (two polynomials over the primes of the plan's top level)
        self.max_ciphertext = params.ciphertext_bytes(self.plan.top) + FRAME_SLACK
        #: a public context: the public key, the relinearisation key and one Galois key per step
        self.bounds = session_bounds(params, self.plan, FRAME_SLACK)
        self.max_context = self.bounds.context
        per_session = self.bounds.total if session_memory is None else check_int("session_memory", session_memory)
        self.budget = MemoryBudget(per_session * (self.max_sessions + 1) if memory_budget is None
                                   else check_int("memory_budget", memory_budget), per_session, self.bounds.total)

    def close(self) -> None:
        """Stop the evaluation thread (an evaluation in progress is abandoned)."""
        self.pool.shutdown(wait=False, cancel_futures=True)

    async def _run(self, fn: Callable[..., _R], *args: object) -> _R:
        return await asyncio.get_running_loop().run_in_executor(self.pool, functools.partial(fn, *args))

    def info(self) -> JsonDict:
        return {"type": "info", "backend": self.backend_name, "params": self.params.to_dict(),
                "model": self.model.config.as_dict(), "rotation_steps": self.plan.rotation_steps(),
                "relin": True, "max_sessions_per_client": self.max_per_client,
                "max_context_bytes": self.max_context, "session_memory": self.budget.per_session,
                "memory_budget": self.budget.total,
                "rotations_per_inference": self.plan.rotations_per_inference()["total"]}

    # -- sessions ---------------------------------------------------------------------------
    def _load_context(self, data: bytes) -> CkksBackend:
        try:
            be_name, kind = peek_context(data)
        except CkksError as exc:
            raise RequestError(400, "bad_context", str(exc)) from None
        if kind == KIND_SECRET:
            raise RequestError(400, "secret_context", "this is a secret context: send the public context only "
                               "(the server must never hold the secret key)")
        if be_name != self.backend_name:
            raise RequestError(400, "bad_context", f"the context comes from the {be_name!r} backend; this server "
                               f"runs {self.backend_name!r}")
        self._check_header(data)
        try:
            be = backend_from_context(data)
        except InflateLimit as exc:
            raise RequestError(413, "decompression_limit", str(exc)) from None
        except CryptoffloadError as exc:
            raise RequestError(400, "bad_context", str(exc)) from None
        if be.can_decrypt:
            raise RequestError(400, "secret_context", "the context holds a secret key; send the public context only")
        if be.params != self.params:
            raise RequestError(400, "bad_context", f"the context's parameters {be.params.to_dict()} are not the "
                               f"server's {self.params.to_dict()} (GET {API}/info)")
        if not getattr(be, "has_relin_keys", True):
            raise RequestError(400, "bad_context", "the context has no relinearisation key")
        missing = []
        for step in self.plan.rotation_steps():
            try:
                be.rotation_plan(step)
            except CkksError:
                missing.append(step)
        if missing:
            raise RequestError(400, "bad_context", f"the context lacks Galois keys for steps {missing}"
                               f" (needed: {self.plan.rotation_steps()})")
        return be

    def _check_header(self, data: bytes) -> None:
        """What a context's header says, checked before anything is loaded (a refusal after
        SEAL loaded the keys leaves their memory in SEAL's pool): its parameters, a
        relinearisation key, and Galois keys for the plan's steps, none beyond them (each
        backend then bounds every key's inflated size by the keys listed)."""
        steps = self.plan.rotation_steps()
        try:
            header = peek_context_header(data)
            params = CkksParams.from_dict(header.get("params"))
            listed = [(_galois_step(step, self.params.slots), name)
                      for step, name in galois_steps(header, "serialised context")]
            named = header.get("sections", [])
            if not isinstance(named, list) or not all(isinstance(item, list) and item for item in named):
                raise ValueError("sections")
            sections = {str(item[0]) for item in named}
        except CryptoffloadError as exc:          # CkksError, or ConfigError from the parameters
            raise RequestError(400, "bad_context", str(exc)) from None
        except (TypeError, ValueError):
            raise RequestError(400, "bad_context", "malformed serialised context: its key lists") from None
        if params != self.params:
            raise RequestError(400, "bad_context", f"the context's parameters {params.to_dict()} are not the "
                               f"server's {self.params.to_dict()} (GET {API}/info)")
        extra = sorted({step for step, _ in listed} - set(steps))
        if extra or len(listed) != len({step for step, _ in listed}):
            raise RequestError(413, "too_many_keys", f"the context lists {len(listed)} Galois keys, steps "
                               f"{extra[:8] or 'repeated'} beyond the {len(steps)} this server's plan uses; send "
                               f"keys for GET {API}/info's rotation_steps only")
        galois = {step % params.slots: name for step, name in listed}
        missing = []
        for step in steps:
            try:
                rotation_plan(step, galois, params.slots)
            except CkksError:
                missing.append(step)
        if missing:
            raise RequestError(400, "bad_context", f"the context lacks Galois keys for steps {missing}"
                               f" (needed: {steps})")
        if "relin" not in sections and not header.get("relin"):
            raise RequestError(400, "bad_context", "the context has no relinearisation key")

    def _prepare_or_refusal(self, data: bytes) -> tuple[tuple[CkksBackend, PreparedWeights, float] | None,
                                                         RequestError | None]:
        """:meth:`_prepare`, or its refusal with nothing it made left alive (a fresh error, no
        traceback holding the half-loaded keys) and the freed memory given back."""
        try:
            return self._prepare(data), None
        except RequestError as exc:
            refusal = RequestError(exc.status, exc.code, str(exc))
        release_memory()
        return None, refusal

    def _prepare(self, data: bytes) -> tuple[CkksBackend, PreparedWeights, float]:
        be = self._load_context(data)
        with timed(be) as t:
            weights = self.plan.prepare(be)
        return be, weights, t.seconds

    def _admit(self, client: str) -> None:
        """Refuse (503) a new session when the others' sessions fill the server; a client at its
        own quota is admitted (its least recently used session makes room)."""
        own = sum(1 for s in self.sessions.values() if s.owner == client)
        others = len(self.sessions) - own
        if own < self.max_per_client and others + own + self._opening >= self.max_sessions:
            raise RequestError(503, "server_full", f"the server holds its {self.max_sessions} sessions; try later "
                               "or close one of yours")

    def _reserve(self) -> None:
        """Reserve one session's memory before its body is read, or refuse (503)."""
        if not self.budget.reserve():
            raise RequestError(503, "memory_budget", f"the server's memory budget ({self.budget.total:,} bytes, "
                               f"--memory-budget) holds {self.budget.used:,} bytes of sessions and one more needs "
                               f"{self.budget.per_session:,}; try later or close one of yours")

    def _add(self, client: str, be: CkksBackend, weights: PreparedWeights, size: int, prepare_s: float,
             charge: int) -> str:
        """Called on the event loop, so sessions change in one thread only."""
        self._admit(client)
        mine = [sid for sid, s in self.sessions.items() if s.owner == client]
        while len(mine) >= self.max_per_client:
            old = mine.pop(0)
            self.budget.free(self.sessions.pop(old).charge)
            log.info("session %s… of %s dropped (more than %d sessions for that client)", old[:6], client,
                     self.max_per_client)
        sid = secrets.token_urlsafe(16)
        self.sessions[sid] = _Session(client, be, weights, time.time(), charge)
        log.info("session %s… opened for %s (%d bytes of public context, weights encoded in %.2f s)", sid[:6],
                 client, size, prepare_s)
        return sid

    def _session(self, sid: str, client: str) -> _Session:
        s = self.sessions.get(sid)
        if s is None or s.owner != client:  # another client's session is not revealed
            raise RequestError(404, "unknown_session", f"no session {sid[:6]}… of yours (expired, or never opened: "
                               f"POST {API}/sessions first)")
        self.sessions.move_to_end(sid)
        return s

    def _infer(self, s: _Session, sid: str, data: bytes) -> tuple[bytes, float]:
        be = s.backend
        try:
            ct = be.deserialize_ciphertext(data)
        except InflateLimit as exc:
            raise RequestError(413, "decompression_limit", str(exc)) from None
        except CkksError as exc:
            text = str(exc)
            code = "foreign_ciphertext" if ("another key set" in text or "other CKKS parameters" in text
                                            or "backend" in text) else "bad_ciphertext"
            raise RequestError(400, code, text) from None
        size = be.size(ct)
        if be.level(ct) != self.plan.top or size != 2:
            raise RequestError(400, "bad_ciphertext", f"the image ciphertext must be fresh (level {self.plan.top},"
                               f" size 2), got level {be.level(ct)}, size {size}")
        try:
            with timed(be) as t:     # the kernels' time on a GPU, not their launch's
                out = self.plan.run(be, ct, s.weights)
        except CryptoffloadError as exc:
            raise RequestError(400, "bad_ciphertext", str(exc)) from None
        seconds = t.seconds
        s.inferences += 1
        log.info("session %s…: inference %d in %.0f ms", sid[:6], s.inferences, seconds * 1e3)
        return be.serialize_ciphertext(out), seconds

    # -- HTTP ------------------------------------------------------------------------------
    async def _open(self, client: str, request: web.Request) -> tuple[str, float]:
        """Admit (sessions, memory budget) before the ~100 MB body is read; load and check the
        context on the worker; charge the session what it holds, or nothing if refused."""
        self._admit(client)
        self._reserve()
        charge = 0
        try:
            self._opening += 1
            try:
                data = await _http.read_body(request, self.max_context)
                size = len(data)
                opened, refusal = await self._run(self._prepare_or_refusal, data)
                del data
            finally:
                self._opening -= 1
            if refusal is not None:
                raise refusal
            assert opened is not None
            be, weights, prepare_s = opened
            cost = self.bounds.keys + size + weights.plaintext_bytes
            sid = self._add(client, be, weights, size, prepare_s, cost)
            charge = cost
        finally:
            self.budget.settle(charge)
        return sid, prepare_s

    def app(self) -> web.Application:
        app = _http.new_app(_errors)

        async def info(_: web.Request) -> web.Response:
            return web.json_response(self.info())

        async def open_session(request: web.Request) -> web.Response:
            client = self.clients.identify(request.headers.get("Authorization"))
            with self._in_flight(client):
                sid, prepare_s = await self._open(client, request)
            return web.json_response({"type": "session", "session": sid, "prepare_s": prepare_s})

        async def infer(request: web.Request) -> web.Response:
            client = self.clients.identify(request.headers.get("Authorization"))
            sid = request.match_info["sid"]
            s = self._session(sid, client)        # before the body is read
            with self._in_flight(client):
                data = await _http.read_body(request, self.max_ciphertext)
                out, seconds = await self._run(self._infer, s, sid, data)
            return web.Response(body=out, content_type="application/octet-stream",
                                headers={"X-Evaluate-Seconds": f"{seconds:.6f}"})

        async def close(request: web.Request) -> web.Response:
            client = self.clients.identify(request.headers.get("Authorization"))
            sid = request.match_info["sid"]
            self.budget.free(self._session(sid, client).charge)
            self.sessions.pop(sid, None)
            await self._run(release_memory)   # after an evaluation of it in progress
            return web.json_response({"type": "closed"})

        _http.add_route(app, "GET", f"{API}/info", info)
        _http.add_route(app, "POST", f"{API}/sessions", open_session, max_body=self.max_context)
        _http.add_route(app, "POST", f"{API}/sessions/{{sid}}/infer", infer, max_body=self.max_ciphertext)
        _http.add_route(app, "DELETE", f"{API}/sessions/{{sid}}", close)
        return app


def client_credentials(token_dir: Path, clients: Sequence[str]) -> Credentials:
    """One token per client in ``token_dir`` (``<name>.token``, 0600; existing ones reused)."""
    if not clients:
        raise ConfigError("name the clients that may open sessions: --clients NAME[,NAME...]")
    return Credentials(issue_tokens(token_dir, clients, "client token"))


def serve(model: CnnModel | str | Path = DEFAULT_WEIGHTS, host: str = "127.0.0.1", port: int = DEFAULT_PORT, *,
          clients: Sequence[str] = ("client",), token_dir: Path | None = None, backend: str = "seal",
          params: CkksParams = DEFAULT_PARAMS, max_sessions: int = 4, max_sessions_per_client: int = 2,
          session_memory: int | None = None, memory_budget: int | None = None,
          tls_cert: Path | None = None, tls_key: Path | None = None, insecure_http: bool = False,
          on_ready: Callable[[str], None] | None = None) -> None:
    """Serve until SIGINT/SIGTERM. Prints ``he-cnn server listening on <url>`` when ready.
    Client tokens (and a generated TLS certificate, unless ``tls_cert`` or ``insecure_http``)
    go into ``token_dir``, or a new private folder whose path is printed and which is removed
    at exit."""
    ctx = _http.tls_options(tls_cert, tls_key, insecure_http)
    with secrets_folder(token_dir, "client token", "he-cnn-") as folder:
        credentials = client_credentials(folder, clients)
        sock = _http.bind(host, port)
        try:
            server = HeCnnServer(model, clients=credentials, backend=backend, params=params,
                                 max_sessions=max_sessions, max_sessions_per_client=max_sessions_per_client,
                                 session_memory=session_memory, memory_budget=memory_budget)
            ctx = _http.tls_context(ctx, folder, host, insecure_http, "he-cnn server")
            print(f"he-cnn server: client tokens in {folder} (0600): "
                  + ", ".join(f"{c}.token" for c in credentials.names()), flush=True)
            _serve(server, sock, ctx, on_ready)
        finally:
            sock.close()


def _serve(server: HeCnnServer, sock: socket.socket, ctx: ssl.SSLContext | None,
           on_ready: Callable[[str], None] | None) -> None:
    def ready(url: str) -> None:
        print(f"he-cnn server{READY_MARK}{url}", flush=True)
        if on_ready is not None:
            on_ready(url)

    async def main() -> None:
        try:
            await _http.serve_until_signalled(server.app(), sock, ssl_context=ctx, on_ready=ready)
        finally:
            server.close()

    asyncio.run(main())


class ServerThread(_http.ServerThread):
    """The server in a background thread (tests, notebooks): ``with ServerThread(model, clients=...) as url:``."""

    def __init__(self, model: CnnModel | str | Path = DEFAULT_WEIGHTS, host: str = "127.0.0.1", port: int = 0,
                 **kw: Any) -> None:
        self.server = HeCnnServer(model, **kw)
        super().__init__(self.server.app, host, port, on_stop=self.server.close)
