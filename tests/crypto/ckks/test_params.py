"""CkksParams: derived sizes, the 128-bit security bound, refusal of malformed parameters."""

from __future__ import annotations

import pytest

from cryptoffload.crypto.ckks import CKKS_SECURITY_BITS, CkksParams, SealBackend, make_backend
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
