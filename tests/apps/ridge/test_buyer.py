"""The buyer: only the buyer token opens finalize, R, r and w'; unreachable peers are one line."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import assert_user_error
from ridge_helpers import TOKEN, Servers, cli, free_port, http

from cryptoffload.apps.ridge import messages as m


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


def test_unreachable_peers_are_one_line(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    assert_user_error(cli(tmp_path, "ridge", "buyer", "--platform", dead, "--csp", dead), "cannot reach the CSP")
    assert not list(tmp_path.iterdir())
