"""Encrypted MNIST inference: the client of :mod:`.server`.

The client asks ``GET /v1/info`` for the parameters, the architecture (not the weights) and
the rotation steps the plan needs, makes a key set with exactly those Galois keys, uploads the
public context once (``POST /v1/sessions``, ~111 MB at N = 16384 with 28 Galois keys, SEAL's
compressed seeded form), then per image packs and encrypts it
(``POST /v1/sessions/<id>/infer``, ~1 MB), receives the encrypted logits (~0.26 MB, level 0),
decrypts and takes the arg-max. Plaintext images and logits never leave the client. Every
request carries the client's token; the server is reached over https (its certificate
trusted through ``cafile``) unless ``insecure_http``.

Functions the CLI calls::

    client_infer(url, image_index=0, *, token, cafile=None, mnist_dir=None, image=None, log=print) -> ClientResult
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import aiohttp
import numpy as np

from cryptoffload.apps import _http
from cryptoffload.apps.he_cnn.data import load_mnist
from cryptoffload.apps.he_cnn.mnist_checks import check_image
from cryptoffload.apps.he_cnn.model import ModelConfig
from cryptoffload.apps.he_cnn.packing import pack_image
from cryptoffload.apps.he_cnn.server import API, FRAME_SLACK
from cryptoffload.checks import OP_S, JsonDict, load_json, shown
from cryptoffload.crypto.ckks import CkksBackend, CkksParams, make_backend
from cryptoffload.crypto.ckks.timing import timed
from cryptoffload.errors import ConfigError


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

    def as_dict(self) -> JsonDict:
        return asdict(self)


#: one JSON answer of the server (its info, a session, an error): a few kilobytes
MAX_ANSWER_BYTES = 1 << 20
#: Galois keys a server may ask the client to make (the plan uses 28; each costs the client
#: about a second and 4 MB, so a server asking for thousands would exhaust it)
MAX_ROTATION_STEPS = 256


async def _body(resp: aiohttp.ClientResponse, limit: int, what: str) -> bytes:
    """The answer's body, refused as soon as it passes ``limit`` bytes (a server, or whoever
    sits in its place, decides how much it sends)."""
    buf = bytearray()
    while True:
        chunk = await resp.content.read(limit + 1 - len(buf))
        if not chunk:
            return bytes(buf)
        buf += chunk
        if len(buf) > limit:
            raise ConfigError(f"the server's answer to {what} is larger than the {limit:,} bytes accepted")


async def _answer(resp: aiohttp.ClientResponse, what: str) -> JsonDict:
    """The answer as a JSON object (strict JSON, at most :data:`MAX_ANSWER_BYTES`)."""
    value = load_json(f"the server's answer to {what}", await _body(resp, MAX_ANSWER_BYTES, what))
    if not isinstance(value, dict):
        raise ConfigError(f"the server's answer to {what} is not a JSON object")
    return value


async def _check(resp: aiohttp.ClientResponse, what: str) -> None:
    if resp.status < 400:
        return
    try:
        body = await _answer(resp, what)
        msg = f"{body.get('error')}: {_http.one_line(body.get('message'))[:300]}"
    except Exception:
        msg = ""
    raise ConfigError(f"the server refused {what} (HTTP {resp.status}) {msg}")


def _rotation_steps(info: JsonDict, slots: int) -> list[int]:
    """The Galois keys the server asks for: integers below the slot count, at most
    :data:`MAX_ROTATION_STEPS` of them."""
    steps = info.get("rotation_steps")
    if not isinstance(steps, list) or len(steps) > MAX_ROTATION_STEPS:
        raise ConfigError(f"the server's info asks for rotation steps {shown(steps)}: not a list of at most "
                          f"{MAX_ROTATION_STEPS} steps")
    checked = []
    for step in steps:
        if isinstance(step, bool) or not isinstance(step, int) or not abs(step) < slots:
            raise ConfigError(f"the server's info asks for rotation step {shown(step)}: not an integer of "
                              f"magnitude below the {slots:,} slots")
        checked.append(step)
    return checked


class HeCnnClient:
    """The client's side: keys (secret key never leaves), packing, encryption, decryption."""

    def __init__(self, url: str, *, token: str, timeout: float = 600.0, insecure_http: bool = False) -> None:
        self.url = _http.check_url(url, "he-cnn server", insecure_http).rstrip("/")
        self.timeout = aiohttp.ClientTimeout(total=timeout)
        self.headers = {"Authorization": f"Bearer {token}"}
        self.info: JsonDict | None = None
        self.backend: CkksBackend | None = None
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
                info = await _answer(resp, "GET /info")
        except aiohttp.ClientConnectorCertificateError as exc:
            raise ConfigError(f"the TLS certificate of the he-cnn server at {self.url} is not trusted "
                              f"({_http.one_line(exc.certificate_error)}); pass --cafile") from None
        except aiohttp.ClientConnectionError as exc:
            raise ConfigError(f"cannot reach the he-cnn server at {self.url}: {exc}") from None
        self.info = info
        try:
            self.params = CkksParams.from_dict(info["params"])
            model = info["model"]
            if not isinstance(model, dict):
                raise TypeError("model is not an object")
            self.config = ModelConfig(**model)
        except (KeyError, TypeError) as exc:
            raise ConfigError(f"the server's info lacks or garbles its parameters or model ({exc})") from None
        be = self.backend = make_backend(str(info.get("backend")), self.params)
        steps = _rotation_steps(info, self.params.slots)
        with timed(be) as t:
            be.keygen(rotations=steps, relin=True)
        self.stats["keygen_s"] = t.seconds
        ctx = be.public_context()
        self.bytes["context"] = len(ctx)
        t_open = time.perf_counter()
        async with http.post(f"{self.url}{API}/sessions", data=ctx,
                             headers={"Content-Type": "application/octet-stream", **self.headers}) as resp:
            await _check(resp, "the public context")
            body = await _answer(resp, "the public context")
        self.stats["open_session_s"] = time.perf_counter() - t_open
        self.stats["server_prepare_s"] = OP_S.check("the server's prepare_s", body.get("prepare_s", 0.0))
        session = body.get("session")
        if not isinstance(session, str) or not 1 <= len(session) <= 128 or not session.isascii():
            raise ConfigError(f"the server's answer names no session (got {shown(session)})")
        self.session_id = session
        return self.session_id

    def encrypt_image(self, image: np.ndarray) -> bytes:
        """One image, checked where it entered (:func:`client_infer`, or the data set's
        reader), packed and encrypted."""
        assert self.backend is not None and self.config is not None
        vec = pack_image(image, self.config, self.backend.slots)
        return self.backend.serialize_ciphertext(self.backend.encrypt(vec))

    async def send(self, http: aiohttp.ClientSession, data: bytes) -> tuple[bytes, float]:
        async with http.post(f"{self.url}{API}/sessions/{self.session_id}/infer", data=data,
                             headers={"Content-Type": "application/octet-stream", **self.headers}) as resp:
            await _check(resp, "the ciphertext")
            assert self.params is not None
            out = await _body(resp, self.params.ciphertext_bytes(self.params.levels) + FRAME_SLACK, "the ciphertext")
            seconds = resp.headers.get("X-Evaluate-Seconds")
            return out, math.nan if seconds is None else OP_S.parse("the server's X-Evaluate-Seconds", seconds)

    def decrypt_logits(self, data: bytes) -> np.ndarray:
        assert self.backend is not None and self.config is not None
        ct = self.backend.deserialize_ciphertext(data)
        return np.asarray(self.backend.decrypt(ct)[: self.config.classes], dtype=np.float64)

    async def infer(self, http: aiohttp.ClientSession, image: np.ndarray) -> tuple[np.ndarray, float]:
        data = self.encrypt_image(image)
        self.bytes["ciphertexts_sent"] += len(data)
        out, seconds = await self.send(http, data)
        self.bytes["ciphertexts_received"] += len(out)
        return self.decrypt_logits(out), seconds

    async def close(self, http: aiohttp.ClientSession) -> None:
        if self.session_id is not None:
            async with http.delete(f"{self.url}{API}/sessions/{self.session_id}", headers=self.headers) as resp:
                await resp.read()
            self.session_id = None


def client_infer(url: str, image_index: int | Sequence[int] | None = 0, *, token: str,
                 cafile: Path | Sequence[Path] | None = None, insecure_http: bool = False,
                 mnist_dir: str | Path | None = None, image: object = None, timeout: float = 600.0,
                 log: Callable[[str], None] | None = print) -> ClientResult:
    """Classify held-out image(s) ``image_index`` (or ``image``) on the server, encrypted."""
    _http.check_url(url, "he-cnn server", insecure_http)
    ssl_ctx = _http.client_ssl(cafile)
    indices: list[int | None]
    labels: list[int | None]
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
        client = HeCnnClient(url, token=token, timeout=timeout, insecure_http=insecure_http)
        t0 = time.perf_counter()
        connector = aiohttp.TCPConnector(ssl=ssl_ctx if ssl_ctx is not None else True)
        async with aiohttp.ClientSession(timeout=client.timeout, connector=connector) as http:
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
