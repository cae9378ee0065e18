"""The prime chain: the same primes, in the same order, as SEAL's CoeffModulus.Create."""

from __future__ import annotations

import pytest

from cryptoffload.crypto.ckks import coeff_modulus_primes


@pytest.mark.parametrize("n,bits", [(8192, (60, 40, 40, 60)), (4096, (30, 20, 20, 30)),
                                    (16384, (60, 30, 30, 30, 30, 30, 60))])
def test_prime_selection_matches_seal(n, bits):
    import tenseal.sealapi as s

    assert coeff_modulus_primes(n, bits) == tuple(m.value() for m in s.CoeffModulus.Create(n, list(bits)))
