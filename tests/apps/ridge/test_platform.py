"""The platform's server: authenticated, idempotent uploads; every refusal changes nothing
(issue 12, attacks 3 and 4); crash safety (SIGKILL between committing an upload and answering).
"""

from __future__ import annotations

import base64
import http.client as httpclient
import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from cli_helpers import assert_user_error
from ridge_helpers import (
    BUYER_TOKEN,
    PLATFORM_TOKEN,
    PROVIDERS,
    Parties,
    cli,
    csp_args,
    env,
    free_port,
    hostile_bodies,
    http,
    in_process,
    platform_args,
    records_now,
    upload_message,
)

from cryptoffload.apps.ridge import RidgeParams
from cryptoffload.apps.ridge import messages as m
from cryptoffload.apps.ridge.demo import ServerProcess
from cryptoffload.apps.ridge.messages import SessionInfo
from cryptoffload.apps.ridge.platform import FAULT_ENV
from cryptoffload.crypto.paillier import ENCRYPTION, generate_keypair
from cryptoffload.workloads.ridge_data import generate

ALICE = PROVIDERS["alice"]


def test_replay_is_409_and_the_server_keeps_answering(parties: Parties) -> None:
    p = parties
    msg = upload_message(p.info, upload_id="alice:replay")
    status, ack = http(p.platform + "/message", msg, ALICE)
    assert status == 200 and ack["status"] == "accepted" and ack["type"] == m.UPLOAD_ACK
    status, err = http(p.platform + "/message", msg, ALICE)
    assert status == 409 and err["type"] == "error" and err["error"] == "replayed_message"
    # the same id in upper case is not a new id: message ids must be canonical
    status, err = http(p.platform + "/message", dict(msg, message_id=msg["message_id"].upper()), ALICE)
    assert status == 400 and err["error"] == "malformed"
    status, err = http(p.platform + "/message", dict(msg, message_id="{" + msg["message_id"] + "}"), ALICE)
    assert status == 400
    assert records_now(p.platform) == 5
    # a retry (new message id, same upload id) is answered "already accepted", not counted again
    status, ack = http(p.platform + "/message", m.with_new_id(msg), ALICE)
    assert status == 200 and ack["status"] == "already accepted"
    assert records_now(p.platform) == 5
    # the same upload id for another upload is a conflict
    other = upload_message(p.info, records=3, upload_id="alice:replay")
    status, err = http(p.platform + "/message", other, ALICE)
    assert status == 409 and err["error"] == "upload_id_conflict"


def test_uploads_need_the_providers_own_token_and_ids(parties: Parties) -> None:
    """Attack 3: uploads were unauthenticated. Now only a registered provider uploads, under
    its own name, with upload ids of its own (no squatting another provider's ids)."""
    p = parties
    before = p.snapshot()
    msg = upload_message(p.info, upload_id="alice:1")
    assert http(p.platform + "/message", msg)[0] == 401
    assert http(p.platform + "/message", m.with_new_id(msg), "alice.not-the-real-token-0123456789")[0] == 403
    assert http(p.platform + "/message", m.with_new_id(msg), BUYER_TOKEN)[0] == 403
    assert http(p.platform + "/message", m.with_new_id(msg), PROVIDERS["bob"])[0] == 403   # bob posing as alice
    squat = upload_message(p.info, upload_id="bob:1", provider_id="alice")
    status, err = http(p.platform + "/message", squat, ALICE)
    assert status == 400 and "upload_id" in err["message"]
    for bad_id in ("alice:", "alice:a/b", "alice", "alice:" + "x" * 65):
        assert http(p.platform + "/message", upload_message(p.info, upload_id=bad_id), ALICE)[0] == 400, bad_id
    # the buyer's messages are the buyer's
    fin = m.new_message(m.FINALIZE, p.info.upload_pk.fingerprint)
    assert http(p.platform + "/message", fin, ALICE)[0] == 403
    assert p.snapshot() == before


def test_record_counts_are_charged_against_the_guard_bits(tmp_path: Path, keys: tuple) -> None:
    """Attack 3: ``records: 0`` with 100,000 vectors was accepted, bypassing max_records. Now
    records >= 1, and vectors == records (per-record) or 1 (per-provider)."""
    p = Parties(tmp_path, keys, max_records=12, max_records_per_provider=12)
    try:
        before = p.snapshot()
        msg = upload_message(p.info, records=5)
        for records, vectors in ((0, 5), (1, 5), (4, 5), (13, 1)):
            bad = dict(m.with_new_id(msg), records=records, vectors=vectors)
            status, err = http(p.platform + "/message", bad, ALICE)
            assert status == 400, (records, vectors, err)
        # 100,000 vectors: refused by the route's body limit or the vector bound, never counted
        huge = dict(m.with_new_id(msg), records=0, vectors=100_000)
        assert http(p.platform + "/message", huge, ALICE)[0] == 400
        assert p.snapshot() == before
        assert http(p.platform + "/message", msg, ALICE)[0] == 200                       # 5 records
        one = upload_message(p.info, records=1, upload_id="alice:pp")
        pp = dict(one, records=7, vectors=1)                                             # per-provider: 1 vector
        assert http(p.platform + "/message", pp, ALICE)[0] == 200                        # 12 records
        status, err = http(p.platform + "/message", upload_message(p.info, records=1, upload_id="alice:3"), ALICE)
        assert status == 422 and err["error"] == "too_many_records"
        assert records_now(p.platform) == 12
    finally:
        p.stop()


def test_ciphertexts_under_another_key_are_refused(parties: Parties) -> None:
    """Attack 3: a foreign key's ciphertexts with this key's fingerprint in the header were
    folded in. Values at or above n^2, or sharing a factor with n, are refused; the fingerprint
    in the envelope and in the batch must be this session's."""
    p = parties
    before = p.snapshot()
    foreign_pk = generate_keypair(1024, insecure_study_size=True)[0]
    msg = upload_message(p.info, upload_id="alice:f1")
    status, err = http(p.platform + "/message", dict(msg, key_fingerprint=foreign_pk.fingerprint.hex()), ALICE)
    assert status == 400 and err["error"] == "foreign_key", err
    count = len(m.decode_ciphertexts(msg["ciphertexts"], p.info.upload_pk).values)
    # a larger foreign modulus: its ciphertexts mostly lie above this n^2
    big = generate_keypair(1100, insecure_study_size=True)[0]
    cts = [c.value for c in ENCRYPTION.encrypt_many(big, [1] * count)]
    raw = base64.b64decode(m.encode_ciphertexts([1] * count, p.info.upload_pk))[:27]
    size = m.value_bytes(p.info.upload_pk)
    body = b"".join(min(c, p.info.upload_pk.nsquare + 1).to_bytes(size, "little") for c in cts)
    status, err = http(p.platform + "/message", dict(m.with_new_id(msg), ciphertexts=base64.b64encode(raw + body)
                                                     .decode()), ALICE)
    assert status == 400 and "n^2" in err["message"], err
    # a non-unit (a multiple of a prime factor of n): refused by the bulk gcd check
    n = p.info.upload_pk.n
    vals = m.decode_ciphertexts(msg["ciphertexts"], p.info.upload_pk).values
    vals[3] = n  # gcd(n, n) = n
    status, err = http(p.platform + "/message", dict(m.with_new_id(msg), ciphertexts=m.encode_ciphertexts(
        vals, p.info.upload_pk)), ALICE)
    assert status == 400 and "not a ciphertext" in err["message"], err
    assert p.snapshot() == before


def test_truncated_and_garbled_bodies_are_400(parties: Parties) -> None:
    p = parties
    before = p.snapshot()
    msg = upload_message(p.info, upload_id="alice:t1")
    body = m.dumps(msg)
    status, err = http(p.platform + "/message", body[:len(body) // 2], ALICE)
    assert status == 400 and err["error"] == "malformed"
    raw = base64.b64decode(msg["ciphertexts"])
    bad = dict(m.with_new_id(msg), ciphertexts=base64.b64encode(raw[:-10]).decode())
    status, err = http(p.platform + "/message", bad, ALICE)
    assert status == 400 and "truncated" in err["message"]
    size = m.value_bytes(p.info.upload_pk)
    zero = raw[:27] + bytes(size) + raw[27 + size:]
    status, err = http(p.platform + "/message", dict(m.with_new_id(msg), ciphertexts=base64.b64encode(zero).decode()),
                       ALICE)
    assert status == 400, err
    status, err = http(p.platform + "/message", dict(m.with_new_id(msg), ciphertexts="!!not base64!!"), ALICE)
    assert status == 400
    status, err = http(p.platform + "/message", dict(m.with_new_id(msg), protocol="cryptoffload-ridge/2"), ALICE)
    assert status == 400 and err["error"] == "protocol_version"
    status, err = http(p.platform + "/message", dict(m.with_new_id(msg), type="solve_request"), ALICE)
    assert status == 400 and err["error"] == "unknown_type"
    status, err = http(p.platform + "/message", dict(msg, message_id="not-a-uuid"), ALICE)
    assert status == 400 and err["error"] == "malformed"
    status, err = http(p.platform + "/nowhere")
    assert status == 404 and err["type"] == "error"
    assert p.snapshot() == before  # nothing refused was counted


def _declared(url: str, path: str, length: int, token: str | None, method: str = "POST") -> tuple[int, dict]:
    """A request declaring ``length`` body bytes and sending none: a server that read before
    refusing would wait for them."""
    host, port = url.split("//")[1].split(":")
    conn = httpclient.HTTPConnection(host, int(port), timeout=30)
    conn.putrequest(method, path)
    conn.putheader("Content-Length", str(length))
    if token:
        conn.putheader("Authorization", f"Bearer {token}")
    conn.endheaders()
    resp = conn.getresponse()
    out = resp.status, json.loads(resp.read())
    conn.close()
    return out


def test_bodies_are_bounded_per_route_and_per_sender(parties: Parties) -> None:
    """Attack 4: bodies up to 256 MiB were read and parsed as JSON on the event loop. Now each
    route takes what it expects, refused on the headers alone; a stranger gets no byte read."""
    p = parties
    before = p.snapshot()
    limit = p.platform_service.upload_limit
    assert _declared(p.platform, "/message", 200 * 2**20, ALICE)[0] == 413
    assert _declared(p.platform, "/message", limit + 1, ALICE)[0] == 413
    assert _declared(p.platform, "/message", 1000, None)[0] == 401                  # no token: nothing read
    assert _declared(p.platform, "/message", 100_000, BUYER_TOKEN)[0] == 413        # a buyer's messages are small
    assert _declared(p.platform, "/status", 10, None, "GET")[0] == 413              # a status route takes no body
    assert _declared(p.csp, "/message", 200 * 2**20, None)[0] == 413
    assert _declared(p.csp, "/params", 5, None, "GET")[0] == 413
    assert p.snapshot() == before
    assert http(p.platform + "/status")[0] == 200


def test_platform_killed_mid_upload_loses_and_doubles_nothing(tmp_path: Path, keys: tuple) -> None:
    """SIGKILL of the platform between committing an upload and answering it: the provider
    retries, the upload is "already accepted", nothing is lost or counted twice. Every party
    is a real process talking TLS with tokens, as a deployment would run them."""
    n, batch = 200, 20
    procs: list[ServerProcess] = []
    provider: subprocess.Popen | None = None
    csp_dir, token_dir = tmp_path / "csp", tmp_path / "platform-tokens"
    try:
        procs.append(ServerProcess("CSP", csp_args(4, n, 0, "--key-dir", str(csp_dir)), env()))
        csp = procs[0].wait_url(60)
        port = free_port()
        db = tmp_path / "platform.db"
        pargs = platform_args(csp, db, csp_dir, token_dir, port, "--cafile", str(csp_dir / "cert.pem"))
        # the platform hangs right after committing its 3rd upload, before answering: the
        # provider is waiting for that acknowledgement when the platform is killed
        procs.append(ServerProcess("platform", pargs, env(**{FAULT_ENV: "stall-after-commit:3"})))
        url = procs[1].wait_url(60)
        certs = ["--cafile", str(csp_dir / "cert.pem"), "--cafile", str(token_dir / "cert.pem")]
        provider = subprocess.Popen(
            [sys.executable, "-m", "cryptoffload.cli", "ridge", "provider", "--platform", url, "--data",
             f"generate:n={n},seed=3", "--batch", str(batch), "--token-file", str(token_dir / "prov-A.token"),
             "--csp", csp, *certs, "--insecure-study-size", "--no-progress"],
            cwd=tmp_path, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        cert = token_dir / "cert.pem"
        token = (token_dir / "prov-A.token").read_text().strip()
        deadline = time.monotonic() + 60
        while True:
            status, st = http(url + "/status", token=token, cafile=cert)
            if st["uploads"] >= 3:
                break
            assert time.monotonic() < deadline and provider.poll() is None, \
                f"the provider never reached batch 3: {provider.stderr.read() if provider.poll() is not None else ''}"
            time.sleep(0.05)
        time.sleep(0.2)
        procs[1].proc.send_signal(signal.SIGKILL)
        procs[1].proc.wait()
        assert provider.poll() is None, "the provider should still be retrying"
        time.sleep(0.5)  # the provider's retries hit a closed port meanwhile
        procs[1] = ServerProcess("platform", pargs, env())
        assert procs[1].wait_url(60) == url
        out, err = provider.communicate(timeout=90)
        assert provider.returncode == 0, err
        assert "already accepted" in out and "1 already accepted" in out, out
        assert "retrying" in err
        status, st = http(url + "/status", token=token, cafile=cert)
        assert st["records"] == n and st["uploads"] == n // batch, st
        assert (db.stat().st_mode & 0o777) == 0o600
        proc = cli(tmp_path, "ridge", "buyer", "--platform", url, "--csp", csp, "--out", "model.json",
                   "--buyer-token-file", str(csp_dir / "buyer.token"), *certs)
        assert proc.returncode == 0, proc.stderr
        model = json.loads((tmp_path / "model.json").read_text())
        assert model["records"] == n
        data = generate(n, 4, 3)
        params = RidgeParams(d=4, max_records=n, x_bound=data.x_bound, y_bound=data.y_bound)
        assert model["fractions"] == in_process(data.X, data.y, params, keys)
        # after finalisation: no more uploads, and the buyer may ask again (idempotent)
        info = SessionInfo.from_message(http(url + "/params", cafile=cert)[1])
        late = upload_message(info, upload_id="prov-A:late", provider_id="prov-A")
        status, err = http(url + "/message", late, token, cafile=cert)
        assert status == 409 and err["error"] == "finalized"
        # ... but a late retry of an accepted batch is still "already accepted", not an error
        retry = upload_message(info, records=batch, upload_id="prov-A:0", provider_id="prov-A")
        status, ack = http(url + "/message", retry, token, cafile=cert)
        assert status == 200 and ack["status"] == "already accepted" and ack["records_total"] == n
    finally:
        if provider is not None and provider.poll() is None:
            provider.kill()
            provider.wait()
        for p in reversed(procs):
            p.stop()


def test_port_in_use_is_one_line(tmp_path: Path) -> None:
    token = tmp_path / "platform.token"
    token.write_text("platform.0123456789abcdef0123456789")
    token.chmod(0o600)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        assert_user_error(cli(tmp_path, "ridge", "platform", "--port", str(port), "--csp", "http://127.0.0.1:9",
                              "--db", "p.db", "--csp-token-file", str(token), "--providers", "a",
                              "--insecure-http"), f"port {port}")
    token.chmod(0o644)
    assert_user_error(cli(tmp_path, "ridge", "platform", "--port", "0", "--csp", "https://127.0.0.1:9", "--db", "p.db",
                          "--csp-token-file", str(token), "--providers", "a"), "chmod 600")
    assert_user_error(cli(tmp_path, "ridge", "platform", "--port", "0", "--csp", "http://127.0.0.1:9", "--db", "p.db",
                          "--csp-token-file", str(token), "--providers", "a"), "plain http")


def test_hostile_json_bodies_are_400_json_errors_and_change_nothing(parties: Parties) -> None:
    p = parties
    before = p.snapshot()
    for name, body in hostile_bodies(p.info).items():
        status, err = http(p.platform + "/message", body, ALICE)
        assert status == 400 and err["type"] == "error" and err["error"] == "malformed", (name, err)
        assert "not acceptable JSON" in err["message"], (name, err)
    assert p.snapshot() == before
    assert http(p.platform + "/message", upload_message(p.info, upload_id="alice:h2"), ALICE)[0] == 200  # serving


def test_a_provider_declaring_more_records_than_it_holds_uses_up_its_own_share_only(tmp_path: Path,
                                                                                   keys: tuple) -> None:
    """Issue 22, attack 1: one per-provider upload declaring max_records records (one vector: a
    count nobody can check inside a ciphertext) made every other provider's upload fail. Now a
    provider charges at most its share (ceil(max_records / providers)); beyond it, 422 and
    nothing changes; the others keep theirs."""
    p = Parties(tmp_path, keys, max_records=12)       # alice, bob, carol: 4 records each
    try:
        assert p.platform_service.quota == 4
        before = p.snapshot()
        liar = dict(upload_message(p.info, records=1, upload_id="alice:all"), records=12, vectors=1)
        status, err = http(p.platform + "/message", liar, ALICE)
        assert status == 422 and err["error"] == "provider_quota", err
        assert p.snapshot() == before
        status, ack = http(p.platform + "/message", dict(m.with_new_id(liar), records=4), ALICE)  # its own share
        assert status == 200 and ack["records_total"] == 4
        status, err = http(p.platform + "/message", upload_message(p.info, records=1, upload_id="alice:2"), ALICE)
        assert status == 422 and err["error"] == "provider_quota"
        for name in ("bob", "carol"):                 # the others are not starved
            msg = upload_message(p.info, records=4, upload_id=f"{name}:1", provider_id=name)
            status, ack = http(p.platform + "/message", msg, PROVIDERS[name])
            assert status == 200 and ack["records_total"] == 4, ack   # its own count, not the others'
        assert records_now(p.platform) == 12
    finally:
        p.stop()


def test_a_model_needs_min_providers(parties: Parties) -> None:
    """Attack 4: the buyer could finalize after one provider's upload and so read that
    provider's own model. Now finalize needs uploads from ``min_providers`` (2) providers;
    before that it is refused (409) and nothing is committed or spent."""
    p = parties
    assert http(p.platform + "/message", upload_message(p.info, records=5), ALICE)[0] == 200
    before = p.snapshot()
    fin = m.new_message(m.FINALIZE, p.info.upload_pk.fingerprint)
    status, err = http(p.platform + "/message", fin, BUYER_TOKEN)
    assert status == 409 and err["error"] == "too_few_providers", err
    assert "at least 2" in err["message"]
    assert http(p.platform + "/message", upload_message(p.info, records=3, upload_id="alice:2"), ALICE)[0] == 200
    status, err = http(p.platform + "/message", m.with_new_id(fin), BUYER_TOKEN)   # more data, still one provider
    assert status == 409 and err["error"] == "too_few_providers"
    assert p.snapshot()[4:6] == before[4:6]                                          # collecting, CSP untouched
    bob = upload_message(p.info, records=2, upload_id="bob:1", provider_id="bob")
    assert http(p.platform + "/message", bob, PROVIDERS["bob"])[0] == 200
    status, done = http(p.platform + "/message", m.with_new_id(fin), BUYER_TOKEN)
    assert status == 200 and done["state"] == "finalized" and done["providers"] == 2 and done["records"] == 10


def test_status_tells_each_role_only_what_it_may_know(parties: Parties) -> None:
    """Attack 4: ``/status`` without a token told anyone every provider's record and upload
    counts. Now: no token, the state alone; a provider, its own counts; the buyer, the totals;
    a wrong token, 403. The CSP's counts need the platform's or the buyer's token."""
    p = parties
    assert http(p.platform + "/message", upload_message(p.info, records=5), ALICE)[0] == 200
    bob = upload_message(p.info, records=3, upload_id="bob:1", provider_id="bob")
    assert http(p.platform + "/message", bob, PROVIDERS["bob"])[0] == 200
    status, st = http(p.platform + "/status")
    assert status == 200 and st["state"] == "collecting"
    assert not {"records", "uploads", "bytes", "providers", "provider_id"} & set(st), st
    st = http(p.platform + "/status", token=PROVIDERS["bob"])[1]
    assert (st["provider_id"], st["records"], st["uploads"]) == ("bob", 3, 1) and "providers" not in st
    st = http(p.platform + "/status", token=PROVIDERS["carol"])[1]
    assert (st["records"], st["uploads"]) == (0, 0)
    st = http(p.platform + "/status", token=BUYER_TOKEN)[1]
    assert (st["records"], st["uploads"], st["providers"], st["min_providers"]) == (8, 2, 2, 2)
    assert http(p.platform + "/status", token="alice.not-the-real-token-0123456789")[0] == 403
    assert "records" not in http(p.csp + "/status")[1]
    assert http(p.csp + "/status", token=PLATFORM_TOKEN)[1]["records"] is None       # nothing committed yet
