"""The paillier-offload study's measured half: every baseline case runs and does as many
operations as it counts, and a mode whose ciphertexts do not decrypt is refused rather than timed."""

from __future__ import annotations

import secrets

import pytest

from cryptoffload.crypto import paillier as pl
from cryptoffload.crypto._native import core as native
from cryptoffload.crypto.paillier import ENCRYPTION
from cryptoffload.studies import _paillier_measured as pm
from cryptoffload.studies._paillier_measured import _check_decrypts, baseline_cases, decryption_cases


@pytest.fixture(scope="module")
def keys() -> tuple[pl.PublicKey, pl.PrivateKey]:
    return pl.generate_keypair(1024, insecure_study_size=True)


def test_every_case_runs_and_counts_its_operations(keys) -> None:
    pk, sk = keys
    for case in baseline_cases(pk, sk) + decryption_cases(pk, sk):
        out = case.run()
        assert case.items >= 1 and len(out) == case.items, case.name


def test_a_mode_whose_ciphertexts_do_not_decrypt_is_refused(keys) -> None:
    pk, sk = keys
    msgs = [secrets.randbelow(pk.n) for _ in range(20)]
    cts = [c.value for c in ENCRYPTION.encrypt_many(pk, msgs)]
    _check_decrypts(sk, msgs, cts, "coro1")
    with pytest.raises(RuntimeError, match="mode coro2: ciphertexts do not decrypt"):
        _check_decrypts(sk, msgs, cts[1:] + cts[:1], "coro2")


def test_the_study_finds_each_baseline_by_its_role_not_its_name(keys) -> None:
    pk, sk = keys
    cases = baseline_cases(pk, sk)
    roles = [c.role for c in cases]
    want = [pm.PHE, pm.TEXTBOOK] + ([pm.IPCL_STYLE] if native.ifma_available() else []) \
        + ([pm.OURS_CONSTANT_TIME, pm.OURS_FASTEST] if native.native_available() else []) + [pm.OURS_ONLINE]
    assert roles == want
    assert pm.case_of(cases, pm.PHE).name == "phe 1.5.0"
    assert pm.case_of(cases, pm.OURS_ONLINE).name == "ours, online half of offline/online"
    assert pm.case_of(cases[:1], pm.TEXTBOOK) is None
