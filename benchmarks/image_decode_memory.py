"""Benchmark: the peak memory of ``he-cnn infer --image``'s decoding of adversarial images
(issue 32, item 7), each in a fresh process.

Issue 32 reported: an image under the 50-megapixel ceiling still took 1.2 to 1.6 GB to decode.
This script crafts, at or near the ceiling: a 16-bit RGBA PNG (49 MP), a progressive JPEG
(49 MP), a decompression-bomb PNG (49 MP of 8-bit grey in ~50 KB), a baseline colour JPEG
(49 MP), and the largest RGBA and 16-bit grey PNGs the budget admits. For each it starts a
Python process that imports the decoder, warms it on a tiny JPEG (numba loads its compiled
scan walker), reads its peak resident memory (``VmHWM``), calls
:func:`cryptoffload.apps.he_cnn.digit_image.load_digit_image`, and reads ``VmHWM`` again: the
difference is what decoding the image cost. Beside it, :func:`decode_plan`'s estimate from the
header (what the budget compares with :data:`MAX_DECODE_BYTES`).

    PYTHONPATH=src .venv/bin/python benchmarks/image_decode_memory.py [--baseline SRC] [--quick]

``--baseline SRC`` runs the same files through another checkout's ``src`` (e.g.
``/work/main/src``: the decoder before this change). ``--quick``: the two smallest cases.
Writes benchmarks/results/image_decode_memory.json (with the machine) and prints a table.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import numpy as np
from PIL import Image
from rich.console import Console
from rich.table import Table

from cryptoffload.apps.he_cnn.image_decode import decode_plan
from cryptoffload.apps.he_cnn.png_check import ImageRefused
from cryptoffload.bench import save_results
from cryptoffload.machine import machine_info

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "apps" / "he_cnn"))
from image_craft import png_bytes  # noqa: E402 -- the tests' PNG writer (interlace, 16 bit, any header)

RESULTS = Path(__file__).resolve().parent / "results"
MiB = 2**20

CHILD = r"""
import io, json, sys, time
def hwm():
    return next(int(l.split()[1]) * 1024 for l in open('/proc/self/status') if l.startswith('VmHWM'))
import numpy as np
from PIL import Image
from cryptoffload.errors import CryptoffloadError
from cryptoffload.apps.he_cnn.digit_image import load_digit_image
imported = hwm()
try:  # the decoder of this change walks JPEG scans with numba: load it before measuring
    from cryptoffload.apps.he_cnn.jpeg_check import check_jpeg
    b = io.BytesIO(); Image.new('L', (8, 8)).save(b, 'JPEG'); check_jpeg(b.getvalue())
except ImportError:
    pass
warm = hwm()
t = time.perf_counter()
try:
    load_digit_image(sys.argv[1]); outcome = 'decoded'
except CryptoffloadError as exc:
    outcome = 'refused: ' + ' '.join(str(exc).split())[:150]
print(json.dumps({'imported': imported, 'warm': warm, 'peak': hwm(), 'seconds': time.perf_counter() - t,
                  'outcome': outcome}))
"""


def _zero_png(width: int, height: int, channels: int, depth: int) -> bytes:
    """A PNG of zeros with a consistent stream, compressed row by row (never held inflated)."""
    row = b"\x00" * (1 + width * channels * depth // 8)
    deflate = zlib.compressobj(9)
    stream = b"".join(deflate.compress(row) for _ in range(height)) + deflate.flush()
    pixels = np.zeros((1, 1, channels), dtype=np.uint16 if depth == 16 else np.uint8)
    return png_bytes(pixels if channels > 1 else pixels[..., 0], header_size=(width, height), data=stream)


def _jpeg(side: int, progressive: bool) -> bytes:
    pixels = np.full((side, side, 3), 235, np.uint8)
    pixels[side // 5:4 * side // 5, 2 * side // 5:3 * side // 5] = 20  # a bar: something to find
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, "JPEG", quality=80, progressive=progressive)
    return buf.getvalue()


CASES = {
    "PNG RGBA 16-bit 7000x7000 (49 MP)": lambda: _zero_png(7000, 7000, 4, 16),
    "JPEG progressive 7000x7000 (49 MP)": lambda: _jpeg(7000, True),
    "PNG grey 8-bit bomb 7000x7000 (49 MP)": lambda: _zero_png(7000, 7000, 1, 8),
    "JPEG baseline 7000x7000 (49 MP)": lambda: _jpeg(7000, False),
    "PNG RGBA 8-bit 6400x6400 (largest in budget)": lambda: _zero_png(6400, 6400, 4, 8),
    "PNG grey 16-bit 6400x6400 (largest in budget)": lambda: _zero_png(6400, 6400, 1, 16),
}
QUICK = ("PNG grey 8-bit bomb 7000x7000 (49 MP)", "PNG RGBA 16-bit 7000x7000 (49 MP)")


def _estimate(data: bytes) -> str:
    try:
        return f"{decode_plan(data).total / MiB:.0f}"
    except ImageRefused as exc:
        text = str(exc)
        return f"{text.split('about ')[1].split(' MiB')[0]} (refused)" if "would take about" in text else "refused"


def _run(src: Path, path: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src)}
    proc = subprocess.run([sys.executable, "-c", CHILD, str(path)], env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    if proc.returncode != 0:
        return {"outcome": f"exit {proc.returncode}: {proc.stderr.strip().splitlines()[-1:]}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", type=Path, help="another checkout's src (the decoder before this change)")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    src = Path(__file__).resolve().parent.parent / "src"
    rows = []
    with tempfile.TemporaryDirectory(prefix="image-memory-") as work:
        for name, make in CASES.items():
            if args.quick and name not in QUICK:
                continue
            data = make()
            path = Path(work) / ("image.png" if data[:4] == b"\x89PNG" else "image.jpg")
            path.write_bytes(data)
            row = {"case": name, "file_bytes": len(data), "estimate_mib": _estimate(data)}
            for label, where in (("after", src), ("before", args.baseline)):
                if where is not None:
                    r = _run(where, path)
                    row[label] = r
            rows.append(row)
            print(json.dumps(row), flush=True)
    _show(rows)
    save_results({"machine": machine_info(), "rows": rows, "baseline": str(args.baseline) if args.baseline else None},
                 RESULTS / "image_decode_memory.json", say=print)


def _cost(r: dict | None) -> str:
    if not r or "peak" not in r:
        return "-" if not r else r["outcome"][:30]
    return f"{(r['peak'] - r['warm']) / MiB:,.0f} ({r['peak'] / MiB:,.0f})"


def _show(rows: list[dict]) -> None:
    table = Table(title="peak memory of decoding one image, MiB: decoding's own (the process's peak)")
    for col in ("image", "file", "estimate", "before", "after", "after: outcome"):
        table.add_column(col)
    for row in rows:
        after = row.get("after", {})
        table.add_row(row["case"], f"{row['file_bytes'] / MiB:.2f} MiB", row["estimate_mib"], _cost(row.get("before")),
                      _cost(after), after.get("outcome", "")[:60])
    Console(width=200).print(table)


if __name__ == "__main__":
    main()
