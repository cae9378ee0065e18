"""The buyer: only its token opens finalize, R, r and w'; the whole protocol through the real
party code (threads of this process) equals the in-process protocol exactly."""

from __future__ import annotations

import asyncio
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
    http,
    in_process,
    platform_args,
)

from cryptoffload.apps.ridge import messages as m
from cryptoffload.apps.ridge.buyer import run_buyer
from cryptoffload.apps.ridge.demo import ServerProcess
from cryptoffload.apps.ridge.provider import run_provider
from cryptoffload.workloads.ridge_data import generate


def test_buyer_only_messages_need_the_token(parties: Parties) -> None:
    p = parties
    info = p.info
    fin = m.new_message(m.FINALIZE, info.upload_pk.fingerprint)
    status, err = http(p.platform + "/message", fin)
    assert status == 401 and err["error"] == "unauthorized"
    assert http(p.platform + "/message", m.with_new_id(fin), "wrong-token-0123456789")[0] == 403
    assert http(p.platform + "/message", m.with_new_id(fin), PROVIDERS["alice"])[0] == 403
    status, err = http(p.platform + "/message", m.with_new_id(fin), BUYER_TOKEN)
    assert status == 409 and err["error"] == "too_few_providers"   # nothing to finalize, nothing changed
    req = m.new_message(m.COEFFICIENTS_REQUEST, info.solve_pk.fingerprint, system_digest="0" * 64)
    assert http(p.csp + "/message", req)[0] == 401
    assert http(p.csp + "/message", m.with_new_id(req), PLATFORM_TOKEN)[0] == 403
    status, err = http(p.csp + "/message", m.with_new_id(req), BUYER_TOKEN)
    assert status == 409 and err["error"] == "not_ready"  # nothing solved yet: w' does not exist
    status, st = http(p.csp + "/status")
    assert status == 200 and st["state"] == "ready"


def test_two_providers_and_the_buyer_get_the_exact_model(parties: Parties, keys: tuple) -> None:
    p = parties
    data = generate(40, 4, 21)

    async def run() -> object:
        for k, name in enumerate(("alice", "bob")):
            await run_provider(p.platform, (data.X, data.y), token=PROVIDERS[name], csp_url=p.csp, batch=7,
                               part=(k + 1, 2), insecure_study_size=True, insecure_http=True,
                               mode="per-record" if k == 0 else "per-provider")
        return await run_buyer(p.platform, p.csp, BUYER_TOKEN, insecure_http=True)

    result = asyncio.run(run())
    assert result.records == 40
    assert [str(f) for f in result.model.fractions] == in_process(data.X, data.y, p.params, keys)
    st = http(p.csp + "/status", token=BUYER_TOKEN)[1]
    assert st["state"] == "solved" and st["records"] == 40 and st["uploads"] == 4 and st["providers"] == 2
    assert "records" not in http(p.csp + "/status")[1]                   # no token: the state alone


def test_unreachable_peers_are_one_line(tmp_path: Path) -> None:
    dead = f"https://127.0.0.1:{free_port()}"
    token = tmp_path / "buyer.token"
    token.write_text(BUYER_TOKEN)
    token.chmod(0o600)
    assert_user_error(cli(tmp_path, "ridge", "buyer", "--platform", dead, "--csp", dead, "--buyer-token-file",
                          str(token)), "cannot reach the CSP")
    assert_user_error(cli(tmp_path, "ridge", "buyer", "--platform", dead, "--csp", dead), "buyer.token")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["buyer.token"]


def test_a_single_providers_model_is_not_for_sale_and_the_buyer_says_so_in_one_line(tmp_path: Path) -> None:
    """Issue 22, attack 4, every party a process: with the CSP's default ``--min-providers 2``
    the buyer cannot finalize after one provider's upload; its CLI exits 2 with one error
    line, and the platform is still collecting (another provider may still upload)."""
    csp_dir, token_dir = tmp_path / "csp", tmp_path / "plat"
    args = csp_args(4, 100, 0, "--key-dir", str(csp_dir), "--insecure-http")
    i = args.index("--min-providers")
    del args[i:i + 2]                                                       # the default: 2
    procs = [ServerProcess("CSP", args, env())]
    try:
        csp = procs[0].wait_url(60)
        procs.append(ServerProcess("platform", platform_args(csp, tmp_path / "p.db", csp_dir, token_dir, 0,
                                                             "--insecure-http"), env()))
        url = procs[1].wait_url(60)
        proc = cli(tmp_path, "ridge", "provider", "--platform", url, "--csp", csp, "--data", "generate:n=20,seed=2",
                   "--token-file", str(token_dir / "prov-A.token"), "--insecure-study-size", "--insecure-http",
                   "--no-progress")
        assert proc.returncode == 0, proc.stderr
        proc = cli(tmp_path, "ridge", "buyer", "--platform", url, "--csp", csp, "--insecure-http",
                   "--buyer-token-file", str(csp_dir / "buyer.token"), "--out", "model.json")
        assert_user_error(proc, "at least 2", "min_providers")
        assert not (tmp_path / "model.json").exists()
        assert http(url + "/status")[1]["state"] == "collecting"
    finally:
        for p in reversed(procs):
            p.stop()
