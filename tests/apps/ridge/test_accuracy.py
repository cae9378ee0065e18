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


def _replay_all_at_once(X: np.ndarray, y: np.ndarray, scale: float, lam_int: int, lam: float) -> np.ndarray:
    """The earlier whole-array replay (every record's rounded products held at once)."""
    d = X.shape[1]
    rows, cols = np.triu_indices(d)
    a_int = np.rint(X[:, rows] * X[:, cols] * scale).astype(np.int64).sum(axis=0)
    A = np.zeros((d, d))
    A[rows, cols] = a_int
    A[cols, rows] = a_int
    A += lam_int * np.eye(d)
    b_int = np.rint(y[:, None] * X * scale).astype(np.int64).sum(axis=0).astype(np.float64)
    return np.linalg.solve(A / scale, b_int / scale) - np.linalg.solve(X.T @ X + lam * np.eye(d), X.T @ y)


def test_streamed_replay_equals_the_whole_array_replay(monkeypatch) -> None:
    import cryptoffload.apps.ridge.accuracy as acc

    monkeypatch.setattr(acc, "REPLAY_BLOCK", 64)   # many blocks, one of them partial
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, (1000, 5))
    y = X @ rng.uniform(-1, 1, 5) + rng.normal(0, 0.1, 1000)
    scale, lam = 2.0 ** 12, 0.5
    whole = _replay_all_at_once(X, y, scale, round(lam * scale), lam)
    sums = acc.ReplaySums(5, scale)
    for lo in range(0, 1000, 300):      # fed in pieces that do not line up with the blocks
        sums.add(X[lo:lo + 300], y[lo:lo + 300])
    one_go = acc.replayed_error(X, y, scale, round(lam * scale), lam)
    assert sums.records == 1000
    assert sums.x_max == float(np.abs(X).max()) and sums.y_max == float(np.abs(y).max())
    np.testing.assert_allclose(sums.xtx, X.T @ X, rtol=1e-12, atol=1e-9)
    # the integer sums are exact, so the rounded solve is the same; only float summation order differs
    np.testing.assert_allclose(sums.error(round(lam * scale), lam), whole, rtol=0, atol=1e-12)
    np.testing.assert_allclose(one_go, whole, rtol=0, atol=1e-12)
