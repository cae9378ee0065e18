"""A special modulus of several primes and its number of key-switching digits (dnum.py): the
smallest P for a chosen dnum, the chain's digits agreeing with it, key sizes, key switching that
stays correct for every dnum, and parameters at N = 2^16 accepted at 128-bit security."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cryptoffload.crypto.ckks import CKKS_SECURITY_BITS, CkksParams, make_backend
from cryptoffload.crypto.ckks.gpu.chain import prime_chain
from cryptoffload.crypto.ckks.gpu.dnum import (
    KEY_WORD,
    SERIAL_WORD,
    greedy_digits,
    key_bytes,
    key_words,
    params_for_dnum,
    special_bits_for,
)
from cryptoffload.errors import ConfigError

from .gpu_helpers import FEW, TOL, close

#: eight 30-bit levels and a 40-bit base (two 20-bit primes): ten data primes
DEEP = CkksParams(2048, (40,) + (30,) * 8 + (40,), 30)


@FEW
@given(dnum=st.integers(1, 10))
def test_the_special_modulus_is_the_smallest_giving_dnum_digits(dnum):
    p = params_for_dnum(DEEP, dnum)
    chain = prime_chain(p.poly_modulus_degree, p.coeff_mod_bits)
    assert p.coeff_mod_bits[:-1] == DEEP.coeff_mod_bits[:-1]
    assert len(chain.digits()) <= dnum
    assert greedy_digits(chain.data, p.special_bits) == len(chain.digits())
    if p.special_bits > max(q.bit_length() for q in chain.data):   # else every prime is a digit already
        assert greedy_digits(chain.data, p.special_bits - 1) > dnum   # one bit less would not do
    # every digit's modulus has at most P's bits (the noise of a switch is digit / P times an error)
    p_bits = math.prod(chain.special).bit_length()
    for digit in chain.digits():
        assert len(digit) == 1 or math.prod(chain.data[i] for i in digit).bit_length() <= p_bits
    assert special_bits_for(DEEP.poly_modulus_degree, DEEP.coeff_mod_bits[:-1], dnum) <= p.special_bits


def test_fewer_digits_need_a_larger_p_and_the_key_follows_dnum_times_all_rows():
    sizes = []
    for dnum in (1, 2, 3, 5, 10):
        chain = prime_chain(2048, params_for_dnum(DEEP, dnum).coeff_mod_bits)
        assert key_words(chain) == len(chain.digits()) * 2 * len(chain.all) * 2048
        assert key_bytes(chain) == KEY_WORD * key_words(chain) == key_bytes(chain, SERIAL_WORD)   # 32-bit words
        sizes.append((dnum, len(chain.special)))
    specials = [a for _, a in sizes]
    assert specials == sorted(specials, reverse=True) and specials[0] >= 10 and specials[-1] == 1


def test_a_bad_dnum_is_refused():
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ConfigError, match="dnum"):
            params_for_dnum(DEEP, bad)


@pytest.mark.parametrize("dnum", [1, 3, 10])
def test_rotations_and_products_stay_correct_for_every_dnum(dnum):
    b = make_backend("gpu-twin", params_for_dnum(DEEP, dnum), insecure_study=True)
    b.keygen([1, -3])
    assert b.dnum == dnum and set(b.key_bytes().values()) == {key_bytes(b.chain)}
    x = np.random.default_rng(dnum).uniform(-1, 1, b.slots)
    ct = b.encrypt(x)
    close(b.decrypt(b.rotate(ct, 1)), np.roll(x, -1))
    close(b.decrypt(b.rotate(b.mod_switch_to(ct, 2), -3)), np.roll(x, 3))
    close(b.decrypt(b.rescale(b.relinearize(b.mul(ct, ct)))), x * x, 4 * TOL)


def test_parameters_at_n_65536_are_accepted_within_the_guidelines_bound():
    assert CKKS_SECURITY_BITS[65536] == 1747 and CKKS_SECURITY_BITS[32768] == 881
    base = CkksParams(65536, (60,) + (58,) * 21 + (60,), 58)
    p = params_for_dnum(base, 3)
    assert p.total_bits <= 1747 and p.is_secure
    b = make_backend("gpu-twin", p)           # no insecure_study
    assert b.dnum == 3 and b.chain.total_bits <= 1747
    with pytest.raises(ConfigError, match="1747-bit limit"):
        make_backend("gpu-twin", params_for_dnum(base, 2))   # P of 640 bits: 1918 bits in all
