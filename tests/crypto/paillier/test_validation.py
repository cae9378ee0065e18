"""Key material that is not a real Paillier key is refused on load (the attacks: a private
key with p = 1, q = n and a public key with n = 15 were accepted)."""

from __future__ import annotations

import secrets

import gmpy2
import pytest

from cryptoffload.crypto import paillier as pl
from cryptoffload.errors import ConfigError


def _prime(bits: int) -> int:
    return int(gmpy2.next_prime(secrets.randbits(bits) | (3 << (bits - 2))))


def _public_dict(n: int, hs: int) -> dict[str, object]:
    return {"format": pl.FORMAT, "version": pl.FORMAT_VERSION, "kind": "public", "n": format(n, "x"),
            "hs": format(hs, "x"), "fingerprint": pl.key_fingerprint(n).hex()}


def _private_dict(n: int, hs: int, p: int, q: int) -> dict[str, object]:
    d = _public_dict(n, hs)
    d.update(kind="private", p=format(p, "x"), q=format(q, "x"))
    return d


def test_n_15_refused_even_as_a_study_size() -> None:
    with pytest.raises(ConfigError, match="below the 512-bit floor"):
        pl.key_from_dict(_public_dict(15, 4), insecure_study_size=True)


def test_p_1_q_n_refused(keys) -> None:
    pk, _ = keys
    with pytest.raises(pl.InvalidKeyError, match="two distinct primes"):
        pl.key_from_dict(_private_dict(pk.n, pk.hs, 1, pk.n), insecure_study_size=True)


def test_composite_factor_refused() -> None:
    p = _prime(256) * _prime(256)  # 512 bits, composite
    q = _prime(512)
    n = p * q
    pk = pl.PublicKey(n)
    with pytest.raises(pl.InvalidKeyError, match="factor p is not prime|factor q is not prime"):
        pl.key_from_dict(_private_dict(n, pk.hs, p, q), insecure_study_size=True)


def test_unequal_factors_refused() -> None:
    p, q = _prime(400), _prime(624)
    n = p * q
    with pytest.raises(pl.InvalidKeyError, match="differ in size"):
        pl.key_from_dict(_private_dict(n, pl.PublicKey(n).hs, p, q), insecure_study_size=True)


def test_public_moduli_anyone_can_factor_refused() -> None:
    prime = _prime(1024)
    cases = {
        "is prime": prime,
        "factor below": 3 * _prime(1022),
        "perfect power": _prime(512) ** 2,
    }
    for message, n in cases.items():
        with pytest.raises(pl.InvalidKeyError, match=message):
            pl.key_from_dict(_public_dict(n, 4), insecure_study_size=True)


def test_djn_base_that_is_no_nth_residue_refused(keys) -> None:
    pk, sk = keys
    bad_hs = pk.random_unit()  # a unit mod n, almost surely not an n-th residue mod n^2
    with pytest.raises(pl.InvalidKeyError, match="n-th residue"):
        pl.key_from_dict(_private_dict(pk.n, bad_hs, sk.p, sk.q), insecure_study_size=True)


def test_sizes_on_load(keys) -> None:
    pk, _ = keys
    with pytest.raises(ConfigError, match="insecure-study-size"):
        pl.key_from_dict(pk.to_dict())  # 1024 bits without asking for a study size
    assert pl.key_from_dict(pk.to_dict(), insecure_study_size=True) == pk
    huge = _public_dict((1 << 9000) + 1, 4)
    with pytest.raises(ConfigError, match="8192-bit limit"):
        pl.key_from_dict(huge)
    d = pk.to_dict()
    d["hs"] = "f" * 100_000
    with pytest.raises(pl.CiphertextFormatError, match="hex digits"):
        pl.key_from_dict(d, insecure_study_size=True)
