"""CkksParams: derived sizes, the 128-bit security bound, refusal of malformed parameters."""

from __future__ import annotations

import pytest

from cryptoffload.crypto.ckks import CKKS_SECURITY_BITS, CkksError, CkksParams, SealBackend, make_backend
from cryptoffload.errors import ConfigError


def test_params_properties_and_security_check():
    p = CkksParams(16384, (60, 30, 30, 30, 30, 30, 60), 30)
    assert (p.slots, p.levels, p.data_primes) == (8192, 5, 6)
    p.check_security()
    big = CkksParams(8192, (60, 60, 60, 60), 40)  # 240 bits > 218
    with pytest.raises(ConfigError, match="218-bit limit"):
        big.check_security()
    big.check_security(insecure_study=True)
    with pytest.raises(ConfigError, match="128-bit"):
        SealBackend(big)
    assert SealBackend(big, insecure_study=True).params == big
    with pytest.raises(ConfigError, match="128-bit"):
        make_backend("emulator", big)
    assert CKKS_SECURITY_BITS[32768] == 881


@pytest.mark.parametrize("bad", [
    dict(poly_modulus_degree=1000, coeff_mod_bits=(60, 60), scale_bits=30),
    dict(poly_modulus_degree=8192, coeff_mod_bits=(60,), scale_bits=30),
    dict(poly_modulus_degree=8192, coeff_mod_bits=(61, 40, 60), scale_bits=30),
    dict(poly_modulus_degree=8192, coeff_mod_bits=(60, 40, 60), scale_bits=0),
])
def test_params_refuse_malformed(bad):
    with pytest.raises(ConfigError):
        CkksParams(**bad)


def test_sizes_follow_limbs_ring_and_words() -> None:
    """In-memory RNS sizes, as the in-storage simulator reads them (HEAX Set-C ring)."""
    set_c = CkksParams(16384, (50, 48, 48, 48, 48, 48, 48, 48, 52), 30)
    assert set_c.data_primes == 8 and set_c.levels == 7
    assert set_c.ciphertext_bytes(7) == 2 * 16384 * 8 * 8 == 2 * 1024 * 1024
    assert set_c.ciphertext_bytes(0) == 2 * 16384 * 8
    assert set_c.ciphertext_bytes(3, size=3) == 3 * 16384 * 4 * 8
    assert set_c.plaintext_bytes(5) == 16384 * 6 * 8
    # SEAL key-switching key: one RLWE pair over data+special primes per data prime
    assert set_c.ksk_bytes == 8 * 2 * 9 * 16384 * 8
    with pytest.raises(ConfigError):
        set_c.ciphertext_bytes(8)
    with pytest.raises(ConfigError):
        CkksParams(1000, (40, 40), 30)
    with pytest.raises(ConfigError):
        CkksParams(4096, (40,), 30)


def test_dict_roundtrip_and_refusals() -> None:
    p = CkksParams(8192, (60, 40, 40, 60), 40)
    assert p.to_dict() == {"poly_modulus_degree": 8192, "coeff_modulus_bits": [60, 40, 40, 60], "scale_bits": 40,
                           "slots": 4096}
    assert CkksParams.from_dict(p.to_dict()) == p
    assert CkksParams.from_dict({"poly_modulus_degree": 8192, "coeff_mod_bits": [60, 40, 60], "scale_bits": 40,
                                 "slots": 100}).levels == 1  # a program may use fewer slots
    for bad, msg in [([], "must be an object"), ({"poly_modulus_degree": 8192}, "lack 'coeff_modulus_bits', 'scale_bits'"),
                     (dict(p.to_dict(), coeff_modulus_bits=60), "must be a list"),
                     (dict(p.to_dict(), slots=8192), "slots must be between 1 and N/2 = 4096"),
                     (dict(p.to_dict(), scale_bits="x"), "malformed parameters")]:
        with pytest.raises(CkksError, match=msg):
            CkksParams.from_dict(bad)


def test_the_security_table_reaches_n_65536_and_keeps_seals_below():
    from cryptoffload.crypto.ckks import SEAL_SECURITY_BITS

    assert SEAL_SECURITY_BITS == {1024: 27, 2048: 54, 4096: 109, 8192: 218, 16384: 438, 32768: 881}
    assert CKKS_SECURITY_BITS[65536] == 1747 and CKKS_SECURITY_BITS[131072] == 3523
    assert all(CKKS_SECURITY_BITS[n] == bits for n, bits in SEAL_SECURITY_BITS.items())
    at_bound = CkksParams(65536, (60,) * 28 + (67,), 50)          # 1747 bits
    assert at_bound.total_bits == 1747 and at_bound.is_secure
    at_bound.check_security()
    with pytest.raises(ConfigError, match="1747-bit limit for 128-bit security at N = 65536"):
        CkksParams(65536, (60,) * 28 + (68,), 50).check_security()


def test_the_special_modulus_may_span_several_primes():
    from cryptoffload.crypto.ckks.params import MAX_SPECIAL_BITS

    p = CkksParams(8192, (60, 40, 40, 300), 40)
    assert (p.special_bits, p.single_special_prime, p.total_bits, p.levels) == (300, False, 440, 2)
    assert CkksParams(8192, (60, 40, 60), 40).single_special_prime
    with pytest.raises(ConfigError, match="special modulus"):
        CkksParams(8192, (60, 40, MAX_SPECIAL_BITS + 1), 40)
    with pytest.raises(ConfigError, match="at least 2 primes"):
        CkksParams(8192, (61, 40, 300), 40)          # a data prime is still one prime of <= 60 bits
