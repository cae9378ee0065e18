"""Linear algebra modulo n and rational reconstruction: the CSP's solve and the buyer's recovery.

Why modulo n: the masked normal equations are decrypted as residues modulo the solve key's n,
solved there by Gauss-Jordan elimination, and each coefficient is turned back into the exact
fraction it stands for by Wang's rational reconstruction.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Sequence

import gmpy2

from cryptoffload.checks import check_int
from cryptoffload.errors import ConfigError, CryptoffloadError


class SingularMatrixError(CryptoffloadError):
    """The (masked) normal-equation matrix is not invertible modulo the solve key's n."""


class ReconstructionError(CryptoffloadError):
    """No fraction within the bounds matches a residue: the bounds were violated or n is too small."""



def solve_mod(matrix: Sequence[Sequence[int]], rhs: Sequence[int], n: int) -> list[int]:
    """x with ``matrix @ x = rhs (mod n)`` by Gauss-Jordan elimination; a pivot must be a unit
    mod n. Raises :class:`SingularMatrixError` when a column has none (for an RSA modulus a
    non-zero non-unit would reveal a factor, so that means singular in practice)."""
    d = len(matrix)
    if len(rhs) != d or any(len(row) != d for row in matrix):
        raise ConfigError("solve_mod needs a square matrix and a right-hand side of the same size")
    nn = gmpy2.mpz(n)
    rows = [[gmpy2.mpz(v) % nn for v in row] + [gmpy2.mpz(rhs[i]) % nn] for i, row in enumerate(matrix)]
    for col in range(d):
        pivot = next((r for r in range(col, d) if rows[r][col] and gmpy2.gcd(rows[r][col], nn) == 1), None)
        if pivot is None:
            raise SingularMatrixError(
                f"the matrix is singular modulo n (no invertible pivot in column {col}): A + lambda*I has no "
                "inverse, e.g. collinear features with lambda = 0; refusing to solve")
        rows[col], rows[pivot] = rows[pivot], rows[col]
        inv = gmpy2.invert(rows[col][col], nn)
        prow = [v * inv % nn for v in rows[col]]
        rows[col] = prow
        for r in range(d):
            f = rows[r][col]
            if r != col and f:
                rows[r] = [(a - f * b) % nn for a, b in zip(rows[r], prow)]
    return [int(rows[i][d]) for i in range(d)]


def invertible_mod(matrix: Sequence[Sequence[int]], n: int) -> bool:
    try:
        solve_mod(matrix, [0] * len(matrix), n)
    except SingularMatrixError:
        return False
    return True


def rational_reconstruct(a: int, n: int, num_bound: int | None = None, den_bound: int | None = None) -> Fraction:
    """The fraction p/q with |p| <= num_bound, 0 < q <= den_bound and p = a q (mod n).

    Requires ``2 * num_bound * den_bound < n`` (then at most one such fraction exists, and the
    extended Euclidean algorithm on (n, a), stopped at the first remainder <= num_bound,
    finds it: Wang's rational reconstruction). Default bounds: both floor(sqrt(n/2)), hence
    ``|p|, q <= sqrt(n/2)``. Raises :class:`ReconstructionError` when no fraction fits."""
    n = check_int("modulus n", n, minimum=2)
    N = math.isqrt(n // 2) if num_bound is None else num_bound
    D = N if den_bound is None else den_bound
    if N < 0 or D < 1 or 2 * N * D >= n:
        raise ConfigError(f"rational reconstruction needs 2 * num_bound * den_bound < n (got N={N}, D={D})")
    r0, r1 = n, a % n
    t0, t1 = 0, 1
    while r1 > N:
        q = r0 // r1
        r0, r1 = r1, r0 - q * r1
        t0, t1 = t1, t0 - q * t1
    if t1 == 0 or abs(t1) > D or math.gcd(r1, abs(t1)) != 1:
        raise ReconstructionError(
            "no fraction within the bounds matches this residue: the data broke the declared bounds, "
            "or the solve key is too small")
    return Fraction(r1, t1) if t1 > 0 else Fraction(-r1, -t1)
