"""The CSP's server: one aggregate per key pair, foreign keys refused, TLS, saved keys."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

import pytest
from cli_helpers import assert_user_error
from ridge_helpers import Servers, cli, csp_args, env, http, self_signed, upload_message

from cryptoffload.apps.ridge import messages as m
from cryptoffload.apps.ridge.demo import ServerProcess
from cryptoffload.apps.ridge.messages import SessionInfo
from cryptoffload.apps.ridge.peer import Peer, client_session, fetch_session
from cryptoffload.apps.ridge.tokens import TOKEN_ENV, token_hash
from cryptoffload.crypto.paillier import generate_keypair
from cryptoffload.errors import ConfigError


def test_foreign_key_and_garbage_refused(servers: Servers) -> None:
    foreign_pk = generate_keypair(1024, insecure_study_size=True)[0]
    req = m.new_message(m.UNPACK_REQUEST, foreign_pk.fingerprint, ciphertexts="")
    status, err = http(servers.csp + "/message", req)
    assert status == 400 and err["error"] == "foreign_key"
    status, _ = http(servers.csp + "/message", b"\x00garbage")
    assert status == 400


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


def test_port_in_use_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        assert_user_error(cli(tmp_path, "ridge", *csp_args(2, 10, port)), f"port {port}", "in use")


def test_csp_over_tls_with_saved_keys(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    key_dir = tmp_path / "keys"
    e = env()
    e.pop(TOKEN_ENV)
    args = csp_args(2, 10, 0, "--key-dir", str(key_dir), "--tls-cert", str(cert), "--tls-key", str(key))

    async def params(url: str, cafile: Path | None) -> SessionInfo:
        async with client_session(cafile) as session:
            return await fetch_session(Peer(session, url, "CSP"))

    fingerprints = []
    for run in range(2):  # the second run reuses the saved keys and token
        server = ServerProcess("CSP", args, e)
        try:
            url = server.wait_url(60)
            assert url.startswith("https://127.0.0.1:")
            info = asyncio.run(params(url, cert))
            fingerprints.append(info.upload_pk.fingerprint)
            assert info.buyer_token_sha256 == token_hash((key_dir / "buyer.token").read_text().strip())
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
