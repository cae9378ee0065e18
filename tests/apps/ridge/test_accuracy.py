"""The expected fixed-point error of the ridge protocol against its closed form: the replayed
rounding errors of many data sets have the standard deviation the model predicts."""

from __future__ import annotations

import numpy as np

from cryptoffload.apps.ridge.accuracy import Z_MARGIN, expected_bound, replayed_error, rounding_sigma


def test_sigma_matches_the_spread_of_replayed_rounding_errors() -> None:
    rng = np.random.default_rng(5)
    m, d, lam, scale = 200, 3, 0.5, 2 ** 6  # a coarse scale: rounding errors dominate float noise
    z = []
    for _ in range(300):
        X = rng.uniform(-1, 1, (m, d))
        y = X @ np.array([0.5, -1.0, 2.0]) + rng.normal(0, 0.1, m)
        err = replayed_error(X, y, scale, round(lam * scale), lam)
        z.append(err / rounding_sigma(X.T @ X, X.T @ y, m, scale, lam))
    z = np.concatenate(z)
    # unit spread within sampling error (900 draws: the std of a std estimate is ~2.4 %)
    assert 0.9 < float(np.std(z)) < 1.1
    assert float(np.mean(np.abs(z) > Z_MARGIN)) < 1e-3


def test_expected_bound_scales_with_the_encoding_scale() -> None:
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (100, 4))
    y = rng.normal(0, 1, 100)
    s16 = expected_bound(X.T @ X, X.T @ y, 100, 2 ** 16, 1.0)
    s20 = expected_bound(X.T @ X, X.T @ y, 100, 2 ** 20, 1.0)
    assert s16[1] == Z_MARGIN * s16[0]
    assert abs(s16[0] / s20[0] - 16) < 1e-9  # sigma is proportional to 1/S
