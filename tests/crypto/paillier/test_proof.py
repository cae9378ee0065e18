"""Proofs of correct decryption, against an independent check in plain Python integers.

The reference is the defining identity itself, computed with Python's ``pow`` and no code of
the package: ``r^n * (1 + n)^m == c (mod n^2)``; for a textbook ciphertext whose randomness
the test chose, the root is that randomness modulo n."""

from __future__ import annotations

import math
import secrets

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoffload.crypto import paillier as pl


def reference_holds(n: int, c: int, m: int, r: int) -> bool:
    n2 = n * n
    return 0 < r < n and pow(r, n, n2) * pow(1 + n, m, n2) % n2 == c % n2


def test_the_root_of_a_ciphertext_satisfies_the_identity(keys) -> None:
    pk, sk = keys
    for m in (0, 1, 2, pk.n - 1, secrets.randbelow(pk.n)):
        c = pk.raw_encrypt(m)
        r = pl.decryption_root(sk, c)
        assert reference_holds(pk.n, c, m, r)
        assert pl.verify_decryption(pk, c, m, r)


def test_the_root_is_the_randomness_of_a_textbook_ciphertext(keys) -> None:
    """c = (1 + n)^m rho^n: the proof is rho mod n (independent of how rho was drawn)."""
    pk, sk = keys
    for _ in range(5):
        m, rho = secrets.randbelow(pk.n), pk.random_unit()
        c = pk.raw_encrypt_classic(m, rho)
        assert pl.decryption_root(sk, c) == rho % pk.n
        assert pl.decryption_root(sk, c % pk.n) == rho % pk.n   # depends on c mod n only


def test_roots_are_multiplicative_like_ciphertexts(keys) -> None:
    pk, sk = keys
    m1, m2 = secrets.randbelow(pk.n), secrets.randbelow(pk.n)
    c1, c2 = pk.raw_encrypt(m1), pk.raw_encrypt(m2)
    r1, r2, r12 = pl.decryption_roots(sk, [c1, c2, c1 * c2 % pk.nsquare])
    assert r12 == r1 * r2 % pk.n
    assert pl.verify_decryption(pk, c1 * c2 % pk.nsquare, (m1 + m2) % pk.n, r12)


@settings(max_examples=30, deadline=None)
@given(m=st.integers(min_value=0), delta=st.integers(min_value=1), seed=st.integers(min_value=0, max_value=2**64))
def test_a_forged_plaintext_fails_whatever_the_root(keys, m, delta, seed) -> None:
    """Perfect soundness: for m' != Dec(c) no root exists; the honest root and random ones
    fail alike."""
    pk, sk = keys
    m %= pk.n
    c = pk.raw_encrypt(m)
    forged = (m + delta) % pk.n
    if forged == m:
        forged = (m + 1) % pk.n
    r = pl.decryption_root(sk, c)
    assert not pl.verify_decryption(pk, c, forged, r)
    assert not reference_holds(pk.n, c, forged, r)
    assert not pl.verify_decryption(pk, c, forged, (seed % (pk.n - 1)) + 1)


@settings(max_examples=40, deadline=None)
@given(bit=st.integers(min_value=0, max_value=2047), which=st.sampled_from(["root", "plaintext", "ciphertext"]))
def test_a_flipped_bit_anywhere_fails(keys, bit, which) -> None:
    pk, sk = keys
    m = secrets.randbelow(pk.n)
    c = pk.raw_encrypt(m)
    r = pl.decryption_root(sk, c)
    values = {"root": r, "plaintext": m, "ciphertext": c}
    values[which] ^= 1 << (bit % (pk.nsquare.bit_length() if which == "ciphertext" else pk.n.bit_length()))
    assert not pl.verify_decryption(pk, values["ciphertext"], values["plaintext"], values["root"])
    if 0 < values["ciphertext"] < pk.nsquare and 0 <= values["plaintext"] < pk.n:
        assert not reference_holds(pk.n, values["ciphertext"], values["plaintext"], values["root"])


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(min_value=1, max_value=2**2048))
def test_every_unit_is_a_ciphertext_with_a_proof(keys, seed) -> None:
    """Any unit c below n^2 (not only our encryptions) decrypts to some m with a valid proof."""
    pk, sk = keys
    c = seed % pk.nsquare
    if math.gcd(c, pk.n) != 1:
        return
    m = sk.raw_decrypt_many([c])[0]
    r = pl.decryption_root(sk, c)
    assert reference_holds(pk.n, c, m, r) and pl.verify_decryption(pk, c, m, r)


def test_out_of_range_and_non_integers_fail_without_raising(keys) -> None:
    pk, sk = keys
    c = pk.raw_encrypt(5)
    r = pl.decryption_root(sk, c)
    assert pl.verify_decryption(pk, c, 5, r)
    for bad in ((c, 5, 0), (c, 5, r + pk.n), (c, 5, -r), (c, 5 + pk.n, r), (c + pk.nsquare, 5, r), (0, 5, r),
                (c, 5.0, r), (c, True, r), (str(c), 5, r)):
        assert not pl.verify_decryption(pk, *bad), bad  # type: ignore[arg-type]
    # a root that is no unit: r^n (1 + m n) is then no unit either, so a non-unit "ciphertext" made from it
    # would pass the identity; it is refused
    fake = pow(sk.p, pk.n, pk.nsquare) * (1 + 5 * pk.n) % pk.nsquare
    assert reference_holds(pk.n, fake, 5, sk.p) and not pl.verify_decryption(pk, fake, 5, sk.p)
    assert pl.verify_decryptions(pk, [c, c], [5, 6], [r, r]) == [1]
    assert pl.verify_decryptions(pk, [c, c], [5], [r, r]) == [1]
    with pytest.raises(ValueError, match="unit"):
        pl.decryption_root(sk, pk.n * 3)


def test_another_keys_proof_fails(keys, other_keys) -> None:
    pk, sk = keys
    opk = other_keys[0]
    c = pk.raw_encrypt(7)
    r = pl.decryption_root(sk, c)
    assert not pl.verify_decryption(opk, c % opk.nsquare, 7, r % opk.n or 1)
