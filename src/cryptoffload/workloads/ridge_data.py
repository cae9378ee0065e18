"""Data sets for the private ridge regression app: the QAT Paillier paper's generator (Zhou and Hua), CSV files, diabetes.

Every loader returns a :class:`RidgeData` with the *declared* bounds ``x_bound`` and
``y_bound`` that the protocol's parameters need (slot widths and the solve key size rest on
them, and a provider refuses a record beyond them).

Synthetic data (Zhou and Hua, Algorithm 1)
--------------------------------------
The seed paper gives the generator as "n records, d dimensions, X random, beta random,
y = X beta + e with e ~ N(0, 1)" and leaves the distributions of X and beta open. Our choices:

* ``X`` uniform in [-1, 1) entry by entry, so ``x_bound = 1`` (the fixed-point values of
  x x^T then have 17 bits at 16 fractional bits, as in the paper's 17-plaintext packing);
* ``beta`` uniform in [-1, 1)^d;
* ``e`` standard normal, clipped to [-noise_clip, noise_clip] (default 6 sigma). The clip is
  what makes an a-priori ``y_bound`` exist; it changes a draw with probability 2e-9 (about
  0.002 records in a million), i.e. not measurably.

Hence ``|y| <= ||beta||_1 + noise_clip <= d + noise_clip``: ``y_bound = d + noise_clip``
(26 for d = 20), a bound that holds for every seed, so keys can be sized before generating.

Each quantity has its own random stream (``default_rng(seed).spawn(3)``): X rows, beta, noise.
Numpy draws are sequential within a stream, so :func:`iter_generated` in chunks produces
exactly the rows of :func:`generate` (a million records never need to be in memory at once),
and a shorter data set of the same seed is a prefix of a longer one.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from cryptoffload.checks import BOUND, check_int, check_positive, is_number, shown
from cryptoffload.errors import ConfigError
from cryptoffload.io import read_input_text

MAX_CSV_BYTES = 256 * 1024 * 1024  # a data set's CSV (about 1.5 million records of 20 features)
DEFAULT_NOISE_CLIP = 6.0


@dataclass(frozen=True)
class RidgeData:
    """Records ``X`` (n x d), targets ``y`` (n), declared bounds and (for synthetic data) beta."""

    X: np.ndarray
    y: np.ndarray
    x_bound: float
    y_bound: float
    name: str
    beta: np.ndarray | None = None
    feature_names: tuple[str, ...] = ()

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        return int(self.X.shape[1])


def algorithm1_y_bound(d: int, noise_clip: float = DEFAULT_NOISE_CLIP) -> float:
    """The a-priori |y| bound of :func:`generate`: ||beta||_1 * max|x| + clip <= d + clip."""
    return float(d) + float(noise_clip)


def _streams(seed: int) -> list[np.random.Generator]:
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(3)]


def iter_generated(n: int, d: int, seed: int = 0, *, chunk: int = 65536,
                   noise_clip: float = DEFAULT_NOISE_CLIP) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Chunks ``(X, y)`` of the data set :func:`generate` returns, in order."""
    n, d = check_int("n (records)", n), check_int("d (dimensions)", d)
    chunk = check_int("chunk", chunk)
    noise_clip = check_positive("noise_clip", noise_clip)
    x_rng, beta_rng, e_rng = _streams(seed)
    bound = algorithm1_y_bound(d, noise_clip)
    beta = beta_rng.uniform(-1.0, 1.0, d)
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        X = x_rng.uniform(-1.0, 1.0, (m, d))
        e = np.clip(e_rng.standard_normal(m), -noise_clip, noise_clip)
        # |X beta + e| <= d + clip in exact arithmetic; the clip to y_bound only absorbs float
        # rounding, so the declared bound holds for every record
        yield X, np.clip(X @ beta + e, -bound, bound)


def generate(n: int, d: int, seed: int = 0, *, noise_clip: float = DEFAULT_NOISE_CLIP) -> RidgeData:
    """Zhou and Hua's Algorithm 1 (module docstring): n records of d features, y = X beta + e."""
    n, d = check_int("n (records)", n), check_int("d (dimensions)", d)
    parts = list(iter_generated(n, d, seed, noise_clip=noise_clip))
    X = np.concatenate([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    beta = _streams(seed)[1].uniform(-1.0, 1.0, d)
    return RidgeData(X, y, 1.0, algorithm1_y_bound(d, noise_clip), f"algorithm1(n={n}, d={d}, seed={seed})", beta)




def load_csv(path: str | Path, *, y_column: int | str = -1, header: bool | None = None, delimiter: str = ",",
             x_bound: float | None = None, y_bound: float | None = None) -> RidgeData:
    """Records from a CSV file: one record per row, features and the target as numbers.

    ``header``: True/False, or None to detect one (a first row with any non-numeric field).
    ``y_column``: index of the target (default the last column) or, with a header, its name.
    ``x_bound``/``y_bound``: declared bounds; a value beyond them is refused. Without them
    the bounds are the data's own max |x| and max |y| (note that publishing a bound derived
    from the data reveals that maximum to the other parties). Bad rows raise
    :class:`ConfigError` naming file, line and column. Blank lines are skipped."""
    path = Path(path)
    text = read_input_text(path, "CSV file", max_bytes=MAX_CSV_BYTES, error=ConfigError, encoding="utf-8-sig")
    return csv_from_text(text, path, y_column=y_column, header=header, delimiter=delimiter, x_bound=x_bound,
                         y_bound=y_bound)


def csv_from_text(text: str, path: str | Path = "CSV", *, y_column: int | str = -1, header: bool | None = None,
                  delimiter: str = ",", x_bound: float | None = None, y_bound: float | None = None) -> RidgeData:
    """:func:`load_csv` of CSV text (``path`` names it in messages)."""
    path = Path(path)
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    try:
        rows = [(i + 1, row) for i, row in enumerate(reader) if row and any(cell.strip() for cell in row)]
    except csv.Error as exc:
        raise ConfigError(f"{path}:{reader.line_num}: not a CSV file ({exc})") from None
    if not rows:
        raise ConfigError(f"{path}: no records")
    first_line, first = rows[0]
    if header is None:
        header = not all(is_number(cell.strip()) for cell in first)
    names: list[str] = []
    if header:
        names = [cell.strip() for cell in first]
        rows = rows[1:]
        if not rows:
            raise ConfigError(f"{path}: a header but no records")
    width = len(names) if names else len(rows[0][1])
    if width < 2:
        raise ConfigError(f"{path} line {rows[0][0]}: need at least one feature and a target, got {width} column(s)")
    if isinstance(y_column, str):
        if not names:
            raise ConfigError(f"{path}: y column {y_column!r} given by name but the file has no header")
        if y_column not in names:
            raise ConfigError(f"{path}: no column named {y_column!r} (columns: {', '.join(names)})")
        ycol = names.index(y_column)
    elif isinstance(y_column, bool) or not isinstance(y_column, int) or not -width <= y_column < width:
        raise ConfigError(f"{path}: y column {y_column!r} out of range for {width} columns")
    else:
        ycol = y_column % width
    data = np.empty((len(rows), width), dtype=np.float64)
    for r, (line, row) in enumerate(rows):
        if len(row) != width:
            raise ConfigError(f"{path} line {line}: expected {width} columns, got {len(row)}")
        for c, cell in enumerate(row):
            data[r, c] = _cell(path, line, c, cell)
    y = data[:, ycol].copy()
    X = np.delete(data, ycol, axis=1)
    xb = _bound(path, "x", X, x_bound, rows, (lambda idx: idx[1] + (idx[1] >= ycol)))
    yb = _bound(path, "y", y[:, None], y_bound, rows, lambda idx: ycol)
    feature_names = tuple(n for i, n in enumerate(names) if i != ycol) if names else ()
    return RidgeData(X, y, xb, yb, path.name, None, feature_names)


def _cell(path: Path, line: int, column: int, cell: str) -> float:
    """One value: a decimal number (the one grammar: no ``nan``, ``inf``, ``1_000`` or other
    scripts' digits, which ``float()`` reads) of magnitude at most the ceiling of a declared
    bound (:data:`~cryptoffload.checks.BOUND`: the protocol squares it)."""
    text = cell.strip()
    if not is_number(text):
        raise ConfigError(f"{path} line {line}, column {column + 1}: {shown(text)} is not a decimal number")
    v = float(text)
    if not abs(v) <= BOUND.ceiling:
        raise ConfigError(f"{path} line {line}, column {column + 1}: {shown(text)} is outside "
                          f"+-{BOUND.ceiling:g} (the largest |x| or |y| the protocol encodes)")
    return v


def _bound(path: Path, what: str, arr: np.ndarray, declared: float | None, rows: list, col_of) -> float:
    observed = float(np.abs(arr).max())
    if declared is None:
        return max(observed, BOUND[0]) if observed > 0 else 1.0  # a bound, so never below the protocol's floor
    if not (isinstance(declared, (int, float)) and math.isfinite(declared) and declared > 0):
        raise ConfigError(f"{what}_bound must be a positive finite number, got {declared!r}")
    if observed > declared:
        idx = np.argwhere(np.abs(arr) > declared)[0]
        raise ConfigError(f"{path} line {rows[idx[0]][0]}, column {col_of(idx) + 1}: |{what}| = "
                          f"{abs(arr[idx[0], idx[1]])} exceeds the declared {what}_bound {declared}")
    return float(declared)


def load_diabetes_scaled() -> RidgeData:
    """scikit-learn's diabetes data (442 records, 10 features, shipped with scikit-learn, no
    download) with each feature divided by its max |value| so that |x| <= 1 (the features are
    already mean-centred); y is the raw disease progression (25..346), y_bound = max |y|."""
    from sklearn.datasets import load_diabetes

    ds = load_diabetes()
    X = np.asarray(ds.data, dtype=np.float64)
    X = X / np.abs(X).max(axis=0)
    y = np.asarray(ds.target, dtype=np.float64)
    return RidgeData(X, y, 1.0, float(np.abs(y).max()), "diabetes", None, tuple(ds.feature_names))
