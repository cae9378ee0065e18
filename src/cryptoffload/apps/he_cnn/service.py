"""Encrypted MNIST inference as a client and a server over HTTP (aiohttp), loopback by default.

Functions the CLI calls (``cryptoffload he-cnn serve`` / ``cryptoffload he-cnn client``)::

    serve(model=DEFAULT_WEIGHTS, host="127.0.0.1", port=8765, *, backend="seal",
          params=DEFAULT_PARAMS, max_sessions=4)                 # blocks until SIGINT/SIGTERM
    client_infer(url, image_index=0, *, mnist_dir=None, image=None, log=print) -> ClientResult
        # image_index: one held-out index or a list of them (one key set, one upload)

Who holds what
--------------
* The **server** holds the model (plaintext weights) and, per client session, only that
  client's *public context*: parameters, public key, relinearisation and Galois keys. It
  evaluates (:meth:`PerChannelPlan.run`) and cannot decrypt; a secret context sent to it is
  refused unread.
* The **client** asks ``GET /v1/info`` for the parameters, the architecture (not the weights)
  and the rotation steps the plan needs, makes a key set with exactly those Galois keys,
  uploads the public context once (``POST /v1/sessions``, ~111 MB at N = 16384 with 28 Galois
  keys, SEAL's compressed seeded form), then per image packs and encrypts it
  (``POST /v1/sessions/<id>/infer``, ~1 MB), receives the encrypted logits (~0.26 MB, level 0),
  decrypts and takes the arg-max. Plaintext images and logits never leave the client.

Protocol (bodies are ``application/octet-stream`` serialised objects of
:mod:`cryptoffload.crypto.ckks`; answers JSON unless noted)::

    GET    /v1/info                    {"type": "info", "backend", "params", "model", "rotation_steps", ...}
    POST   /v1/sessions                public context -> {"type": "session", "session": id, "prepare_s"}
    POST   /v1/sessions/<id>/infer     ciphertext -> ciphertext (octet-stream; X-Evaluate-Seconds header)
    DELETE /v1/sessions/<id>           {"type": "closed"}

A refusal is a 4xx JSON error ``{"type": "error", "error": code, "message": text}`` and the
server keeps serving: ``bad_context`` (not a public context of the server's backend and
parameters, or lacking a needed key), ``secret_context``, ``foreign_ciphertext`` (a
ciphertext of another key set or other parameters: the serialised header carries both and is
checked before SEAL parses anything), ``bad_ciphertext`` (garbled, truncated, wrong level),
``unknown_session`` (404), ``too_large`` (413). Sessions are kept in memory, at most
``max_sessions`` (the least recently used is dropped: each holds ~0.3 GB of keys and ~0.09 GB of
encoded weights). Evaluations run one at a time on one worker thread, so the event loop keeps
answering while a ciphertext is evaluated and latencies are single-thread ones.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import secrets
import signal
import time
from collections import OrderedDict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import aiohttp
import numpy as np
from aiohttp import web

from cryptoffload.apps import _http
from cryptoffload.apps.he_cnn.data import check_image, load_mnist
from cryptoffload.apps.he_cnn.model import CnnModel, ModelConfig, load_model
from cryptoffload.apps.he_cnn.packing import PerChannelPlan, PreparedWeights, pack_image
from cryptoffload.apps.he_cnn.train import DEFAULT_WEIGHTS
from cryptoffload.crypto.ckks import (
    DEFAULT_PARAMS,
    KIND_SECRET,
    CkksError,
    CkksParams,
    backend_from_context,
    make_backend,
    peek_context,
)
from cryptoffload.errors import ConfigError, CryptoffloadError

log = logging.getLogger("cryptoffload.he_cnn")

DEFAULT_PORT = 8765
READY_MARK = " listening on "
MAX_BODY_BYTES = 1 << 30          # a public context is ~111 MB at the default parameters
API = "/v1"


class RequestError(CryptoffloadError):
    """A request the server refuses (becomes a 4xx JSON error)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code = status, code


def _error(status: int, code: str, text: str) -> web.Response:
    return web.json_response({"type": "error", "error": code, "message": _http.one_line(text)}, status=status)


def _classify(exc: Exception) -> tuple[int, str, str] | None:
    """This server's own refusals (see :func:`cryptoffload.apps._http.error_middleware`)."""
    if isinstance(exc, RequestError):
        return exc.status, exc.code, str(exc)
    if isinstance(exc, web.HTTPRequestEntityTooLarge):
        return 413, "too_large", exc.text or "request body too large"
    return None


_errors = _http.error_middleware(_classify, _error, log)


# ============================================================================================
# server


@dataclass
class _Session:
    backend: Any
    weights: PreparedWeights
    created: float
    inferences: int = 0


class HeCnnServer:
    """The server's state: model, plan parameters, sessions (public contexts + encoded weights)."""

    def __init__(self, model: CnnModel | str | Path = DEFAULT_WEIGHTS, *, backend: str = "seal",
                 params: CkksParams = DEFAULT_PARAMS, max_sessions: int = 4) -> None:
        self.model = model if isinstance(model, CnnModel) else load_model(model)
        self.backend_name = str(backend).lower()
        self.params = params
        self.plan = PerChannelPlan(self.model, params)
        make_backend(self.backend_name, params)          # fail now if unavailable or insecure
        if max_sessions < 1:
            raise ConfigError(f"max_sessions must be at least 1, got {max_sessions}")
        self.max_sessions = max_sessions
        self.sessions: OrderedDict[str, _Session] = OrderedDict()
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="he-cnn-eval")

    def close(self) -> None:
        """Stop the evaluation thread (an evaluation in progress is abandoned)."""
        self.pool.shutdown(wait=False, cancel_futures=True)

    async def _run(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.pool, functools.partial(fn, *args))

    def info(self) -> dict[str, Any]:
        return {"type": "info", "backend": self.backend_name, "params": self.params.to_dict(),
                "model": self.model.config.as_dict(), "rotation_steps": self.plan.rotation_steps(),
                "relin": True, "max_sessions": self.max_sessions,
                "rotations_per_inference": self.plan.rotations_per_inference()["total"]}

    # -- sessions ---------------------------------------------------------------------------
    def _load_context(self, data: bytes) -> Any:
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
        try:
            be = backend_from_context(data)
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

    def open_session(self, data: bytes) -> tuple[str, float]:
        be = self._load_context(data)
        t = time.perf_counter()
        weights = self.plan.prepare(be)
        prepare_s = time.perf_counter() - t
        sid = secrets.token_urlsafe(16)
        self.sessions[sid] = _Session(be, weights, time.time())
        while len(self.sessions) > self.max_sessions:
            old, _ = self.sessions.popitem(last=False)
            log.info("session %s… dropped (more than %d sessions)", old[:6], self.max_sessions)
        log.info("session %s… opened (%d bytes of public context, weights encoded in %.2f s)", sid[:6], len(data),
                 prepare_s)
        return sid, prepare_s

    def _session(self, sid: str) -> _Session:
        s = self.sessions.get(sid)
        if s is None:
            raise RequestError(404, "unknown_session", f"no session {sid[:6]}… (expired, or never opened: POST "
                               f"{API}/sessions first)")
        self.sessions.move_to_end(sid)
        return s

    def infer(self, sid: str, data: bytes) -> tuple[bytes, float]:
        s = self._session(sid)
        be = s.backend
        try:
            ct = be.deserialize_ciphertext(data)
        except CkksError as exc:
            text = str(exc)
            code = "foreign_ciphertext" if ("another key set" in text or "other CKKS parameters" in text
                                            or "backend" in text) else "bad_ciphertext"
            raise RequestError(400, code, text) from None
        size = be.size(ct)
        if be.level(ct) != self.plan.top or size != 2:
            raise RequestError(400, "bad_ciphertext", f"the image ciphertext must be fresh (level {self.plan.top},"
                               f" size 2), got level {be.level(ct)}, size {size}")
        t = time.perf_counter()
        try:
            out = self.plan.run(be, ct, s.weights)
        except CryptoffloadError as exc:
            raise RequestError(400, "bad_ciphertext", str(exc)) from None
        seconds = time.perf_counter() - t
        s.inferences += 1
        log.info("session %s…: inference %d in %.0f ms", sid[:6], s.inferences, seconds * 1e3)
        return be.serialize_ciphertext(out), seconds

    # -- HTTP ------------------------------------------------------------------------------
    def app(self) -> web.Application:
        app = web.Application(middlewares=[_errors], client_max_size=MAX_BODY_BYTES)

        async def info(_: web.Request) -> web.Response:
            return web.json_response(self.info())

        async def open_session(request: web.Request) -> web.Response:
            data = await request.read()
            sid, prepare_s = await self._run(self.open_session, data)
            return web.json_response({"type": "session", "session": sid, "prepare_s": prepare_s})

        async def infer(request: web.Request) -> web.Response:
            data = await request.read()
            out, seconds = await self._run(self.infer, request.match_info["sid"], data)
            return web.Response(body=out, content_type="application/octet-stream",
                                headers={"X-Evaluate-Seconds": f"{seconds:.6f}"})

        async def close(request: web.Request) -> web.Response:
            sid = request.match_info["sid"]
            self._session(sid)
            self.sessions.pop(sid, None)
            return web.json_response({"type": "closed"})

        app.router.add_get(f"{API}/info", info)
        app.router.add_post(f"{API}/sessions", open_session)
        app.router.add_post(f"{API}/sessions/{{sid}}/infer", infer)
        app.router.add_delete(f"{API}/sessions/{{sid}}", close)
        return app


def serve(model: CnnModel | str | Path = DEFAULT_WEIGHTS, host: str = "127.0.0.1", port: int = DEFAULT_PORT, *,
          backend: str = "seal", params: CkksParams = DEFAULT_PARAMS, max_sessions: int = 4,
          on_ready: Callable[[str], None] | None = None) -> None:
    """Serve until SIGINT/SIGTERM. Prints ``he-cnn server listening on <url>`` when ready."""
    sock = _http.bind(host, port)
    server = HeCnnServer(model, backend=backend, params=params, max_sessions=max_sessions)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)

        def ready(url: str) -> None:
            print(f"he-cnn server{READY_MARK}{url}", flush=True)
            if on_ready is not None:
                on_ready(url)
        try:
            await _http.serve(server.app(), sock, stop, on_ready=ready)
        finally:
            server.close()

    asyncio.run(main())


class ServerThread(_http.ServerThread):
    """The server in a background thread (tests, notebooks): ``with ServerThread(model) as url:``."""

    def __init__(self, model: CnnModel | str | Path = DEFAULT_WEIGHTS, host: str = "127.0.0.1", port: int = 0,
                 **kw: Any) -> None:
        self.server = HeCnnServer(model, **kw)
        super().__init__(self.server.app, host, port, on_stop=self.server.close)


# ============================================================================================
# client


@dataclass
class ClientResult:
    url: str
    indices: list[int | None]
    labels: list[int | None]
    predictions: list[int]
    logits: list[list[float]]
    seconds: dict[str, float] = field(default_factory=dict)
    bytes: dict[str, int] = field(default_factory=dict)
    server_evaluate_s: list[float] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


async def _check(resp: aiohttp.ClientResponse, what: str) -> None:
    if resp.status < 400:
        return
    try:
        body = await resp.json(content_type=None)
        msg = f"{body.get('error')}: {body.get('message')}"
    except Exception:
        msg = (await resp.text())[:200]
    raise ConfigError(f"the server refused {what} (HTTP {resp.status}) {msg}")


class HeCnnClient:
    """The client's side: keys (secret key never leaves), packing, encryption, decryption."""

    def __init__(self, url: str, *, timeout: float = 600.0) -> None:
        self.url = url.rstrip("/")
        self.timeout = aiohttp.ClientTimeout(total=timeout)
        self.info: dict[str, Any] | None = None
        self.backend: Any = None
        self.session_id: str | None = None
        self.config: ModelConfig | None = None
        self.params: CkksParams | None = None
        self.stats: dict[str, float] = {}
        self.bytes: dict[str, int] = {"context": 0, "ciphertexts_sent": 0, "ciphertexts_received": 0}

    async def connect(self, http: aiohttp.ClientSession) -> str:
        """GET /info, make keys with the needed rotations, upload the public context."""
        try:
            async with http.get(f"{self.url}{API}/info") as resp:
                await _check(resp, "GET /info")
                info = await resp.json()
        except aiohttp.ClientConnectionError as exc:
            raise ConfigError(f"cannot reach the he-cnn server at {self.url}: {exc}") from None
        self.info = info
        self.params = CkksParams.from_dict(info["params"])
        self.config = ModelConfig(**info["model"])
        t = time.perf_counter()
        self.backend = make_backend(info["backend"], self.params)
        self.backend.keygen(rotations=[int(s) for s in info["rotation_steps"]], relin=True)
        self.stats["keygen_s"] = time.perf_counter() - t
        ctx = self.backend.public_context()
        self.bytes["context"] = len(ctx)
        t = time.perf_counter()
        async with http.post(f"{self.url}{API}/sessions", data=ctx,
                             headers={"Content-Type": "application/octet-stream"}) as resp:
            await _check(resp, "the public context")
            body = await resp.json()
        self.stats["open_session_s"] = time.perf_counter() - t
        self.stats["server_prepare_s"] = float(body.get("prepare_s", 0.0))
        self.session_id = body["session"]
        return self.session_id

    def encrypt_image(self, image: Any) -> bytes:
        assert self.backend is not None and self.config is not None
        vec = pack_image(check_image(image), self.config, self.backend.slots)
        return self.backend.serialize_ciphertext(self.backend.encrypt(vec))

    async def send(self, http: aiohttp.ClientSession, data: bytes) -> tuple[bytes, float]:
        async with http.post(f"{self.url}{API}/sessions/{self.session_id}/infer", data=data,
                             headers={"Content-Type": "application/octet-stream"}) as resp:
            await _check(resp, "the ciphertext")
            out = await resp.read()
            return out, float(resp.headers.get("X-Evaluate-Seconds", "nan"))

    def decrypt_logits(self, data: bytes) -> np.ndarray:
        assert self.backend is not None and self.config is not None
        ct = self.backend.deserialize_ciphertext(data)
        return np.asarray(self.backend.decrypt(ct)[: self.config.classes], dtype=np.float64)

    async def infer(self, http: aiohttp.ClientSession, image: Any) -> tuple[np.ndarray, float]:
        data = self.encrypt_image(image)
        self.bytes["ciphertexts_sent"] += len(data)
        out, seconds = await self.send(http, data)
        self.bytes["ciphertexts_received"] += len(out)
        return self.decrypt_logits(out), seconds

    async def close(self, http: aiohttp.ClientSession) -> None:
        if self.session_id is not None:
            async with http.delete(f"{self.url}{API}/sessions/{self.session_id}") as resp:
                await resp.read()
            self.session_id = None


def client_infer(url: str, image_index: int | Sequence[int] | None = 0, *, mnist_dir: str | Path | None = None,
                 image: Any = None, timeout: float = 600.0,
                 log: Callable[[str], None] | None = print) -> ClientResult:
    """Classify held-out image(s) ``image_index`` (or ``image``) on the server, encrypted."""
    if image is not None:
        images, indices, labels = [check_image(image)], [None], [None]
    else:
        idx = [image_index] if isinstance(image_index, (int, np.integer)) else list(image_index or [])
        if not idx:
            raise ConfigError("give at least one image index")
        data = load_mnist(mnist_dir)
        n = len(data.y_test)
        for i in idx:
            if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < n:
                raise ConfigError(f"image index must be 0..{n - 1} (held-out images), got {i!r}")
        images = [data.x_test[i] for i in idx]
        indices = [int(i) for i in idx]
        labels = [int(data.y_test[i]) for i in idx]
    say = log or (lambda _s: None)

    async def main() -> ClientResult:
        client = HeCnnClient(url, timeout=timeout)
        t0 = time.perf_counter()
        async with aiohttp.ClientSession(timeout=client.timeout) as http:
            await client.connect(http)
            say(f"session open: keys in {client.stats['keygen_s']:.1f} s, public context "
                f"{client.bytes['context'] / 1e6:.1f} MB sent in {client.stats['open_session_s']:.1f} s")
            preds, logits, server_s = [], [], []
            for i, img in zip(indices, images):
                t = time.perf_counter()
                lg, s = await client.infer(http, img)
                preds.append(int(np.argmax(lg)))
                logits.append(lg.tolist())
                server_s.append(s)
                lab = labels[len(preds) - 1]
                say(f"image {i if i is not None else '(given)'}: class {preds[-1]}"
                    + (f" (label {lab})" if lab is not None else "")
                    + f"  [{(time.perf_counter() - t) * 1e3:.0f} ms round trip, server {s * 1e3:.0f} ms]")
            await client.close(http)
        stats = dict(client.stats, total_s=time.perf_counter() - t0)
        return ClientResult(url, indices, labels, preds, logits, stats, client.bytes, server_s)

    return asyncio.run(main())
