"""The ridge protocol as real processes over loopback HTTP: CSP and platform are subprocesses
(``python -m cryptoffload.cli ridge ...``), messages cross real sockets.

Small sizes keep the file fast on two shared cores: d = 4, a 1024-bit upload key at study
size, the automatic 2048-bit solve key. Every result is compared with ``run_in_process`` on
the same data: the protocol is exact (the coefficients are fractions), so the comparison is
equality of fractions, not a tolerance."""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Iterator

from cli_helpers import assert_user_error, run_cli

import numpy as np
import pytest

from cryptoffload.apps.ridge import RidgeParams, run_in_process
from cryptoffload.apps.ridge import messages as m
from cryptoffload.apps.ridge.protocol import Provider
from cryptoffload.apps.ridge.service import FAULT_ENV, TOKEN_ENV, ServerProcess, SessionInfo
from cryptoffload.apps.ridge.store import PlatformStore, UploadRecord
from cryptoffload.crypto.paillier import generate_keypair
from cryptoffload.workloads.ridge_data import generate

TOKEN = "test-buyer-token-0123456789"


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "COLUMNS": "200", "PYTHONUNBUFFERED": "1", TOKEN_ENV: TOKEN}
    env.pop(FAULT_ENV, None)
    env.update(extra)
    return env


def cli(cwd: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return run_cli(cwd, *args, env=env or _env(), timeout=timeout)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(url: str, body: bytes | dict | None = None, token: str | None = None) -> tuple[int, dict[str, Any]]:
    """GET (no body) or POST; returns (status, JSON answer) for 2xx and 4xx alike."""
    data = m.dumps(body) if isinstance(body, dict) else body
    req = urllib.request.Request(url, data=data, method="GET" if data is None else "POST")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token is not None:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def csp_args(d: int = 4, max_records: int = 1000, port: int = 0, *extra: str) -> list[str]:
    return ["csp", "--port", str(port), "--d", str(d), "--max-records", str(max_records), "--upload-bits", "1024",
            "--insecure-study-size", *extra]


def in_process(X: np.ndarray, y: np.ndarray, params: RidgeParams, keys: tuple, **kw: Any) -> list[str]:
    res = run_in_process(X, y, params, upload_keys=keys[0], solve_keys=keys[1], **kw)
    return [str(f) for f in res.fractions]


def no_process_mentions(text: str) -> bool:
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if text in cmdline.read_bytes().decode(errors="replace"):
                return False
        except OSError:
            continue
    return True


@pytest.fixture(scope="module")
def keys() -> tuple:
    return generate_keypair(1024, insecure_study_size=True), generate_keypair(2048)


# ---- the demo: everything over real sockets -----------------------------------------------
def test_demo_equals_in_process(tmp_path: Path, keys: tuple) -> None:
    work = tmp_path / "work"
    proc = cli(tmp_path, "ridge", "demo", "--records", "200", "--d", "4", "--out", "demo.json", "--workdir",
               str(work), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    out = json.loads((tmp_path / "demo.json").read_text())
    data = generate(200, 4, 1)
    params = RidgeParams(d=4, max_records=200, x_bound=data.x_bound, y_bound=data.y_bound)
    assert out["fractions"] == in_process(data.X, data.y, params, keys)
    assert out["l2_diff"] <= out["error_bound"]
    assert "scikit-learn" in proc.stdout and "error bound" in proc.stdout
    assert (work / "platform.db").exists()
    assert no_process_mentions(str(work)), "a demo server outlived the demo"


def test_demo_per_provider_three_providers(tmp_path: Path, keys: tuple) -> None:
    proc = cli(tmp_path, "ridge", "demo", "--records", "200", "--d", "4", "--providers", "3", "--mode",
               "per-provider", "--seed", "7", "--out", "demo.json", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    out = json.loads((tmp_path / "demo.json").read_text())
    assert out["uploads"] == 3 and out["records"] == 200
    data = generate(200, 4, 7)
    params = RidgeParams(d=4, max_records=200, x_bound=data.x_bound, y_bound=data.y_bound)
    assert out["fractions"] == in_process(data.X, data.y, params, keys, mode="per-provider", providers=3)


# ---- a CSP and a platform shared by the message tests ---------------------------------------
class Servers:
    def __init__(self, tmp: Path) -> None:
        self.procs: list[ServerProcess] = []
        self.procs.append(ServerProcess("CSP", csp_args(), _env()))
        self.csp = self.procs[0].wait_url(60)
        self.procs.append(ServerProcess("platform", ["platform", "--port", "0", "--csp", self.csp, "--db",
                                                     str(tmp / "platform.db")], _env()))
        self.platform = self.procs[1].wait_url(60)
        status, msg = http(self.platform + "/params")
        assert status == 200
        self.info = SessionInfo.from_message(msg)

    def stop(self) -> None:
        for p in reversed(self.procs):
            p.stop()


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    s = Servers(tmp_path_factory.mktemp("servers"))
    try:
        yield s
    finally:
        s.stop()


def upload_message(info: SessionInfo, records: int = 5, seed: int = 11, upload_id: str = "u-1") -> dict[str, Any]:
    data = generate(records, info.params.d, seed)
    up = next(Provider(info.params, info.upload_pk).per_record(data.X, data.y))
    return m.new_message(m.UPLOAD, info.upload_pk.fingerprint, upload_id=upload_id, provider_id="test",
                         vectors=up.vectors, records=up.records,
                         ciphertexts=m.encode_ciphertexts(up.ciphertexts, info.upload_pk))


def records_now(s: Servers) -> int:
    status, msg = http(s.platform + "/status")
    assert status == 200
    return msg["records"]


def test_replay_is_409_and_the_server_keeps_answering(servers: Servers) -> None:
    msg = upload_message(servers.info, upload_id="replay-1")
    before = records_now(servers)
    status, ack = http(servers.platform + "/message", msg)
    assert status == 200 and ack["status"] == "accepted" and ack["type"] == m.UPLOAD_ACK
    status, err = http(servers.platform + "/message", msg)
    assert status == 409 and err["type"] == "error" and err["error"] == "replayed_message"
    assert records_now(servers) == before + 5
    # a retry (new message id, same upload id) is answered "already accepted", not counted again
    status, ack = http(servers.platform + "/message", m.with_new_id(msg))
    assert status == 200 and ack["status"] == "already accepted"
    assert records_now(servers) == before + 5
    # the same upload id for another upload is a conflict
    other = upload_message(servers.info, records=3, upload_id="replay-1")
    status, err = http(servers.platform + "/message", other)
    assert status == 409 and err["error"] == "upload_id_conflict"


def test_foreign_fingerprint_is_400(servers: Servers) -> None:
    foreign_pk = generate_keypair(1024, insecure_study_size=True)[0]
    msg = upload_message(servers.info, upload_id="foreign-1")
    msg["key_fingerprint"] = foreign_pk.fingerprint.hex()
    status, err = http(servers.platform + "/message", msg)
    assert status == 400 and err["error"] == "foreign_key", err
    # right envelope, ciphertexts made under another key
    msg = upload_message(servers.info, upload_id="foreign-2")
    cts = [int.from_bytes(os.urandom(100), "big") for _ in range(msg_count(msg, servers))]
    msg["ciphertexts"] = m.encode_ciphertexts(cts, foreign_pk)
    status, err = http(servers.platform + "/message", msg)
    assert status == 400 and err["error"] == "foreign_key", err
    # the CSP refuses another key's unpack request too
    req = m.new_message(m.UNPACK_REQUEST, foreign_pk.fingerprint, ciphertexts="")
    status, err = http(servers.csp + "/message", req)
    assert status == 400 and err["error"] == "foreign_key"
    assert records_now(servers) >= 0


def msg_count(msg: dict[str, Any], s: Servers) -> int:
    return m.decode_ciphertexts(msg["ciphertexts"], s.info.upload_pk, check_units=False).values.__len__()


def test_truncated_and_garbled_bodies_are_400(servers: Servers) -> None:
    before = records_now(servers)
    msg = upload_message(servers.info, upload_id="trunc-1")
    body = m.dumps(msg)
    status, err = http(servers.platform + "/message", body[:len(body) // 2])
    assert status == 400 and err["error"] == "malformed"
    # a truncated ciphertext batch inside a well-formed envelope
    raw = base64.b64decode(msg["ciphertexts"])
    bad = dict(m.with_new_id(msg), ciphertexts=base64.b64encode(raw[:-10]).decode())
    status, err = http(servers.platform + "/message", bad)
    assert status == 400 and "truncated" in err["message"]
    # a value that is not below n^2
    n2 = servers.info.upload_pk.nsquare
    size = m.value_bytes(servers.info.upload_pk)
    garbled = raw[:27] + (n2 + 1).to_bytes(size, "little") + raw[27 + size:]
    bad = dict(m.with_new_id(msg), ciphertexts=base64.b64encode(garbled).decode())
    status, err = http(servers.platform + "/message", bad)
    assert status == 400 and err["error"] == "malformed"
    # zero is below n^2 but not a ciphertext: refused by the bulk unit check
    zero = raw[:27] + bytes(size) + raw[27 + size:]
    status, err = http(servers.platform + "/message", dict(m.with_new_id(msg), ciphertexts=base64.b64encode(zero).decode()))
    assert status == 400, err
    status, err = http(servers.platform + "/message", dict(m.with_new_id(msg), ciphertexts="!!not base64!!"))
    assert status == 400
    # wrong protocol version, unknown type, bad message id, unknown path
    status, err = http(servers.platform + "/message", dict(m.with_new_id(msg), protocol="cryptoffload-ridge/2"))
    assert status == 400 and err["error"] == "protocol_version"
    status, err = http(servers.platform + "/message", dict(m.with_new_id(msg), type="solve_request"))
    assert status == 400 and err["error"] == "unknown_type"
    status, err = http(servers.platform + "/message", dict(msg, message_id="not-a-uuid"))
    assert status == 400 and err["error"] == "malformed"
    status, err = http(servers.platform + "/nowhere")
    assert status == 404 and err["type"] == "error"
    assert records_now(servers) == before  # nothing refused was counted
    status, _ = http(servers.csp + "/message", b"\x00garbage")
    assert status == 400


def test_buyer_only_messages_need_the_token(servers: Servers) -> None:
    info = servers.info
    fin = m.new_message(m.FINALIZE, info.upload_pk.fingerprint)
    status, err = http(servers.platform + "/message", fin)
    assert status == 401 and err["error"] == "unauthorized"
    status, err = http(servers.platform + "/message", m.with_new_id(fin), token="wrong")
    assert status == 403
    req = m.new_message(m.COEFFICIENTS_REQUEST, info.solve_pk.fingerprint, system_digest="0" * 64)
    status, err = http(servers.csp + "/message", req)
    assert status == 401
    status, err = http(servers.csp + "/message", m.with_new_id(req), token=TOKEN)
    assert status == 409 and err["error"] == "not_ready"  # nothing solved yet: w' does not exist
    status, err = http(servers.csp + "/message", m.with_new_id(req), token=TOKEN)
    assert status == 409
    status, st = http(servers.csp + "/status")
    assert status == 200 and st["state"] == "ready"



def test_csp_unpacks_one_aggregate_only(servers: Servers) -> None:
    """The CSP is not a decryption oracle: its one unpacking is spent even by a request that
    fails, and any other aggregate is refused afterwards (the platform never finalizes in
    this module, so spending the shared CSP here harms no other test)."""
    info = servers.info
    one = upload_message(info, records=1)  # one record's ciphertexts: the size of an aggregate
    count = len(m.decode_ciphertexts(one["ciphertexts"], info.upload_pk).values)
    forged = [c.value for c in info.upload_pk.encrypt_many([info.upload_pk.n - 1] * count)]
    req = m.new_message(m.UNPACK_REQUEST, info.upload_pk.fingerprint,
                        ciphertexts=m.encode_ciphertexts(forged, info.upload_pk))
    status, err = http(servers.csp + "/message", req)
    assert status == 422 and "spent" in err["message"], err
    status, err = http(servers.csp + "/message", m.with_new_id(req))
    assert status == 409 and err["error"] == "already_unpacked"
    other = dict(m.with_new_id(req), ciphertexts=one["ciphertexts"])
    status, err = http(servers.csp + "/message", other)
    assert status == 409 and err["error"] == "already_unpacked"
    assert http(servers.csp + "/status")[0] == 200

# ---- crash safety: SIGKILL the platform while a provider uploads ----------------------------
def test_platform_killed_mid_upload_loses_and_doubles_nothing(tmp_path: Path, keys: tuple) -> None:
    n, batch = 200, 20
    procs: list[ServerProcess] = []
    provider: subprocess.Popen | None = None
    try:
        procs.append(ServerProcess("CSP", csp_args(4, n), _env()))
        csp = procs[0].wait_url(60)
        port = free_port()
        db = tmp_path / "platform.db"
        platform_args = ["platform", "--port", str(port), "--csp", csp, "--db", str(db)]
        # the platform hangs right after committing its 3rd upload, before answering: the
        # provider is waiting for that acknowledgement when the platform is killed
        procs.append(ServerProcess("platform", platform_args, _env(**{FAULT_ENV: "stall-after-commit:3"})))
        url = procs[1].wait_url(60)
        provider = subprocess.Popen(
            [sys.executable, "-m", "cryptoffload.cli", "ridge", "provider", "--platform", url, "--data",
             f"generate:n={n},seed=3", "--batch", str(batch), "--provider-id", "prov-A", "--no-progress"],
            cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while True:
            status, st = http(url + "/status")
            if st["uploads"] >= 3:
                break
            assert time.monotonic() < deadline and provider.poll() is None, "the provider never reached batch 3"
            time.sleep(0.05)
        time.sleep(0.2)
        procs[1].proc.send_signal(signal.SIGKILL)
        procs[1].proc.wait()
        assert provider.poll() is None, "the provider should still be retrying"
        time.sleep(0.5)  # the provider's retries hit a closed port meanwhile
        procs[1] = ServerProcess("platform", platform_args, _env())
        assert procs[1].wait_url(60) == url
        out, err = provider.communicate(timeout=90)
        assert provider.returncode == 0, err
        assert "already accepted" in out and "1 already accepted" in out, out
        assert "retrying" in err
        status, st = http(url + "/status")
        assert st["records"] == n and st["uploads"] == n // batch, st
        assert (db.stat().st_mode & 0o777) == 0o600
        proc = cli(tmp_path, "ridge", "buyer", "--platform", url, "--csp", csp, "--out", "model.json")
        assert proc.returncode == 0, proc.stderr
        model = json.loads((tmp_path / "model.json").read_text())
        assert model["records"] == n
        data = generate(n, 4, 3)
        params = RidgeParams(d=4, max_records=n, x_bound=data.x_bound, y_bound=data.y_bound)
        assert model["fractions"] == in_process(data.X, data.y, params, keys)
        # after finalisation: no more uploads, and the buyer may ask again (idempotent)
        info = SessionInfo.from_message(http(url + "/params")[1])
        status, err = http(url + "/message", upload_message(info, upload_id="late"))
        assert status == 409 and err["error"] == "finalized"
        # ... but a late retry of an accepted batch is still "already accepted", not an error
        status, ack = http(url + "/message", upload_message(info, records=batch, upload_id="prov-A:0"))
        assert status == 200 and ack["status"] == "already accepted" and ack["records_total"] == n
    finally:
        if provider is not None and provider.poll() is None:
            provider.kill()
            provider.wait()
        for p in reversed(procs):
            p.stop()


# ---- command-line user errors: one line, exit 2 ---------------------------------------------
def test_port_in_use_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        assert_user_error(cli(tmp_path, "ridge", *csp_args(2, 10, port)), f"port {port}", "in use")
        assert_user_error(cli(tmp_path, "ridge", "platform", "--port", str(port), "--csp", "http://127.0.0.1:9",
                              "--db", "p.db"), f"port {port}")


def test_unreachable_peers_are_one_line(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    assert_user_error(cli(tmp_path, "ridge", "provider", "--platform", dead, "--data", "generate:n=10"),
                      "cannot reach the platform", dead)
    assert_user_error(cli(tmp_path, "ridge", "buyer", "--platform", dead, "--csp", dead), "cannot reach the CSP")
    assert_user_error(cli(tmp_path, "ridge", "provider", "--platform", "ftp://x", "--data", "generate:n=10"),
                      "http://")
    assert not list(tmp_path.iterdir())


# ---- pieces in process --------------------------------------------------------------------
def test_batch_round_trip_and_refusals(keys: tuple) -> None:
    pk = keys[0][0]
    values = pk.encrypt_many([1, 2, 3])
    text = m.encode_ciphertexts([c.value for c in values], pk)
    batch = m.decode_ciphertexts(text, pk, count=3)
    assert batch.values == [c.value for c in values]
    with pytest.raises(m.ProtocolError, match="expected 4"):
        m.decode_ciphertexts(text, pk, count=4)
    with pytest.raises(m.ProtocolError) as exc:
        m.decode_ciphertexts(text, keys[1][0])
    assert exc.value.code == "foreign_key"
    with pytest.raises(m.ProtocolError, match="unsupported protocol"):
        m.parse_message(b'{"protocol": "x"}', {m.UPLOAD: None})


def test_store_reloads_aggregate_and_ids(tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    st = PlatformStore(db)
    st.bind_session("a" * 32, "b" * 32, {"d": 2})
    rec = UploadRecord("u1", "p", "m1", 7, 7, 100, "ff")
    st.accept_upload(rec, b"\x01" * 16, 7, 100)
    with pytest.raises(Exception):
        st.accept_upload(rec, b"\x02" * 16, 14, 200)  # same upload id: nothing written
    st.save_unpacking(7, [5, 6], b"\x03" * 8)
    st.close()
    st = PlatformStore(db)
    state = st.load()
    assert state.aggregate == b"\x01" * 16 and state.records == 7 and set(state.uploads) == {"u1"}
    assert "m1" in state.message_ids and state.finalize.state == "unpacking" and state.finalize.masks == [5, 6]
    with pytest.raises(Exception, match="belongs to"):
        st.bind_session("c" * 32, "b" * 32, {"d": 2})
    st.close()
    assert (db.stat().st_mode & 0o777) == 0o600


def _self_signed(tmp: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key (PEM), made with `cryptography`."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = tmp / "cert.pem", tmp / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


def test_csp_over_tls_with_saved_keys(tmp_path: Path) -> None:
    import asyncio

    from cryptoffload.apps.ridge.service import _Peer, _session, fetch_session
    from cryptoffload.errors import ConfigError

    cert, key = _self_signed(tmp_path)
    key_dir = tmp_path / "keys"
    env = _env()
    env.pop(TOKEN_ENV)
    args = csp_args(2, 10, 0, "--key-dir", str(key_dir), "--tls-cert", str(cert), "--tls-key", str(key))

    async def params(url: str, cafile: Path | None) -> SessionInfo:
        async with _session(cafile) as session:
            return await fetch_session(_Peer(session, url, "CSP"))

    fingerprints = []
    for run in range(2):  # the second run reuses the saved keys and token
        server = ServerProcess("CSP", args, env)
        try:
            url = server.wait_url(60)
            assert url.startswith("https://127.0.0.1:")
            info = asyncio.run(params(url, cert))
            fingerprints.append(info.upload_pk.fingerprint)
            assert info.buyer_token_sha256 == m.token_hash((key_dir / "buyer.token").read_text().strip())
            if run == 0:
                with pytest.raises(ConfigError, match="not trusted"):
                    asyncio.run(params(url, None))
        finally:
            server.stop()
        assert any(("reused" if run else "generated") in line for line in server.lines)
    assert fingerprints[0] == fingerprints[1]
    for name in ("upload.key", "solve.key", "buyer.token"):
        assert ((key_dir / name).stat().st_mode & 0o777) == 0o600, name
    assert not any(("p" in json.loads((key_dir / f).read_text())) for f in ("upload.pub", "solve.pub"))
