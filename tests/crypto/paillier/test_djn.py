"""Paillier's integer arithmetic (``crypto/paillier/djn.py``): the DJN formula on known numbers,
the plaintext range check's refusals, a random unit that is always a unit."""

from __future__ import annotations

import pytest

from cryptoffload.crypto.paillier import PlaintextRangeError, generate_keypair
from cryptoffload.crypto.paillier.djn import check_plaintext, encrypt, random_unit


def test_encrypt_is_one_plus_m_n_times_hs_to_the_a() -> None:
    assert encrypt(2, 3, 15, 4, 225) == 184            # (1 + 2*15) * 4^3 = 1984 = 8*225 + 184
    pk, sk = generate_keypair(1024, insecure_study_size=True)
    assert sk.raw_decrypt_many([encrypt(12345, 99, pk.n, pk.hs, pk.nsquare)]) == [12345]


@pytest.mark.parametrize("m, message", [(True, "must be an int, got bool"), (1.0, "must be an int, got float"),
                                        (15, r"out of range: must be in \[0, n\) for this 4-bit key"),
                                        (-1, "out of range")])
def test_check_plaintext_refuses(m: object, message: str) -> None:
    with pytest.raises(PlaintextRangeError, match=message):
        check_plaintext(m, 15)


def test_check_plaintext_returns_what_fits() -> None:
    assert check_plaintext(0, 15) == 0 and check_plaintext(14, 15) == 14


def test_random_unit_draws_every_unit_and_nothing_else() -> None:
    assert {random_unit(8) for _ in range(400)} == {1, 3, 5, 7}
