"""One batch computed where the work runs: results equal Python's ``pow`` and the key's own
encryption, one bad job fails alone, a malformed payload is reported, not raised; the tables come
from the encryption service (one bounded cache), and operands are not checked again here."""

from __future__ import annotations

import secrets
from collections import Counter
from typing import Any

import pytest

from cryptoffload.crypto.paillier import EncryptionService, djn, generate_keypair, service
from cryptoffload.engines.base import JobFailed
from cryptoffload.engines.compute import ServiceEncryptors, compute_batch

MOD = (1 << 521) - 1


def test_groups_compute_what_the_references_do() -> None:
    pk, sk = generate_keypair(1024, insecure_study_size=True)
    a = secrets.randbits(pk.exp_bits)
    r = pk.random_unit()
    batch = [("modexp", (3, 1000, MOD)), ("paillier.encrypt", (pk.n, pk.hs, 7, a)), ("modexp", (5, 77, MOD)),
             ("paillier.encrypt_classic", (pk.n, 9, r)), ("paillier.encrypt", (pk.n, pk.hs, 11, None))]
    out = compute_batch(batch, encryptors=ServiceEncryptors())
    assert all(ok for ok, _ in out)
    values = [v for _, v in out]
    assert values[0] == pow(3, 1000, MOD) and values[2] == pow(5, 77, MOD)
    assert values[1] == pk.raw_encrypt(7, a) and values[3] == pk.raw_encrypt_classic(9, r)
    assert sk.raw_decrypt_many([values[4]]) == [11]


def test_a_bad_job_fails_alone() -> None:
    """A DJN base h_s that is not a unit (here n itself) is refused when the engine rebuilds
    the key; the job fails, the batch around it is computed."""
    batch = [("modexp", (2, 10, MOD)), ("paillier.encrypt", (15, 15, 3, None)), ("modexp", (3, 4, MOD)),
             ("modexp", (1,)), ("rsa.sign", (1, 2))]
    out = compute_batch(batch)
    assert out[0] == (True, 1024) and out[2] == (True, 81)
    for i, message in ((1, "not a unit"), (3, "malformed"), (4, "unknown job kind")):
        ok, exc = out[i]
        assert not ok and isinstance(exc, JobFailed)
        with pytest.raises(JobFailed, match=message):
            raise exc


def _counting(monkeypatch: pytest.MonkeyPatch, counts: Counter[str], module: Any, name: str) -> None:
    real = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        counts[name] += 1
        return real(*args, **kwargs)
    monkeypatch.setattr(module, name, counted)


def test_tables_come_from_the_service_one_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """issue 36: the engines kept a second, unbounded cache of encryptors over the service's.
    Now a key's table is built once, by the service, and kept there within its bounds."""
    pk, sk = generate_keypair(1024, insecure_study_size=True)
    other, _ = generate_keypair(1024, insecure_study_size=True)
    counts: Counter[str] = Counter()
    _counting(monkeypatch, counts, service, "Encryptor")
    svc = EncryptionService(max_entries=1)
    source = ServiceEncryptors("gmp", service=svc)
    batch = [("paillier.encrypt", (pk.n, pk.hs, m, None)) for m in range(5)]
    for _ in range(3):
        out = compute_batch(batch, encryptors=source)
        assert sk.raw_decrypt_many([v for _, v in out]) == list(range(5))
    assert counts["Encryptor"] == 1 and svc.cached() == 1
    assert source.get(pk.n, pk.hs) is source.get(pk.n, pk.hs)
    compute_batch([("paillier.encrypt", (other.n, other.hs, 1, None))], encryptors=source)
    assert counts["Encryptor"] == 2 and svc.cached() == 1        # the service's bound holds
    compute_batch(batch, encryptors=source)
    assert counts["Encryptor"] == 3                               # pk's table was dropped, built anew


def test_operands_are_not_checked_again_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch holds payloads of jobs checked when they were made (engines/base.py); the
    compute side computes them without a second plaintext check."""
    pk, sk = generate_keypair(1024, insecure_study_size=True)
    counts: Counter[str] = Counter()
    _counting(monkeypatch, counts, djn, "check_plaintext")
    out = compute_batch([("paillier.encrypt", (pk.n, pk.hs, 7, None)), ("paillier.encrypt_classic", (pk.n, 9, None))])
    assert sk.raw_decrypt_many([v for _, v in out]) == [7, 9]
    assert counts["check_plaintext"] == 0


def test_a_missing_operand_is_a_malformed_payload() -> None:
    """``None`` is only for randomness the engine draws; a None modulus, key or base fails its
    job as malformed, and the rest of the batch is computed."""
    batch = [("modexp", (2, 5, None)), ("paillier.encrypt_classic", (None, 3, 2)), ("modexp", (None, 5, MOD)),
             ("modexp", (3, 5, MOD))]
    out = compute_batch(batch)
    assert out[3] == (True, 243)
    for i, message in ((0, "malformed payload"), (1, "malformed payload"),
                       (2, "TypeError: a required payload integer is None")):
        ok, exc = out[i]
        assert not ok and isinstance(exc, JobFailed)
        with pytest.raises(JobFailed, match=message):
            raise exc
