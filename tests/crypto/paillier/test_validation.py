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
            "hs": format(hs, "x"), "fingerprint": pl.key_fingerprint(n).hex(),
            "checksums": {"n": pl.field_checksum("n", n), "hs": pl.field_checksum("hs", hs)}}


def _private_dict(n: int, hs: int, p: int, q: int) -> dict[str, object]:
    d = _public_dict(n, hs)
    d.update(kind="private", p=format(p, "x"), q=format(q, "x"))
    d["checksums"].update(p=pl.field_checksum("p", p), q=pl.field_checksum("q", q))  # type: ignore[attr-defined]
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
    bad_hs = pk.hs * (1 + pk.n) % pk.nsquare  # passes every public check, no n-th residue mod n^2
    assert pl.key_from_dict(_public_dict(pk.n, bad_hs), insecure_study_size=True).hs == bad_hs
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


def _crt(a: int, p: int, b: int, q: int) -> int:
    return (a + p * ((b - a) * pow(p, -1, q) % q)) % (p * q)


def test_degenerate_djn_bases_refused_from_the_public_key_alone(keys) -> None:
    """The attack: h_s = 1 or n^2 - 1 passed every check, and `paillier encrypt` wrote
    (1 + m n) (+-1)^a, which anyone decrypts from n alone. Each degenerate base is refused
    publicly, with the command that makes a good key."""
    pk, sk = keys
    n, nn = pk.n, pk.nsquare
    order_two = _crt(1, sk.p, sk.q - 1, sk.q)  # a square root of 1 that is not +-1
    cases = {
        "out of range": [0, 1, nn, nn + 5],
        "shares a factor": [n, sk.p, sk.q * 7],
        "[+]-1 modulo n": [nn - 1, n + 1, n - 1, 1 + 5 * n, nn - n - 1],
        "small order": [order_two, pow(order_two, n, nn)],
        "Jacobi": [_crt(1, sk.p, _non_residue(sk.q), sk.q)],
    }
    for message, values in cases.items():
        for hs in values:
            with pytest.raises(pl.InvalidKeyError, match=f"{message}.*paillier keygen"):
                pl.key_from_dict(_public_dict(n, hs), insecure_study_size=True)


def _non_residue(q: int) -> int:
    z = 2
    while pow(z, (q - 1) // 2, q) == 1:
        z += 1
    return z


def test_djn_base_not_of_the_generators_form_refused_with_the_factors(keys) -> None:
    """(x^2)^n is an n-th residue with the right Jacobi symbol, so nothing public tells it
    from the generator's (-x^2)^n; with p and q it is refused (a square mod p, where the
    generator's -x^(2n) is not)."""
    pk, sk = keys
    x = pk.random_unit()
    hs = pow(x * x % pk.n, pk.n, pk.nsquare)
    assert pl.key_from_dict(_public_dict(pk.n, hs), insecure_study_size=True).hs == hs
    with pytest.raises(pl.InvalidKeyError, match=r"\(-x\^2\)\^n.*paillier keygen"):
        pl.key_from_dict(_private_dict(pk.n, hs, sk.p, sk.q), insecure_study_size=True)


def test_generated_bases_pass_every_check(keys) -> None:
    """The checks hold for what the generator makes (each drawn base, and the key's own)."""
    pk, sk = keys
    for _ in range(5):
        x = pk.random_unit()
        hs = pow(-x * x % pk.n, pk.n, pk.nsquare)
        key = pl.key_from_dict(_private_dict(pk.n, hs, sk.p, sk.q), insecure_study_size=True)
        assert key.public_key.hs == hs
