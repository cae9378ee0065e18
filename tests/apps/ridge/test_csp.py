"""The CSP's server: it decrypts for the authenticated platform only, only the aggregate the
platform committed to, once per key pair, across restarts (issue 12, attack 1)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
from pathlib import Path

import pytest
from cli_helpers import assert_user_error
from ridge_helpers import (
    BUYER_TOKEN,
    in_process,
    overflow_message,
    PLATFORM_TOKEN,
    PROVIDERS,
    Parties,
    cli,
    csp_args,
    csp_credentials_for_tests,
    env,
    hostile_bodies,
    http,
    upload_message,
)

from cryptoffload.apps._credentials import token_hash
from cryptoffload.apps._http import ServerThread
from cryptoffload.apps.ridge import RidgeParams
from cryptoffload.apps.ridge import messages as m
from cryptoffload.apps.ridge.buyer import BuyerResult, run_buyer
from cryptoffload.apps.ridge.provider import run_provider
from cryptoffload.workloads.ridge_data import generate
from cryptoffload.apps.ridge.csp import CspService
from cryptoffload.apps.ridge.csp_store import CspStore
from cryptoffload.apps.ridge.demo import ServerProcess
from cryptoffload.apps.ridge.messages import SessionInfo
from cryptoffload.apps.ridge.peer import Peer, client_session, fetch_session
from cryptoffload.apps.ridge.protocol import Csp
from cryptoffload.crypto.paillier import ENCRYPTION, generate_keypair
from cryptoffload.errors import ConfigError


def _unpack_request(p: Parties, ciphertexts: str) -> dict:
    return m.new_message(m.UNPACK_REQUEST, p.info.upload_pk.fingerprint, ciphertexts=ciphertexts)


def _commit(p: Parties, batch_text: str, **over: object) -> dict:
    digest = m.decode_ciphertexts(batch_text, p.info.upload_pk).digest
    fields = dict(aggregate_sha256=digest, uploads_sha256="0" * 64, records=2, uploads=2, providers=2,
                  contributions=[1, 1])
    fields.update(over)
    return m.new_message(m.COMMIT, p.info.upload_pk.fingerprint, **fields)


def _one_upload_as_aggregate(p: Parties) -> str:
    """One provider's upload plus the public bias: what a buyer who captured it would send."""
    return upload_message(p.info, records=1)["ciphertexts"]


def _two(p: Parties, value: int) -> str:
    """Two contributions' worth of ciphertexts of ``value`` (what a commitment to two names)."""
    pk = p.info.upload_pk
    return m.encode_ciphertexts([c.value for c in ENCRYPTION.encrypt_many(pk, [value] * (2 * p.csp_service.plaintexts))], pk)


def test_buyer_and_strangers_cannot_route_an_upload_through_the_csp(parties: Parties) -> None:
    """Attack 1: a buyer who captured one provider's upload sent it as an unpack request, then
    a forged system as a solve request, and read the provider's X^T Y. Now unpack, commit and
    solve are the platform's alone; nothing is spent by the attempts."""
    p = parties
    captured = _one_upload_as_aggregate(p)
    before = p.snapshot()
    for token, status in ((None, 401), ("stranger.0123456789abcdef0123456789", 403), (BUYER_TOKEN, 403),
                          (PROVIDERS["alice"], 403)):
        assert http(p.csp + "/message", _unpack_request(p, captured), token)[0] == status
        assert http(p.csp + "/message", _commit(p, captured), token)[0] == status
        solve = m.new_message(m.SOLVE_REQUEST, p.info.solve_pk.fingerprint, ciphertexts="")
        assert http(p.csp + "/message", solve, token)[0] == status
    assert p.snapshot() == before
    assert http(p.csp + "/status")[1]["state"] == "ready"


def test_malformed_and_uncommitted_requests_spend_nothing(parties: Parties) -> None:
    """Attack 1: one malformed request used to spend the one-shot unpack, so every later buyer
    got 409. Now the CSP unpacks only what the platform committed to; anything else, even
    from the platform, is refused before anything is spent."""
    p = parties
    captured = _one_upload_as_aggregate(p)
    assert http(p.csp + "/message", b"\x00garbage", PLATFORM_TOKEN)[0] == 400
    status, err = http(p.csp + "/message", _unpack_request(p, captured), PLATFORM_TOKEN)
    assert status == 409 and err["error"] == "not_committed"
    status, err = http(p.csp + "/message", _unpack_request(p, "!!not base64!!"), PLATFORM_TOKEN)
    assert status == 400
    for bad in (dict(records=0), dict(providers=3), dict(aggregate_sha256="X" * 64), dict(uploads="1"),
                dict(contributions=[2, 1]), dict(contributions=[2]), dict(contributions="1,1"),
                dict(contributions=[0, 2])):
        assert http(p.csp + "/message", _commit(p, captured, **bad), PLATFORM_TOKEN)[0] == 400, bad
    assert http(p.csp + "/status")[1]["state"] == "ready"
    # committed to one aggregate, sent another: refused, nothing spent
    other = upload_message(p.info, records=1, seed=99)["ciphertexts"]
    assert http(p.csp + "/message", _commit(p, captured), PLATFORM_TOKEN)[0] == 200
    assert http(p.csp + "/message", _commit(p, captured), PLATFORM_TOKEN)[0] == 200      # idempotent
    status, err = http(p.csp + "/message", _commit(p, other), PLATFORM_TOKEN)
    assert status == 409 and err["error"] == "already_committed"
    status, err = http(p.csp + "/message", _unpack_request(p, other), PLATFORM_TOKEN)
    assert status == 409 and err["error"] == "not_committed"
    assert http(p.csp + "/status")[1]["state"] == "committed"
    assert p.csp_service.store.step("unpack") is None


def test_the_one_unpack_stays_spent_across_a_restart(tmp_path: Path, keys: tuple) -> None:
    """Attack 1: a restart of the CSP (same keys) reset the one-shot state. Now it is in the
    CSP's SQLite file (0600) and a restarted CSP still refuses a second aggregate."""
    params = RidgeParams(d=4, max_records=1000, y_bound=10.0)
    db = tmp_path / "csp.db"

    def start() -> tuple[CspService, ServerThread, str]:
        service = CspService(Csp(params, *keys), csp_credentials_for_tests(), CspStore(db))
        thread = ServerThread(service.app)
        return service, thread, thread.start()

    service, thread, url = start()
    info = service.info
    p = type("P", (), {"info": info, "csp_service": service})
    forged = _two(p, p.info.upload_pk.n - 1)
    assert http(url + "/message", _commit(p, forged), PLATFORM_TOKEN)[0] == 200
    status, err = http(url + "/message", _unpack_request(p, forged), PLATFORM_TOKEN)
    assert status == 422 and "spent" in err["message"], err
    thread.stop()
    service.store.close()
    assert (db.stat().st_mode & 0o777) == 0o600
    service, thread, url = start()
    try:
        assert http(url + "/status")[1]["state"] == "unpacked"
        status, err = http(url + "/message", _unpack_request(p, forged), PLATFORM_TOKEN)
        assert status == 409 and err["error"] == "already_unpacked"
        other = _two(p, 1)
        status, err = http(url + "/message", _commit(p, other), PLATFORM_TOKEN)
        assert status == 409 and err["error"] == "already_committed"
        # a replayed message id stays refused after the restart too
        first = _unpack_request(p, forged)
        http(url + "/message", first, PLATFORM_TOKEN)
    finally:
        thread.stop()
        service.store.close()
    service, thread, url = start()
    try:
        status, err = http(url + "/message", first, PLATFORM_TOKEN)
        assert status == 409 and err["error"] == "replayed_message"
    finally:
        thread.stop()
        service.store.close()


def test_refusals_are_logged_without_secrets(parties: Parties, caplog: pytest.LogCaptureFixture) -> None:
    p = parties
    captured = _one_upload_as_aggregate(p)
    with caplog.at_level(logging.WARNING):
        http(p.csp + "/message", _unpack_request(p, captured), BUYER_TOKEN)
        http(p.csp + "/message", _unpack_request(p, captured), "wrong-token-0123456789abcdef")
    lines = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert len(lines) >= 2 and any("403" in ln for ln in lines)
    text = "\n".join(lines)
    assert BUYER_TOKEN not in text and "wrong-token" not in text and captured[:40] not in text


def test_foreign_key_refused(parties: Parties) -> None:
    foreign_pk = generate_keypair(1024, insecure_study_size=True)[0]
    req = m.new_message(m.UNPACK_REQUEST, foreign_pk.fingerprint, ciphertexts="")
    status, err = http(parties.csp + "/message", req, PLATFORM_TOKEN)
    assert status == 400 and err["error"] == "foreign_key"


def test_port_in_use_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        assert_user_error(cli(tmp_path, "ridge", *csp_args(2, 10, port)), f"port {port}", "in use")


def test_tls_by_default_saved_keys_and_no_secret_on_stdout(tmp_path: Path) -> None:
    """The CSP serves https with a certificate of its own unless told otherwise; its tokens are
    0600 files whose paths (never contents) it prints; keys and tokens are reused on restart."""
    key_dir = tmp_path / "keys"
    args = csp_args(2, 10, 0, "--key-dir", str(key_dir))

    async def params(url: str, cafile: Path | None) -> SessionInfo:
        async with client_session(cafile) as session:
            return await fetch_session(Peer(session, url, "CSP"))

    fingerprints = []
    for run in range(2):  # the second run reuses the saved keys, tokens and certificate
        server = ServerProcess("CSP", args, env())
        try:
            url = server.wait_url(60)
            assert url.startswith("https://127.0.0.1:")
            info = asyncio.run(params(url, key_dir / "cert.pem"))
            fingerprints.append(info.fingerprint)
            assert info.buyer_token_sha256 == token_hash((key_dir / "buyer.token").read_text().strip())
            if run == 0:
                with pytest.raises(ConfigError, match="not trusted"):
                    asyncio.run(params(url, None))
        finally:
            server.stop()
        out = "\n".join(server.lines)
        assert ("reused" if run else "generated") in out and info.fingerprint in out
        for name in ("buyer.token", "platform.token"):
            assert (key_dir / name).read_text().strip() not in out
    assert fingerprints[0] == fingerprints[1]
    for name in ("upload.key", "solve.key", "buyer.token", "platform.token", "csp.db", "key.pem"):
        assert ((key_dir / name).stat().st_mode & 0o777) == 0o600, name
    assert (key_dir.stat().st_mode & 0o777) == 0o700
    assert not any(("p" in json.loads((key_dir / f).read_text())) for f in ("upload.pub", "solve.pub"))


def test_without_key_dir_tokens_go_to_a_private_folder_removed_at_exit(tmp_path: Path) -> None:
    server = ServerProcess("CSP", csp_args(2, 10, 0, "--insecure-http"), env())
    try:
        assert server.wait_url(60).startswith("http://")
        line = next(ln for ln in server.lines if "tokens in" in ln)
        folder = Path(line.split("tokens in ", 1)[1].split(" ", 1)[0])
        assert (folder.stat().st_mode & 0o777) == 0o700
        token = (folder / "buyer.token").read_text().strip()
        assert ((folder / "buyer.token").stat().st_mode & 0o777) == 0o600
        assert token not in "\n".join(server.lines)
    finally:
        server.stop()
    assert not folder.exists()
    assert not any(os.scandir(tmp_path))


def test_hostile_json_bodies_are_400_json_errors_and_spend_nothing(parties: Parties) -> None:
    p = parties
    before = p.snapshot()
    for name, body in hostile_bodies(p.info).items():
        status, err = http(p.csp + "/message", body, PLATFORM_TOKEN)
        assert status == 400 and err["type"] == "error" and err["error"] == "malformed", (name, err)
    assert p.snapshot() == before and http(p.csp + "/status")[1]["state"] == "ready"


def test_an_overflowing_contribution_is_left_out_and_the_others_buy_their_model(parties: Parties,
                                                                                keys: tuple) -> None:
    """Issue 22, attack 2: one upload whose packed values overflow made the one-shot unpack fail
    for good, and every provider's data was lost to the trade. Now each provider's aggregate is
    a contribution of its own: the CSP leaves out the one whose masked fields reach their check
    bits, the others' model is bought, and the buyer is told who was left out."""
    p = parties
    data = generate(40, 4, 21)
    status, ack = http(p.platform + "/message", overflow_message(p.info), PROVIDERS["carol"])
    assert status == 200, ack                # ciphertexts: the platform cannot see the overflow

    async def run() -> BuyerResult:
        for k, name in enumerate(("alice", "bob")):
            await run_provider(p.platform, (data.X, data.y), token=PROVIDERS[name], csp_url=p.csp, batch=8,
                               part=(k + 1, 2), insecure_study_size=True, insecure_http=True)
        return await run_buyer(p.platform, p.csp, BUYER_TOKEN, insecure_http=True)

    result = asyncio.run(run())
    assert result.excluded_providers == ["carol"] and result.records == 40
    assert [str(f) for f in result.model.fractions] == in_process(data.X, data.y, p.params, keys)
    st = http(p.csp + "/status", token=BUYER_TOKEN)[1]
    assert st["state"] == "solved" and st["providers"] == 3            # committed: three contributions


def test_too_few_contributions_in_range_fail_the_unpack_without_revealing_one(parties: Parties) -> None:
    """Attack 2 with two providers, one overflowing: one contribution is left, below
    min_providers, so no model can be sold (it would be that provider's own). The unpack fails
    with the contract's error and stays spent (a retry could probe the ranges); nothing of the
    honest provider is decrypted alone."""
    p = parties
    assert http(p.platform + "/message", overflow_message(p.info), PROVIDERS["carol"])[0] == 200
    assert http(p.platform + "/message", upload_message(p.info, records=5), PROVIDERS["alice"])[0] == 200
    fin = m.new_message(m.FINALIZE, p.info.upload_pk.fingerprint)
    status, err = http(p.platform + "/message", fin, BUYER_TOKEN)
    assert status == 502 and err["error"] == "csp_refused" and "1 of 2 contributions" in err["message"], err
    assert p.csp_service.store.step("unpack").failed and p.csp_service.store.step("solve") is None
    status, err = http(p.platform + "/message", m.with_new_id(fin), BUYER_TOKEN)
    assert status == 502 and "already failed" in err["message"]


def test_the_csp_refuses_a_commitment_to_fewer_than_min_providers(parties: Parties) -> None:
    """Attack 4: a model of one provider's data is that provider's model. The CSP, not only the
    platform, refuses an aggregate of fewer than ``min_providers`` contributions."""
    p = parties
    captured = _one_upload_as_aggregate(p)
    status, err = http(p.csp + "/message", _commit(p, captured, providers=1, uploads=1, records=1, contributions=[1]),
                       PLATFORM_TOKEN)
    assert status == 422 and err["error"] == "too_few_providers", err
    assert http(p.csp + "/status")[1]["state"] == "ready"
    assert p.csp_service.store.step("commitment") is None
