"""RidgeSession: one session's parameters and keys, and the parties wired from them once -- for
the study, the servers and run_in_process alike."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest

from cryptoffload.apps.ridge import RidgeKeys, RidgeParams, RidgeSession, protocol, run_in_process
from cryptoffload.apps.ridge.messages import SessionInfo
from cryptoffload.apps.ridge.params import required_solve_key_bits, solve_key_bits
from cryptoffload.crypto.paillier import KeyMismatchError, PublicKey
from cryptoffload.errors import ConfigError
from cryptoffload.workloads.ridge_data import generate

D = 3


def _params() -> RidgeParams:
    return RidgeParams(d=D, max_records=200, y_bound=10.0, lam=1.0)


@pytest.fixture(scope="module")
def session(keys: tuple) -> RidgeSession:
    return RidgeSession.of_keys(_params(), RidgeKeys(*keys), workers=2)


def test_the_parties_are_made_once_and_providers_anew(session: RidgeSession) -> None:
    assert session.platform is session.platform and session.csp is session.csp
    assert session.platform.workers == 2 and session.csp.upload_pk == session.upload_pk
    a, b = session.provider(), session.provider()
    assert a is not b and a.public_key == session.upload_pk
    # a provider's own copy of the upload key (its own h_s) is accepted; another modulus is not
    own = PublicKey(session.upload_pk.n)
    assert session.provider(upload_pk=own).public_key.hs == own.hs
    with pytest.raises(KeyMismatchError, match="session's modulus"):
        session.provider(upload_pk=session.solve_pk)


def test_a_session_from_the_public_info_has_no_csp(session: RidgeSession) -> None:
    info = SessionInfo(session.params, session.upload_pk, session.solve_pk, "0" * 64)
    public = RidgeSession.of_info(info, workers=3)
    assert public.platform.workers == 3 and public.provider().public_key == session.upload_pk
    with pytest.raises(ConfigError, match="public keys only"):
        _ = public.csp
    assert session.keys is not None
    with pytest.raises(KeyMismatchError):
        RidgeSession(session.params, session.upload_pk, session.solve_pk,
                     keys=RidgeKeys(session.keys.solve, session.keys.upload))


def test_one_session_finalizes_twice_to_the_same_model(session: RidgeSession) -> None:
    """The study finalizes the per-record and the per-provider aggregates of the same records
    with one session (it used to build a second platform for it)."""
    data = generate(60, D, seed=4)
    prov = session.provider()
    models = []
    for uploads in (list(prov.per_record(data.X, data.y, chunk=25)), [prov.per_provider(data.X, data.y)]):
        agg = session.aggregator()
        for u in uploads:
            agg.add(u)
        timings: dict[str, float] = {}
        models.append(session.finalize(agg.result(), timings))
        assert set(timings) == {"unpack", "mask_solve", "csp_solve", "recover"}
    assert models[0].fractions == models[1].fractions
    ref = run_in_process(data.X, data.y, session.params, upload_keys=session.keys.upload,  # type: ignore[union-attr]
                         solve_keys=session.keys.solve)  # type: ignore[union-attr]
    assert ref.fractions == models[0].fractions


def test_each_party_checks_the_solve_key_once(session: RidgeSession, monkeypatch: pytest.MonkeyPatch) -> None:
    """The platform and the CSP each check what they need when they are made, once; the
    in-process runner used to check the solve key three times (itself, the CSP, the platform)."""
    counts: Counter[str] = Counter()
    real = protocol.check_solve_key

    def counted(*args: Any) -> None:
        counts["check_solve_key"] += 1
        real(*args)
    monkeypatch.setattr(protocol, "check_solve_key", counted)
    data = generate(20, D, seed=1)
    assert session.keys is not None
    run_in_process(data.X, data.y, session.params, upload_keys=session.keys.upload, solve_keys=session.keys.solve)
    assert counts["check_solve_key"] == 2


def test_the_solve_key_size_is_one_rule() -> None:
    params = _params()
    assert solve_key_bits(params) == max(2048, required_solve_key_bits(params))
    assert solve_key_bits(params, 3072) == 3072
    big = RidgeParams(d=30, max_records=10**6, y_bound=36.0, lam=1.0)  # needs 2,312 bits
    assert solve_key_bits(big) == required_solve_key_bits(big) > 2048


def test_generated_keys_follow_the_rule(upload_keys: tuple) -> None:
    params = _params()
    keys = RidgeKeys.generate(params, upload=upload_keys, insecure_study_size=True)
    assert keys.upload is upload_keys and keys.solve[0].bits == solve_key_bits(params)
    s = RidgeSession.of_keys(params, keys)
    assert s.upload_pk == upload_keys[0] and s.csp.solve_pk == keys.solve[0]
    assert np.isfinite(s.platform.layout.slot_bits)


def test_a_session_of_the_upload_key_makes_providers_only(session: RidgeSession) -> None:
    """What a Dask worker of the bulk path is given -- parameters and the upload public key --
    is a session too: its providers are the session's; it has no platform and no CSP."""
    worker = RidgeSession.of_upload_key(session.params, session.upload_pk, backend="gmpy2")
    prov = worker.provider(constant_time=False)
    assert prov.public_key == session.upload_pk and prov.plaintexts == session.provider().plaintexts
    assert prov._backend == "gmpy2" and not prov._constant_time
    for part in ("solve_pk", "platform", "csp"):
        with pytest.raises(ConfigError, match="upload key only|key pairs"):
            getattr(worker, part)


def test_key_sizes_are_checked_by_the_rule_generate_follows() -> None:
    """The CSP server and the demo check both sizes before anything starts, with the rule the
    keys are then made by (the demo used to import the CSP server's own copy)."""
    params = _params()
    assert RidgeKeys.check_sizes(params, 2048) == (2048, solve_key_bits(params))
    assert RidgeKeys.check_sizes(params, 1024, 3072, insecure_study_size=True) == (1024, 3072)
    for upload, solve, message in ((1024, None, "112-bit security"), (1023, None, "even number of bits"),
                                   (2048, 1024, "112-bit security"), (2048, 2**14, "above the")):
        with pytest.raises(ConfigError, match=message):
            RidgeKeys.check_sizes(params, upload, solve)
