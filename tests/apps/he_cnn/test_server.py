"""The HE-CNN server over loopback HTTP: the server holds the model and only public contexts;
ciphertexts cross real sockets serialised. One SEAL session at the full parameters (keys ~4 s,
a 111 MB public context); the rest on the emulator back end. Refusals are 4xx JSON errors and
change nothing; clients are told apart by token, not by address."""

from __future__ import annotations

import asyncio
import gc
import http.client as httpclient
import json
import zlib
import urllib.error
import urllib.request
from typing import Any, Iterator
from urllib.parse import urlsplit

import aiohttp
import numpy as np
import pytest

from cryptoffload.apps._credentials import Credentials, new_token, token_hash
from cryptoffload.apps.he_cnn.client import HeCnnClient
from cryptoffload.apps.he_cnn.data import load_mnist
from cryptoffload.apps.he_cnn.model import CnnModel, load_model
from cryptoffload.apps.he_cnn.budget import session_bounds
from cryptoffload.apps.he_cnn.packing import PerChannelPlan
from cryptoffload.apps.he_cnn.server import FRAME_SLACK, HeCnnServer, ServerThread
from cryptoffload.apps.he_cnn.train import DEFAULT_WEIGHTS
from cryptoffload.crypto.ckks import DEFAULT_PARAMS, KIND_PUBLIC, CkksParams, SealBackend, make_backend
from cryptoffload.crypto.ckks.framing import pack_frame, pack_sections, unpack_frame, unpack_sections
from cryptoffload.crypto.ckks.inflate import COMPR_ZLIB, seal_header
from cryptoffload.crypto.ckks.seal import inflate_limits
from cryptoffload.errors import ConfigError

pytest.importorskip("tenseal")

ALICE, BOB, EVE = new_token("alice"), new_token("bob"), new_token("eve")
CLIENTS = Credentials({"alice": token_hash(ALICE), "bob": token_hash(BOB)})


def http(url: str, body: bytes | None = None, method: str | None = None, token: str | None = ALICE
         ) -> tuple[int, Any]:
    req = urllib.request.Request(url, data=body, method=method or ("GET" if body is None else "POST"))
    if body is not None:
        req.add_header("Content-Type", "application/octet-stream")
    if token is not None:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            raw = resp.read()
            return resp.status, (json.loads(raw) if resp.headers.get_content_type() == "application/json" else raw)
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def declared_only(url: str, path: str, length: int, token: str | None = ALICE) -> tuple[int, dict]:
    """POST declaring ``length`` bytes but sending none: a server that reads before refusing
    would wait; one that refuses on the headers answers at once."""
    parts = urlsplit(url)
    conn = httpclient.HTTPConnection(parts.hostname, parts.port, timeout=30)
    conn.putrequest("POST", path)
    conn.putheader("Content-Length", str(length))
    if token is not None:
        conn.putheader("Authorization", f"Bearer {token}")
    conn.endheaders()
    resp = conn.getresponse()
    body = json.loads(resp.read())
    conn.close()
    return resp.status, body


@pytest.fixture(scope="module")
def model() -> CnnModel:
    return load_model(DEFAULT_WEIGHTS)


@pytest.fixture(scope="module")
def server(model: CnnModel) -> Iterator[str]:
    with ServerThread(model, "127.0.0.1", 0, clients=CLIENTS, backend="seal") as url:
        yield url


@pytest.fixture(scope="module")
def session(server: str) -> HeCnnClient:
    client = HeCnnClient(server, token=ALICE, insecure_http=True)

    async def go() -> None:
        async with aiohttp.ClientSession() as h:
            await client.connect(h)
    asyncio.run(go())
    return client


def test_info_describes_what_the_client_needs(server: str) -> None:
    status, info = http(f"{server}/v1/info", token=None)
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
    status, body = http(f"{server}/v1/sessions", be.secret_context(), token=BOB)
    assert status == 400 and body["error"] == "secret_context"
    status, body = http(f"{server}/v1/sessions", be.public_context(), token=BOB)
    assert status == 400 and body["error"] == "bad_context" and "lacks Galois keys" in body["message"]
    emu = make_backend("emulator")
    emu.keygen(rotations=[1])
    status, body = http(f"{server}/v1/sessions", emu.public_context(), token=BOB)
    assert status == 400 and body["error"] == "bad_context" and "emulator" in body["message"]
    status, body = http(f"{server}/v1/sessions", b"not a context", token=BOB)
    assert status == 400 and body["error"] == "bad_context"


def test_sessions_belong_to_their_client_and_bodies_wait_for_the_session(server: str, session: HeCnnClient) -> None:
    """Issue 12, attack 4 on this server: the session is looked up (and its owner checked)
    before the body is read, and a stranger or another client cannot reach a session."""
    sid = session.session_id
    data = session.encrypt_image(load_mnist().x_test[0])
    url = f"{server}/v1/sessions/{sid}/infer"
    assert http(url, data, token=None)[0] == 401
    assert http(url, data, token=EVE)[0] == 403
    status, body = http(url, data, token=BOB)          # a valid client, but not the owner
    assert status == 404 and body["error"] == "unknown_session"
    assert http(f"{server}/v1/sessions/{sid}", method="DELETE", token=BOB)[0] == 404
    # a body declared but never sent: answered at once, so nothing waited for the body --
    # within the route's limit the missing session is the answer, beyond it the size
    status, body = declared_only(server, "/v1/sessions/missing/infer", 2_000_000)
    assert status == 404 and body["error"] == "unknown_session"
    status, body = declared_only(server, "/v1/sessions/missing/infer", 900_000_000)
    assert status == 413 and body["type"] == "error"
    status, body = declared_only(server, f"/v1/sessions/{sid}/infer", 900_000_000)
    assert status == 413 and body["type"] == "error"
    status, body = declared_only(server, "/v1/sessions", 900_000_000)
    assert status == 413
    status, body = declared_only(server, "/v1/sessions", 1000, token=None)
    assert status == 401
    status, _ = http(url, data)                        # the owner's session is intact
    assert status == 200


def test_one_client_cannot_evict_another() -> None:
    """Issue 12, attack 4: four sessions opened by one client used to evict everyone's. Now a
    client's extra sessions drop only its own, and a full server refuses new ones (503)."""
    emu = make_backend("emulator")
    with ServerThread(DEFAULT_WEIGHTS, clients=CLIENTS, backend="emulator", max_sessions=3,
                      max_sessions_per_client=2) as url:
        steps = json.loads(urllib.request.urlopen(f"{url}/v1/info").read())["rotation_steps"]
        emu.keygen(rotations=steps, relin=True)
        ctx = emu.public_context()
        status, bob = http(f"{url}/v1/sessions", ctx, token=BOB)
        assert status == 200
        alice = [http(f"{url}/v1/sessions", ctx, token=ALICE)[1]["session"] for _ in range(4)]
        ct = emu.serialize_ciphertext(emu.encrypt(np.zeros(emu.slots)))
        assert http(f"{url}/v1/sessions/{bob['session']}/infer", ct, token=BOB)[0] == 200   # bob's survived
        assert http(f"{url}/v1/sessions/{alice[0]}/infer", ct)[0] == 404                    # alice's oldest went
        assert http(f"{url}/v1/sessions/{alice[-1]}/infer", ct)[0] == 200
        status, body = http(f"{url}/v1/sessions", ctx, token=BOB)     # 3 held: bob's second does not fit
        assert status == 503 and body["error"] == "server_full"
        assert http(f"{url}/v1/sessions/{alice[-1]}/infer", ct)[0] == 200      # and took nothing from alice
        assert http(f"{url}/v1/sessions/{alice[-1]}", method="DELETE")[0] == 200
        assert http(f"{url}/v1/sessions", ctx, token=BOB)[0] == 200          # now it fits
        assert http(f"{url}/v1/sessions", ctx, token=BOB)[0] == 200          # at his quota: his oldest makes room
        assert http(f"{url}/v1/sessions/{bob['session']}/infer", ct, token=BOB)[0] == 404
        assert http(f"{url}/v1/sessions/{alice[-2]}/infer", ct)[0] == 200


# -- issue 22, item 3: decompression bombs and the memory budget ---------------------------------
def with_section(ctx: bytes, backend: str, name: str, blob: bytes) -> bytes:
    """``ctx`` (a public context) with its section ``name`` replaced, framed anew (a valid
    checksum and key id: what an authenticated client can send)."""
    payload, key_id, digest = unpack_frame(ctx, KIND_PUBLIC, backend, None, None)
    header, sections = unpack_sections(payload, "context")
    header.pop("sections")
    sections[name] = blob
    return pack_frame(KIND_PUBLIC, backend, digest, key_id, pack_sections(header, list(sections.items())))


def live_backends() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, SealBackend))


def test_decompression_bomb_refused_before_seal_inflates_it() -> None:
    """A context whose Galois keys are 256 MiB of zeros in ~250 KB of zlib (SEAL would inflate
    it all), one whose header lies about its size, and keys the plan does not use:
    4xx JSON errors naming the limit, no session, no budget held, no backend left alive."""
    be = make_backend("seal")
    be.keygen(rotations=[1])
    steps = PerChannelPlan(load_model(DEFAULT_WEIGHTS), DEFAULT_PARAMS).rotation_steps()
    ctx = _relabel(be.public_context(), [[s, f"galois:{s}"] for s in steps])   # lists the plan's 28 keys
    bomb = zlib.compress(bytes(256 << 20), 9)
    bombed = with_section(ctx, "seal", "galois", seal_header(COMPR_ZLIB, 16 + len(bomb)) + bomb)
    assert len(bombed) < len(ctx)
    galois = unpack_sections(unpack_frame(ctx, KIND_PUBLIC, "seal", None, None)[0], "context")[1]["galois"]
    lying = with_section(ctx, "seal", "galois", galois[:8] + (1 << 40).to_bytes(8, "little") + galois[16:])
    thread = ServerThread(DEFAULT_WEIGHTS, clients=CLIENTS, backend="seal")
    srv = thread.server
    with thread as url:
        before = live_backends()
        status, body = http(f"{url}/v1/sessions", bombed)
        assert status == 413 and body["error"] == "decompression_limit"
        assert f"above the {inflate_limits(DEFAULT_PARAMS, 28)['galois']:,} bytes" in body["message"]
        status, body = http(f"{url}/v1/sessions", lying)
        assert status == 400 and body["error"] == "bad_context" and "states 1,099,511,627,776 bytes" in body["message"]
        status, body = http(f"{url}/v1/sessions", _relabel(ctx, [[1, "galois:1"], [1000, "galois:1000"]]))
        assert status == 413 and body["error"] == "too_many_keys" and "[1000]" in body["message"]
        listed = [[s, f"galois:{s}"] for s in steps]
        for fields, says in (({"params": {"poly_modulus_degree": 3, "coeff_modulus_bits": [60, 60], "scale_bits": 30}},
                               "poly_modulus_degree must be a power of two"),
                             ({"params": CkksParams(8192, (60, 40, 60), 40).to_dict()}, "are not the server's"),
                             ({"galois": "all"}, "malformed")):
            status, body = http(f"{url}/v1/sessions", _relabel(ctx, **{"galois": listed, **fields}))
            assert status == 400 and body["error"] == "bad_context" and says in body["message"]
        assert srv.sessions == {} and srv.budget.used == 0 and live_backends() == before
        assert http(f"{url}/v1/info")[0] == 200


def _relabel(ctx: bytes, galois: list, **fields: Any) -> bytes:
    """``ctx`` with its header listing other Galois steps (its keys unchanged), and ``fields``."""
    payload, key_id, digest = unpack_frame(ctx, KIND_PUBLIC, "seal", None, None)
    header, sections = unpack_sections(payload, "context")
    header.pop("sections")
    header["galois"] = galois
    header.update(fields)
    return pack_frame(KIND_PUBLIC, "seal", digest, key_id, pack_sections(header, list(sections.items())))


def test_memory_budget_refuses_the_session_it_cannot_hold(model: CnnModel) -> None:
    """A budget of two sessions' bounds: the third session request is refused (503) before
    its body is read, whoever sends it, and fits once one is closed."""
    bounds = session_bounds(DEFAULT_PARAMS, PerChannelPlan(model, DEFAULT_PARAMS), FRAME_SLACK)
    emu = make_backend("emulator")
    thread = ServerThread(model, clients=CLIENTS, backend="emulator", max_sessions=4,
                          memory_budget=2 * bounds.total)
    srv = thread.server
    with thread as url:
        emu.keygen(rotations=srv.plan.rotation_steps(), relin=True)
        ctx = emu.public_context()
        status, first = http(f"{url}/v1/sessions", ctx)
        assert status == 200 and http(f"{url}/v1/sessions", ctx, token=BOB)[0] == 200
        assert srv.budget.used == 2 * (bounds.keys + len(ctx) + bounds.weights)
        status, body = http(f"{url}/v1/sessions", ctx)
        assert status == 503 and body["error"] == "memory_budget" and "--memory-budget" in body["message"]
        status, body = declared_only(url, "/v1/sessions", 1000, token=BOB)   # refused on its headers
        assert status == 503 and body["error"] == "memory_budget"
        assert len(srv.sessions) == 2
        assert http(f"{url}/v1/sessions/{first['session']}", method="DELETE")[0] == 200
        assert http(f"{url}/v1/sessions", ctx, token=BOB)[0] == 200
    with pytest.raises(ConfigError, match="--session-memory .* MiB is below what one session needs"):
        HeCnnServer(model, clients=CLIENTS, backend="emulator", session_memory=bounds.total - 1)


@pytest.mark.parametrize("step", [True, 1.5, "\u0661", 10**30, -(10**6)])
def test_a_galois_step_that_is_not_an_integer_below_the_slots_is_refused_before_loading(step: Any) -> None:
    """issue 32: the header's steps were read with ``int()``: ``true`` became 1, ``1.5`` 1 and
    an Arabic-Indic digit its value; each is now a malformed context, refused before SEAL loads."""
    be = make_backend("seal")
    be.keygen(rotations=[1])
    steps = PerChannelPlan(load_model(DEFAULT_WEIGHTS), DEFAULT_PARAMS).rotation_steps()
    ctx = _relabel(be.public_context(), [[step, "galois:1"], *[[s, f"galois:{s}"] for s in steps]])
    with ServerThread(DEFAULT_WEIGHTS, clients=CLIENTS, backend="seal") as url:
        status, body = http(f"{url}/v1/sessions", ctx)
    assert status == 400 and body["error"] == "bad_context" and "malformed" in body["message"]
