"""One batch computed where the work runs: results equal Python's ``pow`` and the key's own
encryption, one bad job fails alone, a malformed payload is reported, not raised."""

from __future__ import annotations

import secrets

import pytest

from cryptoffload.crypto.paillier import generate_keypair
from cryptoffload.engines.base import JobFailed
from cryptoffload.engines.compute import EncryptorCache, compute_batch

MOD = (1 << 521) - 1


def test_groups_compute_what_the_references_do() -> None:
    pk, sk = generate_keypair(1024, insecure_study_size=True)
    a = secrets.randbits(pk.exp_bits)
    r = pk.random_unit()
    batch = [("modexp", (3, 1000, MOD)), ("paillier.encrypt", (pk.n, pk.hs, 7, a)), ("modexp", (5, 77, MOD)),
             ("paillier.encrypt_classic", (pk.n, 9, r)), ("paillier.encrypt", (pk.n, pk.hs, 11, None))]
    out = compute_batch(batch, encryptors=EncryptorCache())
    assert all(ok for ok, _ in out)
    values = [v for _, v in out]
    assert values[0] == pow(3, 1000, MOD) and values[2] == pow(5, 77, MOD)
    assert values[1] == pk.raw_encrypt(7, a) and values[3] == pk.raw_encrypt_classic(9, r)
    assert sk.raw_decrypt_many([values[4]]) == [11]


def test_a_bad_job_fails_alone() -> None:
    batch = [("modexp", (2, 10, MOD)), ("modexp", (2, -1, MOD)), ("modexp", (3, 4, MOD)), ("modexp", (1,)),
             ("rsa.sign", (1, 2))]
    out = compute_batch(batch)
    assert out[0] == (True, 1024) and out[2] == (True, 81)
    for i, message in ((1, "non-negative"), (3, "malformed"), (4, "unknown job kind")):
        ok, exc = out[i]
        assert not ok and isinstance(exc, JobFailed)
        with pytest.raises(JobFailed, match=message):
            raise exc


def test_encryptors_are_built_once_per_key() -> None:
    pk, _ = generate_keypair(1024, insecure_study_size=True)
    cache = EncryptorCache()
    assert cache.get(pk.n, pk.hs) is cache.get(pk.n, pk.hs)


def test_a_plaintext_out_of_range_fails_its_job_with_the_keys_message() -> None:
    n = 15
    out = compute_batch([("paillier.encrypt_classic", (n, 3, 2)), ("paillier.encrypt_classic", (n, n, 2))])
    assert out[0] == (True, pow(16, 3, 225) * pow(2, 15, 225) % 225)
    ok, exc = out[1]
    assert not ok
    with pytest.raises(JobFailed, match=r"PlaintextRangeError: plaintext out of range: must be in \[0, n\) "
                                        "for this 4-bit key"):
        raise exc


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
