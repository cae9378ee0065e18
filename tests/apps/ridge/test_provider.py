"""The provider: it encrypts only under the CSP session it pinned, with its own DJN base, and
only at a secure key size unless asked (issue 12, attack 2)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiohttp import web
from ridge_helpers import PROVIDERS, Parties

from cryptoffload.apps._http import ServerThread
from cryptoffload.apps.ridge import messages as m
from cryptoffload.apps.ridge.messages import SessionInfo
from cryptoffload.apps.ridge.provider import pinned_upload_key, run_provider
from cryptoffload.crypto.paillier import PublicKey, generate_keypair
from cryptoffload.errors import ConfigError
from cryptoffload.workloads.ridge_data import generate

DATA = generate(30, 4, 5)


class FakePlatform:
    """A malicious platform: serves the session it likes and keeps every upload it gets."""

    def __init__(self, info: SessionInfo) -> None:
        self.info = info
        self.uploads: list[dict[str, Any]] = []

    def app(self) -> web.Application:
        async def params(_: web.Request) -> web.Response:
            return web.json_response(self.info.to_message("platform"))

        async def message(request: web.Request) -> web.Response:
            msg = await request.json()
            self.uploads.append(msg)
            return web.json_response(m.new_message(m.UPLOAD_ACK, self.info.upload_pk.fingerprint,
                                                   upload_id=msg["upload_id"], status="accepted"))

        app = web.Application()
        app.router.add_get("/params", params)
        app.router.add_post("/message", message)
        return app


def _provide(url: str, **kw: Any) -> Any:
    kw.setdefault("token", PROVIDERS["alice"])
    kw.setdefault("insecure_http", True)
    return asyncio.run(run_provider(url, (DATA.X, DATA.y), batch=10, retry_for=0, **kw))


def test_a_platform_serving_its_own_key_gets_nothing(parties: Parties) -> None:
    """Attack 2: a platform served its own 512-bit key and decrypted 20/20 records. Pinned to
    the CSP's session (by fingerprint, or fetched from the CSP itself), the provider refuses."""
    real = parties.info
    own_pk = generate_keypair(512, insecure_study_size=True)[0]
    fake = FakePlatform(SessionInfo(real.params, own_pk, real.solve_pk, real.buyer_token_sha256))
    with ServerThread(fake.app) as url:
        with pytest.raises(ConfigError, match="not the pinned"):
            _provide(url, csp_fingerprint=real.fingerprint, insecure_study_size=True)
        with pytest.raises(ConfigError, match="not the pinned"):
            _provide(url, csp_url=parties.csp, insecure_study_size=True)
        with pytest.raises(ConfigError, match="pin the CSP"):
            _provide(url)
    assert fake.uploads == []


def test_the_djn_base_is_the_providers_own(parties: Parties) -> None:
    """The fingerprint covers the moduli, not the DJN base h_s: a platform serving the right n
    with h_s = 1 would get c = (1 + n)^m, readable by anyone as (c - 1) / n. Such a degenerate
    base is refused outright (issue 22); one that passes every public check but is no n-th
    residue (h_s (1 + n): uploads would decrypt to m + a) is not used either: the provider
    makes its own h_s."""
    from cryptoffload.apps.ridge.messages import ProtocolError

    real = parties.info
    n = real.upload_pk.n
    fake = FakePlatform(SessionInfo(real.params, PublicKey(n, hs=1), real.solve_pk, real.buyer_token_sha256))
    with ServerThread(fake.app) as url:
        with pytest.raises(ProtocolError, match="h_s"):
            _provide(url, csp_fingerprint=real.fingerprint, insecure_study_size=True)
    assert fake.uploads == []
    bad_hs = real.upload_pk.hs * (1 + n) % real.upload_pk.nsquare
    fake = FakePlatform(SessionInfo(real.params, PublicKey(n, hs=bad_hs), real.solve_pk, real.buyer_token_sha256))
    with ServerThread(fake.app) as url:
        report = _provide(url, csp_fingerprint=real.fingerprint, insecure_study_size=True)
    assert report.records == 30 and fake.uploads
    assert pinned_upload_key(fake.info, real.fingerprint, True).hs != bad_hs
    for msg in fake.uploads:
        values = m.decode_ciphertexts(msg["ciphertexts"], real.upload_pk).values
        assert all(c % n != 1 for c in values)


def test_keys_below_2048_bits_need_the_study_flag(parties: Parties) -> None:
    with pytest.raises(ConfigError, match="insecure-study-size"):
        pinned_upload_key(parties.info, parties.info.fingerprint, insecure_study_size=False)
    with pytest.raises(ConfigError, match="64 hex digits"):
        pinned_upload_key(parties.info, "abc", insecure_study_size=True)
    with pytest.raises(ConfigError, match="insecure-study-size"):
        _provide(parties.platform, csp_url=parties.csp)
    assert parties.platform_service.records == 0
    report = _provide(parties.platform, csp_url=parties.csp, insecure_study_size=True)
    assert report.records == 30 and parties.platform_service.records == 30


def test_batch_bounds_per_record_per_provider_and_the_platforms_largest_upload() -> None:
    from cryptoffload.apps.ridge.provider import _batch_bounds

    assert _batch_bounds("per-record", 4, 10, 2048) == [(0, 4), (4, 8), (8, 10)]
    assert _batch_bounds("per-record", 4, 3, 3) == [(0, 3)]  # a batch above the data is the data
    assert _batch_bounds("per-provider", 4, 10, 1) == [(0, 10)]
    with pytest.raises(ConfigError, match=r"^--batch 5 is above the platform's largest upload \(4 records\)$"):
        _batch_bounds("per-record", 5, 10, 4)
