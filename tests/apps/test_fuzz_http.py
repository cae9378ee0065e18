"""Fuzz over every route of both servers (the ridge CSP and platform, the HE-CNN server):
random methods, paths, headers and tokens, random and mutated JSON messages, random bytes,
declared lengths above what is sent (truncated bodies) and far above the limits.

The contract (issue 12): never a 5xx; a 4xx is a JSON error; a refused request changes
nothing (the platform's database and status, the CSP's steps, the HE-CNN sessions). Servers
start once per module; requests go over raw sockets so that nothing is normalised on the way.
"""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cryptoffload.apps._credentials import Credentials, new_token, token_hash
from cryptoffload.apps.he_cnn.server import ServerThread as HeCnnThread
from cryptoffload.apps.he_cnn.train import DEFAULT_WEIGHTS
from cryptoffload.apps.ridge import messages as m
from cryptoffload.crypto.ckks import make_backend
from cryptoffload.crypto.paillier import generate_keypair

sys.path.insert(0, str(Path(__file__).parent / "ridge"))  # the ridge tests' helpers (that folder is no package)
from ridge_helpers import BUYER_TOKEN, PLATFORM_TOKEN, PROVIDERS, Parties, upload_message  # noqa: E402

FUZZ = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                        HealthCheck.too_slow])
HE_TOKEN = new_token("client")
#: methods HTTP's parser knows: an unknown one (say BREW) is refused by aiohttp's parser itself
#: with a plain-text 400, before any application code runs
METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "PROPFIND", "TRACE"]


def raw(url: str, method: str, path: str, headers: dict[str, str], body: bytes = b"",
        declared: int | None = None) -> tuple[int | None, dict[str, str], bytes]:
    """One request over a fresh socket; ``declared`` above ``len(body)`` sends a truncated body
    and then ends the connection's sending side, as a client that dies mid-body does: the
    server may answer (when the headers suffice to refuse) or just drop the connection
    (status None)."""
    host, port = url.split("//")[1].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=60) as s:
        lines = [f"{method} {path} HTTP/1.1", f"Host: {host}", "Connection: close"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        if body or declared is not None:
            lines.append(f"Content-Length: {declared if declared is not None else len(body)}")
        try:
            s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
            if declared is not None and declared > len(body):
                s.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        data = b""
        while True:
            try:
                piece = s.recv(65536)
            except OSError:
                break
            if not piece:
                break
            data += piece
    if not data:
        assert declared is not None and declared > len(body), "no answer to a complete request"
        return None, {}, b""
    head, _, rest = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    status = int(status_line.split()[1])
    hdrs = {k.lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines)}
    return status, hdrs, rest


def check_contract(method: str, status: int | None, headers: dict[str, str], body: bytes) -> None:
    if status is None:  # a truncated request the server dropped: nothing to answer
        return
    assert status < 500, (status, body[:300])
    if status >= 400 and method != "HEAD":
        assert headers.get("content-type", "").startswith("application/json"), (status, headers, body[:200])
        err = json.loads(body)
        assert err["type"] == "error" and isinstance(err["error"], str) and err["message"], err


@pytest.fixture(scope="module")
def parties(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Parties]:
    keys = generate_keypair(1024, insecure_study_size=True), generate_keypair(2048)
    p = Parties(tmp_path_factory.mktemp("fuzz"), keys)
    try:
        yield p
    finally:
        p.stop()


@pytest.fixture(scope="module")
def he_cnn() -> Iterator[tuple[str, Any]]:
    server = HeCnnThread(DEFAULT_WEIGHTS, clients=Credentials({"client": token_hash(HE_TOKEN)}), backend="emulator",
                         max_sessions=3, max_sessions_per_client=2)
    with server as url:
        yield url, server.server


def he_state(server: Any) -> list[tuple[str, str, int]]:
    return sorted((sid, s.owner, s.inferences) for sid, s in server.sessions.items())


tokens = st.sampled_from([None, "", "garbage", "Bearer", "Bearer ", "Bearer x.y", f"Bearer {BUYER_TOKEN}",
                          f"Bearer {PLATFORM_TOKEN}", f"Bearer {PROVIDERS['alice']}", f"Bearer {PROVIDERS['bob']}",
                          f"Bearer {HE_TOKEN}", "Basic YWxpY2U6eA==", "Bearer " + "A" * 600])
path_text = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz0123456789-._~/%20"), max_size=40)
header_names = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz-"), min_size=1, max_size=20).filter(
    lambda h: h not in ("host", "content-length", "transfer-encoding", "connection", "expect"))
header_values = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=60)
json_values = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False)
                           | st.text(max_size=30),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner,
                                                                                        max_size=4), max_leaves=12)


@st.composite
def requests(draw: Any) -> dict[str, Any]:
    """A request with anything in it: method, path, headers, body, declared length."""
    path = draw(st.sampled_from(["/", "/params", "/status", "/message", "/v1/info", "/v1/sessions",
                                 "/v1/sessions/x/infer", "/v1/sessions/x", "/message/extra"])
                | path_text.map(lambda p: "/" + p.lstrip("/")))
    headers = draw(st.dictionaries(header_names, header_values, max_size=3))
    auth = draw(tokens)
    if auth is not None:
        headers["Authorization"] = auth
    if draw(st.booleans()):
        headers["Content-Type"] = draw(st.sampled_from(["application/json", "application/octet-stream", "text/plain",
                                                         "multipart/form-data; boundary=x"]))
    body = draw(st.binary(max_size=300) | json_values.map(lambda v: json.dumps(v).encode()))
    declared = draw(st.sampled_from([None] * 6 + [len(body) + 17, 2**31, 10**12]))  # a third cut short
    return {"method": draw(st.sampled_from(METHODS)), "path": path, "headers": headers, "body": body,
            "declared": declared}


@FUZZ
@given(req=requests(), target=st.sampled_from(["csp", "platform"]))
def test_ridge_random_requests(parties: Parties, req: dict[str, Any], target: str) -> None:
    before = parties.snapshot()
    status, headers, body = raw(getattr(parties, target), **req)
    check_contract(req["method"], status, headers, body)
    if status is None or status >= 400:
        assert parties.snapshot() == before


def _templates(p: Parties) -> dict[str, tuple[str, dict[str, Any]]]:
    """A well-formed message of each type, with the server it goes to."""
    up, sp = p.info.upload_pk.fingerprint, p.info.solve_pk.fingerprint
    return {
        "upload": ("platform", upload_message(p.info, records=2, upload_id="alice:fuzz")),
        "finalize": ("platform", m.new_message(m.FINALIZE, up)),
        "mask_request": ("platform", m.new_message(m.MASK_REQUEST, sp)),
        "commit": ("csp", m.new_message(m.COMMIT, up, aggregate_sha256="a" * 64, uploads_sha256="b" * 64, records=2,
                                        uploads=2, providers=2, contributions=[1, 1])),
        "unpack_request": ("csp", m.new_message(m.UNPACK_REQUEST, up, ciphertexts="")),
        "solve_request": ("csp", m.new_message(m.SOLVE_REQUEST, sp, ciphertexts="", system_digest="c" * 64)),
        "coefficients_request": ("csp", m.new_message(m.COEFFICIENTS_REQUEST, sp, system_digest="d" * 64)),
    }


@FUZZ
@given(kind=st.sampled_from(["upload", "finalize", "mask_request", "commit", "unpack_request", "solve_request",
                             "coefficients_request"]),
       field=st.sampled_from(["protocol", "type", "message_id", "key_fingerprint", "upload_id", "provider_id",
                              "records", "vectors", "ciphertexts", "aggregate_sha256", "uploads_sha256",
                              "providers", "uploads", "contributions", "system_digest", "extra"]),
       value=json_values, drop=st.booleans(), token=st.none() | tokens, truncate=st.integers(0, 7))
def test_ridge_mutated_messages(parties: Parties, kind: str, field: str, value: Any, drop: bool, token: str | None,
                                truncate: int) -> None:
    """Each message type with one field replaced by any JSON value (or removed), mostly with the
    token of the party it is meant for (so that it gets past authentication), sometimes with
    any token; one body in eight cut short."""
    target, msg = _templates(parties)[kind]
    if token is None:
        token = "Bearer " + (PROVIDERS["alice"] if kind == "upload" else BUYER_TOKEN
                             if kind in ("finalize", "mask_request", "coefficients_request") else PLATFORM_TOKEN)
    msg = m.with_new_id(msg) if field != "message_id" else dict(msg)
    if drop:
        msg.pop(field, None)
    else:
        msg[field] = value
    body = json.dumps(msg).encode()
    headers = {"Content-Type": "application/json", "Authorization": token}
    before = parties.snapshot()
    status, hdrs, out = raw(getattr(parties, target), "POST", "/message", headers, body,
                            declared=len(body) + 100 if truncate == 0 else None)
    check_contract("POST", status, hdrs, out)
    if status is None or status >= 400:
        assert parties.snapshot() == before


@FUZZ
@given(req=requests())
def test_he_cnn_random_requests(he_cnn: tuple[str, Any], req: dict[str, Any]) -> None:
    url, server = he_cnn
    before = he_state(server)
    status, headers, body = raw(url, **req)
    check_contract(req["method"], status, headers, body)
    if status is None or status >= 400:
        assert he_state(server) == before


@pytest.fixture(scope="module")
def he_session(he_cnn: tuple[str, Any]) -> tuple[str, bytes]:
    """A real session of the fuzz client, and one fresh ciphertext for it."""
    url, _ = he_cnn
    be = make_backend("emulator")
    status, _, info = raw(url, "GET", "/v1/info", {})
    be.keygen(rotations=json.loads(info)["rotation_steps"], relin=True)
    status, _, body = raw(url, "POST", "/v1/sessions", {"Authorization": f"Bearer {HE_TOKEN}"}, be.public_context())
    assert status == 200, body
    return json.loads(body)["session"], be.serialize_ciphertext(be.encrypt(np.zeros(be.slots)))


@FUZZ
@given(flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)), max_size=4),
       cut=st.none() | st.integers(0, 10**6), token=st.sampled_from([f"Bearer {HE_TOKEN}"] * 4) | tokens,
       sid_ok=st.integers(0, 3), truncate=st.integers(0, 7))
def test_he_cnn_mutated_ciphertexts(he_cnn: tuple[str, Any], he_session: tuple[str, bytes], flips: list,
                                    cut: int | None, token: str | None, sid_ok: int, truncate: int) -> None:
    """A real ciphertext with bytes flipped or cut, to the real session or another, with any token."""
    url, server = he_cnn
    sid, ct = he_session
    data = bytearray(ct if cut is None else ct[:cut % (len(ct) + 1)])
    for pos, x in flips:
        if data:
            data[pos % len(data)] ^= x
    headers = {"Content-Type": "application/octet-stream"}
    if token is not None:
        headers["Authorization"] = token
    before = he_state(server)
    path = f"/v1/sessions/{sid if sid_ok else sid[::-1]}/infer"
    status, hdrs, out = raw(url, "POST", path, headers, bytes(data),
                            declared=len(data) + 9 if truncate == 0 else None)
    check_contract("POST", status, hdrs, out)
    if status is None or status >= 400:
        assert he_state(server) == before
