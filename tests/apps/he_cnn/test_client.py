"""The HE-CNN client: classifies held-out images through a server, over TLS with a token."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cryptoffload.apps import _http
from cryptoffload.apps._credentials import Credentials, new_token, token_hash
from cryptoffload.apps.he_cnn.client import client_infer
from cryptoffload.apps.he_cnn.data import load_mnist
from cryptoffload.apps.he_cnn.model import load_model
from cryptoffload.apps.he_cnn.server import HeCnnServer
from cryptoffload.apps.he_cnn.train import DEFAULT_WEIGHTS
from cryptoffload.errors import ConfigError

TOKEN = new_token("client")


def test_client_infer_over_tls_and_refusals(tmp_path: Path) -> None:
    cert, key = _http.self_signed_certificate(tmp_path)
    server = HeCnnServer(DEFAULT_WEIGHTS, clients=Credentials({"client": token_hash(TOKEN)}), backend="emulator")
    with _http.ServerThread(server.app, ssl_context=_http.server_ssl(cert, key), on_stop=server.close) as url:
        assert url.startswith("https://")
        lines: list[str] = []
        r = client_infer(url, [0, 3], token=TOKEN, cafile=cert, log=lines.append)
        plain = load_model(DEFAULT_WEIGHTS).predict(load_mnist().x_test[[0, 3]])
        assert r.predictions == plain.tolist() and r.labels[0] is not None
        assert any("class" in ln for ln in lines)
        with pytest.raises(ConfigError, match=r"shape \(28, 29\)"):
            client_infer(url, image=np.zeros((28, 29)), token=TOKEN, cafile=cert, log=None)
        with pytest.raises(ConfigError, match="not trusted"):
            client_infer(url, 0, token=TOKEN, log=None)
        with pytest.raises(ConfigError, match="HTTP 403"):
            client_infer(url, 0, token=new_token("client"), cafile=cert, log=None)
    with pytest.raises(ConfigError, match="cannot reach"):
        client_infer(url, 0, token=TOKEN, cafile=cert, log=None)
    with pytest.raises(ConfigError, match="plain http"):
        client_infer(url.replace("https", "http"), 0, token=TOKEN, log=None)


def _hostile_server(info: bytes) -> _http.ServerThread:
    """A server (or whoever answers in its place) whose /v1/info answer is ``info``."""
    from aiohttp import web

    async def handler(_: web.Request) -> web.Response:
        return web.Response(body=info, content_type="application/json")

    def make() -> web.Application:
        app = web.Application()
        app.router.add_get("/v1/info", handler)
        return app

    return _http.ServerThread(make)


GOOD_INFO = {"backend": "emulator", "params": {"poly_modulus_degree": 16384, "coeff_modulus_bits": [60, 30, 60],
                                                "scale_bits": 30}, "model": {}}


@pytest.mark.parametrize("info, reason", [
    (b'{"backend": "emulator", "prepare_s": NaN}', "NaN is not JSON"),
    (b'{"a": 1, "a": 2}', "appears twice"),
    (b"[" + b" " * (2 << 20) + b"]", "larger than the 1,048,576 bytes accepted"),
    (None, "rotation steps"),  # 100,000 Galois keys asked for: hours and gigabytes of key generation
])
def test_a_hostile_servers_info_is_refused_before_any_key_is_made(info: bytes | None, reason: str) -> None:
    import json

    body = info if info is not None else json.dumps({**GOOD_INFO, "rotation_steps": list(range(1, 100_001))}).encode()
    with _hostile_server(body) as url:
        with pytest.raises(ConfigError, match=reason):
            client_infer(url, 0, token=TOKEN, insecure_http=True, log=None)
