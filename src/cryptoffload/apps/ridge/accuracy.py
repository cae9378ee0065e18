"""The fixed-point error the ridge protocol is expected to make, and a bound that guards it.

Why not the worst case: ``apps/ridge/params.error_bound`` adds every rounding error with the
same sign and bounds norms by Frobenius norms; on the diabetes data it is about 800x the error
the protocol makes, so a regression that made the protocol 100x less accurate would still pass.
The error actually expected follows from how the protocol computes:

* each record contributes ``round(x_j x_k S)`` and ``round(y x_j S)`` (``S = 2^frac_bits``), so
  each summed entry of ``A`` and ``b`` carries the sum of ``m`` rounding errors, each uniform in
  ``[-1/2, 1/2] / S`` and independent across records and entries: variance ``m / (12 S^2)``
  (the float error of ``x_j x_k``, ~2^-53, is negligible beside ``1/S``);
* the solve is exact: rational reconstruction returns the fraction ``A_int^-1 b_int`` itself
  (the solve key is sized for it), so the rounding of the inputs is the only error;
* to first order ``dw = A^-1 (db - dA w)``; with ``dA`` symmetric (the upper triangle is
  encoded once), ``Cov(db - dA w) = s^2 ((1 + |w|^2) I + w w^T - diag(w^2))``, ``s^2 = m / (12 S^2)``,
  so ``Cov(dw) = A^-1 Cov(db - dA w) A^-1`` and each coefficient's error is close to normal
  (a sum over ``m`` records) with standard deviation ``sigma_i``.

:func:`expected_bound` is ``Z_MARGIN`` standard deviations of the worst coefficient: with
``Z_MARGIN = 4`` a correct protocol exceeds it with probability below ``d * 6.3e-5`` (0.13 % at
d = 20); the data are fixed, so a given data set passes or fails the same way every run.
:func:`replayed_error` computes the rounding error itself (the same rounding as the encoder,
then float solves), which the protocol must match to float precision.
"""

from __future__ import annotations


import numpy as np

#: standard deviations of margin: P(|N(0,1)| > 4) = 6.3e-5 per coefficient
Z_MARGIN = 4.0


def rounding_sigma(xtx: np.ndarray, xty: np.ndarray, m: int, scale: float, lam: float,
                   symmetric: bool = True) -> np.ndarray:
    """Per-coefficient standard deviation of the fixed-point error of the protocol's solution,
    from the normal equations ``X^T X``, ``X^T y``, the record count and the scale ``S``
    (``symmetric=False``: every entry of ``A`` encoded on its own, no ``w w^T`` term)."""
    xtx = np.asarray(xtx, dtype=np.float64)
    d = xtx.shape[0]
    A = xtx + lam * np.eye(d)
    w = np.linalg.solve(A, np.asarray(xty, dtype=np.float64))
    s2 = m / (12.0 * float(scale) ** 2)
    cov_u = s2 * (1.0 + float(w @ w)) * np.eye(d)
    if symmetric:  # dA_jk = dA_kj: the error of (dA w)_j and (dA w)_k share that entry
        cov_u += s2 * (np.outer(w, w) - np.diag(w * w))
    inv = np.linalg.inv(A)
    return np.sqrt(np.clip(np.diag(inv @ cov_u @ inv), 0.0, None))


def expected_bound(xtx: np.ndarray, xty: np.ndarray, m: int, scale: float, lam: float) -> tuple[float, float]:
    """``(sigma_max, Z_MARGIN * sigma_max)``: the largest coefficient's expected error (one
    standard deviation) and the bound a correct run stays within."""
    sigma = float(rounding_sigma(xtx, xty, m, scale, lam).max())
    return sigma, Z_MARGIN * sigma


#: rows replayed at a time: the rounded products of a block (d(d+1)/2 columns) are the only
#: temporaries, so memory does not grow with the record count
REPLAY_BLOCK = 8_192


class ReplaySums:
    """The sums :func:`replayed_error` needs, fed a block of records at a time: the encoder's
    rounded ``rint(x_j x_k S)`` and ``rint(y x_j S)`` summed in integers (exact, so the result
    does not depend on the blocking), the float ``X^T X`` and ``X^T y``, the record count and
    the largest ``|x|`` and ``|y|`` seen. Memory holds one block, whatever the record count."""

    def __init__(self, d: int, scale: float, symmetric: bool = True) -> None:
        self.d, self.scale, self.symmetric = d, float(scale), symmetric
        pairs = np.triu_indices(d) if symmetric else tuple(np.indices((d, d)).reshape(2, -1))
        self._rows: np.ndarray = pairs[0]
        self._cols: np.ndarray = pairs[1]
        self.a_int = np.zeros(len(self._rows), dtype=np.int64)
        self.b_int = np.zeros(d, dtype=np.int64)
        self.xtx = np.zeros((d, d))
        self.xty = np.zeros(d)
        self.records = 0
        self.x_max = 0.0
        self.y_max = 0.0

    def add(self, X: np.ndarray, y: np.ndarray) -> None:
        """Fold records ``X`` (m x d) and ``y`` (m) in, ``REPLAY_BLOCK`` rows at a time."""
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64).ravel()
        S = self.scale
        for lo in range(0, len(y), REPLAY_BLOCK):
            xb, yb = X[lo:lo + REPLAY_BLOCK], y[lo:lo + REPLAY_BLOCK]
            self.a_int += np.rint(xb[:, self._rows] * xb[:, self._cols] * S).astype(np.int64).sum(axis=0)
            self.b_int += np.rint(yb[:, None] * xb * S).astype(np.int64).sum(axis=0)
            self.xtx += xb.T @ xb
            self.xty += xb.T @ yb
            self.x_max = max(self.x_max, float(np.abs(xb).max(initial=0.0)))
            self.y_max = max(self.y_max, float(np.abs(yb).max(initial=0.0)))
        self.records += len(y)

    def error(self, lam_int: int, lam: float) -> np.ndarray:
        """The solution of the rounded system minus the float solution of the exact one."""
        d, S = self.d, self.scale
        A_int = np.zeros((d, d), dtype=np.float64)
        A_int[self._rows, self._cols] = self.a_int
        if self.symmetric:
            A_int[self._cols, self._rows] = self.a_int
        A_int += lam_int * np.eye(d)
        w_round = np.linalg.solve(A_int / S, self.b_int.astype(np.float64) / S)
        w_exact = np.linalg.solve(self.xtx + lam * np.eye(d), self.xty)
        return w_round - w_exact


def replayed_error(X: np.ndarray, y: np.ndarray, scale: float, lam_int: int, lam: float,
                   symmetric: bool = True) -> np.ndarray:
    """The rounding error itself: the solution of the rounded system (the encoder's
    ``rint(x_j x_k S)``, ``rint(y x_j S)`` and ``lambda`` at scale, summed in integers) minus
    the float solution of the exact one. The protocol's coefficients minus the exact ones
    must equal it up to the float error of the two solves. Computed block by block
    (:class:`ReplaySums`), so its temporaries do not grow with the record count."""
    X = np.asarray(X, dtype=np.float64)
    sums = ReplaySums(X.shape[1], scale, symmetric)
    sums.add(X, y)
    return sums.error(lam_int, lam)


def solve_float_error(xtx: np.ndarray, lam: float, w: np.ndarray) -> float:
    """A generous bound on the float error of one float64 solve of the normal equations
    (``cond(A) * |w| * 1e-15``), for comparing two float solutions."""
    A = np.asarray(xtx, dtype=np.float64) + lam * np.eye(np.asarray(xtx).shape[0])
    return float(np.linalg.cond(A)) * max(1.0, float(np.abs(w).max())) * 1e-15 * 10


__all__ = ["REPLAY_BLOCK", "ReplaySums", "Z_MARGIN", "expected_bound", "replayed_error", "rounding_sigma", "solve_float_error"]
