"""Ridge parameters and the key sizes they imply."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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


def _det(rows: list[list[int]]) -> int:
    """Exact determinant (Fraction elimination): the independent reference for the bounds."""
    from fractions import Fraction

    a = [[Fraction(v) for v in row] for row in rows]
    size, det = len(a), Fraction(1)
    for c in range(size):
        pivot = next((r for r in range(c, size) if a[r][c] != 0), None)
        if pivot is None:
            return 0
        if pivot != c:
            a[c], a[pivot] = a[pivot], a[c]
            det = -det
        det *= a[c][c]
        for r in range(c + 1, size):
            f = a[r][c] / a[c][c]
            a[r] = [x - f * y for x, y in zip(a[r], a[c])]
    assert det.denominator == 1
    return int(det)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(d=st.integers(1, 4), records=st.integers(1, 40), max_extra=st.integers(0, 200),
       x_bound=st.sampled_from([0.5, 1.0, 3.0]), y_bound=st.sampled_from([1.0, 10.0, 50.0]),
       lam=st.sampled_from([0.0, 0.25, 1.0, 7.5]), frac_bits=st.integers(0, 20), extreme=st.booleans(),
       seed=st.integers(0, 2**32 - 1))
def test_bounds_hold_for_every_legitimate_run(upload_keys, solve_keys, d, records, max_extra, x_bound, y_bound, lam,
                                              frac_bits, extreme, seed):
    """For data within the declared bounds (uniform, or at the bounds' corners), the protocol's
    integer system A (encoded as a provider encodes it, plus lambda at scale) and b obey the
    bounds for the records sold: |det A_i| <= N, |det A| <= D; and the residue w_i mod n
    reconstructs to det(A_i) / det(A) with exactly those bounds."""
    from fractions import Fraction

    import numpy as np

    from cryptoffload.apps.ridge import Provider, rational_reconstruct

    params = RidgeParams(d=d, max_records=records + max_extra, x_bound=x_bound, y_bound=y_bound, lam=lam,
                         frac_bits=frac_bits)
    rng = np.random.default_rng(seed)
    if extreme:
        X = rng.choice([-x_bound, x_bound], size=(records, d))
        y = rng.choice([-y_bound, y_bound], size=records)
    else:
        X = rng.uniform(-x_bound, x_bound, (records, d))
        y = rng.uniform(-y_bound, y_bound, records)
    sums = Provider(params, upload_keys[0]).encode(X, y).sum(axis=0).tolist()
    rows, cols = params.a_index()
    A = [[0] * d for _ in range(d)]
    for v, i, j in zip(sums[:params.a_values], rows.tolist(), cols.tolist()):
        A[i][j] = A[j][i] = int(v)
    for i in range(d):
        A[i][i] += params.lam_int
    b = [int(v) for v in sums[params.a_values:]]
    num, den = solve_bounds(params, records)
    det = _det(A)
    assert abs(det) <= den
    n = solve_keys[0].n
    for i in range(d):
        Ai = [row[:i] + [b[k]] + row[i + 1:] for k, row in enumerate(A)]
        det_i = _det(Ai)
        assert abs(det_i) <= num
        if det:
            w = det_i * pow(det, -1, n) % n
            assert rational_reconstruct(w, n, num, den) == Fraction(det_i, det)
    assert all(a <= b for a, b in zip(solve_bounds(params, records), solve_bounds(params)))  # never looser


def test_solve_bounds_refuse_a_count_beyond_max_records():
    params = RidgeParams(d=2, max_records=10)
    with pytest.raises(ConfigError, match="record count must be an integer in 0..10"):
        solve_bounds(params, 11)
    with pytest.raises(ConfigError, match="record count"):
        solve_bounds(params, True)
