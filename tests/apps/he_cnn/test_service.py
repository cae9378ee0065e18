"""The client/server split over loopback HTTP: the server holds the model and only public
contexts; ciphertexts cross real sockets serialised. One SEAL session at the full parameters
(keys ~4 s, a 111 MB public context), refusals answered with 4xx JSON errors."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from typing import Any, Iterator

import aiohttp
import numpy as np
import pytest

from cryptoffload.apps.he_cnn.data import load_mnist
from cryptoffload.apps.he_cnn.model import CnnModel, load_model
from cryptoffload.apps.he_cnn.service import HeCnnClient, ServerThread, client_infer
from cryptoffload.apps.he_cnn.train import DEFAULT_WEIGHTS
from cryptoffload.crypto.ckks import DEFAULT_PARAMS, CkksParams, make_backend
from cryptoffload.errors import ConfigError

pytest.importorskip("tenseal")


def http(url: str, body: bytes | None = None, method: str | None = None) -> tuple[int, Any]:
    req = urllib.request.Request(url, data=body, method=method or ("GET" if body is None else "POST"))
    if body is not None:
        req.add_header("Content-Type", "application/octet-stream")
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            raw = resp.read()
            return resp.status, (json.loads(raw) if resp.headers.get_content_type() == "application/json" else raw)
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.fixture(scope="module")
def model() -> CnnModel:
    return load_model(DEFAULT_WEIGHTS)


@pytest.fixture(scope="module")
def server(model: CnnModel) -> Iterator[str]:
    with ServerThread(model, "127.0.0.1", 0, backend="seal") as url:
        yield url


@pytest.fixture(scope="module")
def session(server: str) -> HeCnnClient:
    client = HeCnnClient(server)

    async def go() -> None:
        async with aiohttp.ClientSession() as h:
            await client.connect(h)
    asyncio.run(go())
    return client


def test_info_describes_what_the_client_needs(server: str) -> None:
    status, info = http(f"{server}/v1/info")
    assert status == 200 and info["backend"] == "seal" and info["params"] == DEFAULT_PARAMS.to_dict()
    assert len(info["rotation_steps"]) == 28 and info["model"]["hidden"] == 100
    assert "fc1_w" not in json.dumps(info)             # the weights stay on the server


def test_encrypted_round_trip_over_http(server: str, session: HeCnnClient, model: CnnModel) -> None:
    assert session.bytes["context"] > 50e6 and not session.backend.public_context() is None
    img = load_mnist().x_test[5]
    data = session.encrypt_image(img)
    status, out = http(f"{server}/v1/sessions/{session.session_id}/infer", data)
    assert status == 200 and isinstance(out, bytes)
    logits = session.decrypt_logits(out)
    plain = model.forward(img)[0]
    assert int(np.argmax(logits)) == int(np.argmax(plain))
    assert np.max(np.abs(logits - plain)) < 0.05


def test_foreign_and_garbled_ciphertexts_refused(server: str, session: HeCnnClient) -> None:
    url = f"{server}/v1/sessions/{session.session_id}/infer"
    other = make_backend("seal")                       # same parameters, another key set
    other.keygen(rotations=[])
    ct = other.serialize_ciphertext(other.encrypt(np.zeros(8192)))
    status, body = http(url, ct)
    assert status == 400 and body["type"] == "error" and body["error"] == "foreign_ciphertext"
    assert "another key set" in body["message"]
    small = make_backend("seal", CkksParams(8192, (60, 40, 60), 40))     # other parameters
    small.keygen(rotations=[])
    status, body = http(url, small.serialize_ciphertext(small.encrypt([1.0])))
    assert status == 400 and body["error"] == "foreign_ciphertext" and "parameters" in body["message"]
    status, body = http(url, b"CKKS garbage")
    assert status == 400 and body["error"] == "bad_ciphertext"
    low = session.backend.rescale(session.backend.encrypt(np.zeros(8192)))
    status, body = http(url, session.backend.serialize_ciphertext(low))
    assert status == 400 and body["error"] == "bad_ciphertext" and "level 5" in body["message"]
    status, body = http(f"{server}/v1/sessions/nope/infer", ct)
    assert status == 404 and body["error"] == "unknown_session"
    assert http(f"{server}/v1/info")[0] == 200           # still serving


def test_bad_contexts_refused(server: str) -> None:
    be = make_backend("seal")
    be.keygen(rotations=[1, 2])
    status, body = http(f"{server}/v1/sessions", be.secret_context())
    assert status == 400 and body["error"] == "secret_context"
    status, body = http(f"{server}/v1/sessions", be.public_context())
    assert status == 400 and body["error"] == "bad_context" and "lacks Galois keys" in body["message"]
    emu = make_backend("emulator")
    emu.keygen(rotations=[1])
    status, body = http(f"{server}/v1/sessions", emu.public_context())
    assert status == 400 and body["error"] == "bad_context" and "emulator" in body["message"]
    status, body = http(f"{server}/v1/sessions", b"not a context")
    assert status == 400 and body["error"] == "bad_context"


def test_client_infer_function_and_wrong_shape() -> None:
    with ServerThread(DEFAULT_WEIGHTS, backend="emulator") as url:   # a fast server for the client path
        lines: list[str] = []
        r = client_infer(url, [0, 3], log=lines.append)
        plain = load_model(DEFAULT_WEIGHTS).predict(load_mnist().x_test[[0, 3]])
        assert r.predictions == plain.tolist() and r.labels[0] is not None
        assert any("class" in ln for ln in lines)
        with pytest.raises(ConfigError, match=r"shape \(28, 29\)"):
            client_infer(url, image=np.zeros((28, 29)), log=None)
    with pytest.raises(ConfigError, match="cannot reach"):
        client_infer(url, 0, log=None)
