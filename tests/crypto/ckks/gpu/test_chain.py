"""Which primes realise a parameter set: SEAL's where a level fits a 31-bit word, groups otherwise."""

from __future__ import annotations

import math

import pytest

from cryptoffload.crypto.ckks import DEFAULT_PARAMS, coeff_modulus_primes
from cryptoffload.crypto.ckks.gpu.chain import WORD_BITS, prime_chain
from cryptoffload.crypto.ckks.primes import is_prime
from cryptoffload.errors import ConfigError


@pytest.mark.parametrize("n, bits", [(16384, DEFAULT_PARAMS.coeff_mod_bits), (8192, (60, 40, 40, 60)),
                                     (2048, (40, 30, 30, 30, 40)), (1024, (27, 20, 27)), (4096, (50, 31, 31, 50))])
def test_chain_primes_are_ntt_friendly_distinct_and_below_each_level_size(n, bits):
    ch = prime_chain(n, bits)
    assert len(ch.groups) == len(bits)
    primes = ch.all
    assert len(set(primes)) == len(primes)
    for p in primes:
        assert is_prime(p) and p % (2 * n) == 1 and p < 2 ** WORD_BITS
    for group, b in zip(ch.groups, bits):
        assert len(group) == -(-b // WORD_BITS)
        assert math.prod(group) < 2 ** b           # the security accounting stays exact
        assert math.prod(group) > 2 ** (b - 1.5)   # and the level is about as large as asked
    assert ch.total_bits <= sum(bits)
    assert ch.limbs(0) == len(ch.groups[0]) and ch.limbs(len(bits) - 2) == len(ch.data)


def test_single_word_levels_are_seals_primes():
    ch = prime_chain(16384, DEFAULT_PARAMS.coeff_mod_bits)
    seal = coeff_modulus_primes(16384, DEFAULT_PARAMS.coeff_mod_bits)
    assert ch.logical[1:-1] == seal[1:-1]        # the 30-bit levels: rescales divide by SEAL's primes
    assert [len(g) for g in ch.groups] == [2, 1, 1, 1, 1, 1, 2]


def test_digits_cover_the_data_rows_and_stay_below_p():
    ch = prime_chain(16384, DEFAULT_PARAMS.coeff_mod_bits)
    digits = ch.digits()
    assert [r for d in digits for r in d] == list(range(len(ch.data)))
    p_bits = math.prod(ch.special).bit_length()
    for d in digits:
        assert math.prod(ch.data[r] for r in d).bit_length() <= p_bits
    assert digits == ((0, 1), (2, 3), (4, 5), (6,))


def test_refuses_a_split_into_primes_too_small_for_the_ring():
    with pytest.raises(ConfigError, match="cannot be split"):
        prime_chain(16384, (60, 33, 60))          # two 16.5-bit primes = 1 mod 32768 cannot exist


def test_chain_is_deterministic():
    assert prime_chain(8192, (60, 40, 40, 60)) == prime_chain(8192, (60, 40, 40, 60))
