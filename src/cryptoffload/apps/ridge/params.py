"""What every ridge party agrees on before data moves, and the key and slot sizes it implies.

:class:`RidgeParams` holds the declared bounds (not measured ones); from them follow the
packing of one record under the upload key (:func:`upload_layout`), the Hadamard bounds on
the solution's fractions (:func:`solve_bounds`) and so the smallest solve key for exact
recovery (:func:`required_solve_key_bits`), and the fixed-point error bound a run is checked
against (:func:`error_bound`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cryptoffload.checks import BOUND, LAMBDA, check_bounded, check_int
from cryptoffload.crypto.packing import PackingError, PackingLayout
from cryptoffload.crypto.paillier import MIN_SECURE_KEY_BITS, PublicKey
from cryptoffload.errors import ConfigError
from cryptoffload.workloads.ridge_data import algorithm1_y_bound

#: largest fractional bits accepted: values and their sums must stay inside numpy's int64
MAX_FRAC_BITS = 40
MIN_STAT_BITS = 40
#: zero bits on top of every masked slot: the CSP refuses a provider's contribution whose
#: masked sums reach them (:mod:`cryptoffload.crypto.packing`, "Check bits"). One bit keeps
#: the paper's workload at 20 plaintexts per record; more would only catch more *random*
#: garbage, never a targeted value (docs/apps/ridge.md, threat model)
CHECK_BITS = 1
#: most provider contributions one unpack request carries (sizes the CSP's body limit)
MAX_PROVIDERS = 256


@dataclass(frozen=True)
class RidgeParams:
    """What all parties agree on before any data moves (declared, not measured, bounds).

    ``x_bound`` and ``y_bound`` bound every |x_j| and |y| (a provider refuses records beyond
    them: the slot sizes and the solve key size rest on them); ``max_records`` bounds the
    total number of records over all providers (the guard bits); ``lam`` is scikit-learn's
    ``alpha``; ``stat_bits`` the statistical hiding of the unpacking masks (40 or 80);
    ``min_providers`` the fewest providers whose data a model may be bought from (the
    platform and the CSP refuse fewer: with one provider the model is that provider's own).
    """

    d: int
    max_records: int
    x_bound: float = 1.0
    y_bound: float = 1.0
    lam: float = 1.0
    frac_bits: int = 16
    stat_bits: int = 40
    symmetric: bool = True
    min_providers: int = 2

    def __post_init__(self) -> None:
        check_int("dimension d", self.d)
        check_int("min_providers", self.min_providers, maximum=1024)
        check_int("max_records", self.max_records)
        check_bounded("x_bound", self.x_bound, BOUND)
        check_bounded("y_bound", self.y_bound, BOUND)
        check_bounded("lambda", self.lam, LAMBDA, allow_zero=True)
        if isinstance(self.frac_bits, bool) or not isinstance(self.frac_bits, int) or not 0 <= self.frac_bits <= MAX_FRAC_BITS:
            raise ConfigError(f"frac_bits must be an integer in 0..{MAX_FRAC_BITS}, got {self.frac_bits!r}")
        if isinstance(self.stat_bits, bool) or not isinstance(self.stat_bits, int) or not MIN_STAT_BITS <= self.stat_bits <= 256:
            raise ConfigError(f"stat_bits must be an integer in {MIN_STAT_BITS}..256, got {self.stat_bits!r}")
        if not isinstance(self.symmetric, bool):
            raise ConfigError(f"symmetric must be True or False, got {self.symmetric!r}")
        if self.max_records * max(self.a_entry_bound, self.b_entry_bound) >= 1 << 62:
            raise ConfigError("bounds too large: summed fixed-point values would not fit 64-bit integers "
                              "(lower frac_bits, x_bound, y_bound or max_records)")

    def check_records(self, records: int, *, already: int = 0, why: str = "") -> None:
        """Refuse ``already + records`` records beyond :attr:`max_records` (the slots' guard
        bits were sized for that many additions) before anything is added; ``why`` ends the
        message (e.g. what would happen otherwise)."""
        if already + records > self.max_records:
            raise ConfigError(f"{already + records} records exceed max_records = {self.max_records}{why}")

    @property
    def scale(self) -> int:
        return 1 << self.frac_bits

    @property
    def a_entry_bound(self) -> int:
        """Largest |round(x_j x_k 2^f)| of one record. Computed with the same float operations
        as the encoder (rounding is monotone), so no record within the bounds exceeds it."""
        return math.ceil(self.x_bound * self.x_bound * self.scale)

    @property
    def b_entry_bound(self) -> int:
        """Largest |round(y x_j 2^f)| of one record."""
        return math.ceil(self.y_bound * self.x_bound * self.scale)

    @property
    def lam_int(self) -> int:
        """lambda at scale 2^f, as added to the diagonal of the summed A."""
        return round(self.lam * self.scale)

    @property
    def value_bits(self) -> int:
        """Magnitude bits of one record's values; one slot width for A and b alike."""
        return max(self.a_entry_bound, self.b_entry_bound, 1).bit_length()

    @property
    def a_values(self) -> int:
        return self.d * (self.d + 1) // 2 if self.symmetric else self.d * self.d

    @property
    def value_count(self) -> int:
        """Values per record: the A part (upper triangle or all of it) then b."""
        return self.a_values + self.d

    def a_index(self) -> tuple[np.ndarray, np.ndarray]:
        """Row and column of each A value in the record vector (upper triangle row-major, or
        the whole matrix row-major)."""
        if self.symmetric:
            return np.triu_indices(self.d)
        rows, cols = np.indices((self.d, self.d))
        return rows.ravel(), cols.ravel()


def session_params(*, d: int, max_records: int, x_bound: float = 1.0, y_bound: float | None = None,
                   lam: float = 1.0, frac_bits: int = 16, stat_bits: int = 40, min_providers: int = 2) -> RidgeParams:
    """A CSP's session parameters as declared on its command line; an undeclared ``y_bound``
    is the bound of the generator of Zhou and Hua's Algorithm 1 for ``d`` features (d + 6),
    so the generated data sets of the demo and the study fit it."""
    if y_bound is None:
        y_bound = algorithm1_y_bound(d) if d > 0 else 1.0
    return RidgeParams(d=d, max_records=max_records, x_bound=x_bound, y_bound=y_bound, lam=lam, frac_bits=frac_bits,
                       stat_bits=stat_bits, min_providers=min_providers)


def upload_layout(params: RidgeParams, upload_pk: PublicKey) -> PackingLayout:
    """The packing of one record under the upload key: one slot per value, guard bits for
    ``max_records`` additions, ``stat_bits`` of mask headroom and :data:`CHECK_BITS`. Raises :class:`ConfigError`
    when one slot does not fit the key."""
    try:
        return PackingLayout.for_key(upload_pk, params.value_bits, params.max_records, mask_bits=params.stat_bits,
                                     check_bits=CHECK_BITS)
    except PackingError as exc:
        raise ConfigError(f"the upload key is too small for these bounds: {exc}") from None


def check_upload_key(params: RidgeParams, upload_pk: PublicKey) -> PackingLayout:
    """Same as :func:`upload_layout`, named for what callers use it for."""
    return upload_layout(params, upload_pk)


def _ceil_isqrt(v: int) -> int:
    r = math.isqrt(v)
    return r if r * r == v else r + 1


def solve_bounds(params: RidgeParams, records: int | None = None) -> tuple[int, int]:
    """``(num_bound, den_bound)`` on Cramer's fractions ``w_i = det(A_i) / det(A)`` for a
    system summed over ``records`` records (default ``max_records``, the bound a key is sized
    for; the buyer passes the count it was sold, for the tightest check).

    A is the integer matrix sum_i round(x x^T 2^f) + round(lambda 2^f) I over M records:
    off-diagonal |A_jk| <= M a, diagonal |A_jj| <= M a + L (a =
    :attr:`RidgeParams.a_entry_bound`, L = lambda at scale), so every row (and column, A is
    symmetric) has norm <= rho with rho^2 = (d-1)(M a)^2 + (M a + L)^2; |b_j| <= M c
    (c = :attr:`RidgeParams.b_entry_bound`), ||b|| <= beta with beta^2 = d (M c)^2.
    Hadamard's inequality: |det A| <= rho^d = den_bound and |det A_i| <= beta rho^(d-1) =
    num_bound (both rounded up to integers). A reduced fraction's numerator and denominator
    divide these determinants, so they obey the same bounds. Valid for any matrix within the
    entry bounds, not only positive definite ones (A as rounded need not be exactly PSD)."""
    m = params.max_records if records is None else records
    if isinstance(m, bool) or not isinstance(m, int) or not 0 <= m <= params.max_records:
        raise ConfigError(f"record count must be an integer in 0..{params.max_records}, got {m!r}")
    d = params.d
    a, c, lam = params.a_entry_bound, params.b_entry_bound, params.lam_int
    rho2 = (d - 1) * (m * a) ** 2 + (m * a + lam) ** 2
    beta2 = d * (m * c) ** 2
    return max(_ceil_isqrt(beta2 * rho2 ** (d - 1)), 0), max(_ceil_isqrt(rho2 ** d), 1)


def required_solve_key_bits(params: RidgeParams) -> int:
    """Smallest even key size whose every modulus satisfies ``n > 2 * num_bound * den_bound``
    (:func:`solve_bounds`), the condition under which rational reconstruction returns the
    true coefficient: a k-bit n is >= 2^(k-1), so k = bit_length(2 N D) + 1, rounded up to
    even. This is the mathematical minimum; keys below 2048 bits are refused for security
    regardless (the in-process runner uses max(2048, this))."""
    num, den = solve_bounds(params)
    bits = (2 * num * den).bit_length() + 1
    return bits + (bits & 1)


def solve_key_bits(params: RidgeParams, asked: int | None = None) -> int:
    """The solve key's size: ``asked``, or max(2048, :func:`required_solve_key_bits`) -- exact
    recovery's minimum, never below 112-bit security. The one statement of the rule: the CSP
    server, the in-process runner and the study all size their solve keys here."""
    return asked if asked is not None else max(MIN_SECURE_KEY_BITS, required_solve_key_bits(params))


def check_solve_key(params: RidgeParams, solve_pk: PublicKey) -> None:
    """Refuse a solve key whose n is too small for exact reconstruction (one-line message)."""
    num, den = solve_bounds(params)
    if not solve_pk.n > 2 * num * den:
        raise ConfigError(
            f"the {solve_pk.bits}-bit solve key is too small for these bounds: exact recovery needs "
            f"n > 2 * num_bound * den_bound, i.e. at least {required_solve_key_bits(params)} bits")


def error_bound(X: np.ndarray, y: np.ndarray, params: RidgeParams) -> float:
    """Bound on ||w_ours - w_exact||_2 due to fixed point, for data (X, y) in the clear.

    w_exact = (X^T X + lambda I)^-1 X^T y; ours solves (A + dA) w = b + db exactly, where
    dA, db are the rounding errors of the m per-record entries (each within 1/(2 S) plus
    the float error of x_j x_k, <= x^2 2^-53, with S = 2^f) and of lambda (1/(2 S) on the
    diagonal). So |dA_jk| <= e_A = (m + 1)/(2 S) + m x_max^2 2^-53, ||dA||_2 <= ||dA||_F <=
    d e_A, and ||db||_2 <= sqrt(d) m (1/(2 S) + x_max y_max 2^-53). The standard perturbation
    bound ||dw|| <= ||(A + dA)^-1|| (||db|| + ||dA|| ||w||) with
    ||(A + dA)^-1|| <= ||A^-1|| / (1 - ||A^-1|| ||dA||) gives the value returned (infinite if
    ||A^-1|| ||dA|| >= 1). Needs the data, so it is a validation tool, not a protocol step."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64).ravel()
    xmax = float(np.abs(X).max()) if X.size else 0.0
    ymax = float(np.abs(y).max()) if y.size else 0.0
    return error_bound_from_normal(X.T @ X, X.T @ y, X.shape[0], xmax, ymax, params)


def error_bound_from_normal(xtx: np.ndarray, xty: np.ndarray, m: int, xmax: float, ymax: float,
                            params: RidgeParams) -> float:
    """:func:`error_bound` from the normal equations (X^T X, X^T y), the record count and the
    largest |x|, |y| -- what a distributed run accumulates without keeping the data."""
    d = xtx.shape[0]
    S = float(params.scale)
    A = xtx + params.lam * np.eye(d)
    w = np.linalg.solve(A, xty)
    lmin = float(np.linalg.eigvalsh(A).min())
    if lmin <= 0:
        return math.inf
    e_a = (m + 1) / (2 * S) + m * xmax * xmax * 2.0 ** -53
    norm_da = d * e_a
    norm_db = math.sqrt(d) * m * (1 / (2 * S) + xmax * ymax * 2.0 ** -53)
    inv = 1.0 / lmin
    if inv * norm_da >= 1:
        return math.inf
    return inv / (1 - inv * norm_da) * (norm_db + norm_da * float(np.linalg.norm(w)))

