"""Ridge parameters and the key sizes they imply."""

from __future__ import annotations

import math

import pytest

from cryptoffload.apps.ridge import (
    Csp,
    RidgeParams,
    check_solve_key,
    check_upload_key,
    required_solve_key_bits,
    run_in_process,
    solve_bounds,
)
from cryptoffload.crypto.paillier import PublicKey
from cryptoffload.errors import ConfigError
from cryptoffload.workloads.ridge_data import generate


def test_required_solve_key_bits_paper_workload():
    params = RidgeParams(d=20, max_records=1_000_000, x_bound=1.0, y_bound=26.0, frac_bits=16, lam=1.0)
    bits = required_solve_key_bits(params)
    num, den = solve_bounds(params)
    assert (2 * num * den).bit_length() + 1 <= bits <= (2 * num * den).bit_length() + 2
    assert 1024 < bits <= 2048  # a standard 2048-bit key suffices for a million records
    print(f"\nrequired solve key bits, n=1e6 d=20 f=16 |x|<=1 |y|<=26: {bits}")
    # grows with d and the bounds
    assert required_solve_key_bits(RidgeParams(d=40, max_records=1_000_000, y_bound=46.0)) > 2048


def test_too_small_solve_key_refused(upload_keys, solve_keys):
    params = RidgeParams(d=20, max_records=1_000_000, y_bound=26.0)
    need = required_solve_key_bits(params)
    with pytest.raises(ConfigError, match=rf"1024-bit solve key is too small.*at least {need} bits"):
        check_solve_key(params, upload_keys[0])
    check_solve_key(params, solve_keys[0])
    data = generate(10, 20, seed=1)
    with pytest.raises(ConfigError, match="too small"):
        run_in_process(data.X, data.y, params, upload_keys=upload_keys, solve_keys=upload_keys)
    with pytest.raises(ConfigError, match="too small"):
        Csp(params, upload_keys, upload_keys)


def test_too_small_upload_key_refused():
    # a toy 101-bit modulus (only its size matters here) cannot hold one 17 + 1 + 7 + 81-bit slot
    toy = PublicKey((1 << 100) + 277)
    params = RidgeParams(d=2, max_records=100, stat_bits=80)
    with pytest.raises(ConfigError, match="upload key is too small.*does not fit"):
        check_upload_key(params, toy)


@pytest.mark.parametrize("kwargs", [
    dict(d=0, max_records=1), dict(d=2, max_records=0), dict(d=2, max_records=1, x_bound=0),
    dict(d=2, max_records=1, y_bound=math.inf), dict(d=2, max_records=1, lam=-1.0),
    dict(d=2, max_records=1, frac_bits=41), dict(d=2, max_records=1, stat_bits=39),
    dict(d=2, max_records=1, symmetric=1), dict(d=2, max_records=1 << 40, y_bound=1e6),
])
def test_params_validated(kwargs):
    with pytest.raises(ConfigError):
        RidgeParams(**kwargs)


def test_check_records_is_the_one_max_records_guard():
    """Every part of the protocol refuses records beyond max_records through this one check,
    counting the records already added."""
    p = RidgeParams(d=2, max_records=10)
    p.check_records(10)
    p.check_records(4, already=6)
    with pytest.raises(ConfigError, match=r"^11 records exceed max_records = 10$"):
        p.check_records(11)
    with pytest.raises(ConfigError, match=r"^11 records exceed max_records = 10; refused$"):
        p.check_records(5, already=6, why="; refused")


def test_session_params_default_y_bound_is_the_generators():
    from cryptoffload.apps.ridge.params import session_params

    assert session_params(d=20, max_records=5).y_bound == 26.0  # d + the noise clip of 6
    assert session_params(d=20, max_records=5, y_bound=3.5).y_bound == 3.5
    p = session_params(d=3, max_records=7, x_bound=2.0, lam=0.5, frac_bits=12, stat_bits=80, min_providers=1)
    assert p == RidgeParams(d=3, max_records=7, x_bound=2.0, y_bound=9.0, lam=0.5, frac_bits=12, stat_bits=80,
                            min_providers=1)
