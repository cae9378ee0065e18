"""Accelerator engines: IFMA against GMP (skipped without IFMA), and the GPU hook."""

from __future__ import annotations

import secrets

import pytest

from cryptoffload.crypto.paillier import PrivateKey, PublicKey, generate_keypair
from cryptoffload.engines import IfmaEngine, Job, ifma_reason, make_engine
from cryptoffload.engines.ifma import ifma_eligible
from cryptoffload.errors import BackendUnavailable

IFMA_WHY = ifma_reason()
needs_ifma = pytest.mark.skipif(IFMA_WHY is not None, reason=f"IfmaEngine: {IFMA_WHY}")


@pytest.fixture(scope="module")
def keypair() -> tuple[PublicKey, PrivateKey]:
    return generate_keypair(1024, insecure_study_size=True)


@needs_ifma
@pytest.mark.parametrize("count", [1, 7, 8, 9, 20])
def test_ifma_modexp_equals_gmp(keypair: tuple[PublicKey, PrivateKey], count: int) -> None:
    pk, _ = keypair
    bases = [secrets.randbelow(pk.nsquare) for _ in range(count)]
    exps = [secrets.randbits(1024) for _ in range(count - 1)] + [pk.n]
    with IfmaEngine(max_batch=16) as eng:
        got = [f.result() for f in eng.submit_many([Job.modexp(b, e, pk.nsquare) for b, e in zip(bases, exps)])]
        assert got == [pow(b, e, pk.nsquare) for b, e in zip(bases, exps)]
        if count >= 8:
            assert eng.powm.ifma_jobs > 0


@needs_ifma
def test_ifma_falls_back_to_gmp_where_crypto_mb_is_wrong() -> None:
    odd_1500 = (1 << 1499) + 12345 * 2 + 1   # padded to 2048 bits, too short for crypto_mb
    assert not ifma_eligible(odd_1500) and not ifma_eligible(1 << 2047) and ifma_eligible((1 << 2048) - 159)
    bases = [secrets.randbelow(odd_1500) for _ in range(8)]
    exps = [secrets.randbits(300) for _ in range(8)] + [0]
    bases.append(5)
    with IfmaEngine() as eng:
        got = [f.result() for f in eng.submit_many([Job.modexp(b, e, odd_1500) for b, e in zip(bases, exps)])]
        assert got == [pow(b, e, odd_1500) for b, e in zip(bases, exps)]
        assert eng.powm.ifma_jobs == 0


@needs_ifma
def test_ifma_encrypt_jobs_decrypt(keypair: tuple[PublicKey, PrivateKey]) -> None:
    pk, sk = keypair
    ms = [secrets.randbelow(pk.n) for _ in range(12)]
    with IfmaEngine(linger_s=0.001) as eng:
        futures = eng.submit_many([Job.encrypt(pk, m) for m in ms] + [Job.encrypt_classic(pk, m) for m in ms])
        assert sk.raw_decrypt_many([f.result() for f in futures]) == ms + ms
        a = secrets.randbits(pk.exp_bits)
        assert eng.submit(Job.encrypt(pk, 7, a)).result() == pk.raw_encrypt(7, a)
        assert eng.stats().largest_batch % 8 == 0 or eng.stats().largest_batch < 8


def test_ifma_unavailable_raises_one_line_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COPL_DISABLE_IFMA", "1")
    with pytest.raises(BackendUnavailable, match="IFMA") as info:
        IfmaEngine()
    assert "\n" not in str(info.value)
    with pytest.raises(BackendUnavailable):
        make_engine("ifma")
    with make_engine("auto") as eng:          # falls back to CPU threads
        assert eng.name == "cpu-threads"
