"""The platform's server: idempotent uploads, refusals with no state change, crash safety
(SIGKILL between committing an upload and answering it)."""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from cli_helpers import assert_user_error
from ridge_helpers import (
    Servers,
    cli,
    csp_args,
    env,
    free_port,
    http,
    in_process,
    records_now,
    upload_message,
)

from cryptoffload.apps.ridge import RidgeParams
from cryptoffload.apps.ridge import messages as m
from cryptoffload.apps.ridge.demo import ServerProcess
from cryptoffload.apps.ridge.messages import SessionInfo
from cryptoffload.apps.ridge.platform import FAULT_ENV
from cryptoffload.crypto.paillier import generate_keypair
from cryptoffload.workloads.ridge_data import generate


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


def test_platform_killed_mid_upload_loses_and_doubles_nothing(tmp_path: Path, keys: tuple) -> None:
    n, batch = 200, 20
    procs: list[ServerProcess] = []
    provider: subprocess.Popen | None = None
    try:
        procs.append(ServerProcess("CSP", csp_args(4, n), env()))
        csp = procs[0].wait_url(60)
        port = free_port()
        db = tmp_path / "platform.db"
        platform_args = ["platform", "--port", str(port), "--csp", csp, "--db", str(db)]
        # the platform hangs right after committing its 3rd upload, before answering: the
        # provider is waiting for that acknowledgement when the platform is killed
        procs.append(ServerProcess("platform", platform_args, env(**{FAULT_ENV: "stall-after-commit:3"})))
        url = procs[1].wait_url(60)
        provider = subprocess.Popen(
            [sys.executable, "-m", "cryptoffload.cli", "ridge", "provider", "--platform", url, "--data",
             f"generate:n={n},seed=3", "--batch", str(batch), "--provider-id", "prov-A", "--no-progress"],
            cwd=tmp_path, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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
        procs[1] = ServerProcess("platform", platform_args, env())
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


def test_port_in_use_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        assert_user_error(cli(tmp_path, "ridge", "platform", "--port", str(port), "--csp", "http://127.0.0.1:9",
                              "--db", "p.db"), f"port {port}")
