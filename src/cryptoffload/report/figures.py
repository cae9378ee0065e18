"""A study's figures in the report: each in a ``<figure>`` with a stable id, a caption that says
what it shows, on which machine and when, and a link to itself.

Why captions say machine and date: a figure copied out of the report (a slide, a ticket) is
read without the page around it; a measured curve means nothing without the machine that
measured it, and a simulated one is only as current as the run that drew it. Both come from
the result the figure belongs to (``StudyResult.machine``, ``StudyResult.date``), never from
the machine that assembles the report.

Why read the PNG: :func:`~.plots.save` writes each figure's title and series into the PNG's
text chunks, so the report lists a figure by its title (not its file name) and lays it out at
its own size before it loads (no jumping page).
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from cryptoffload.report.plots import SERIES_KEY, TITLE_KEY

#: an id holds letters, digits, ``-`` and ``_`` only (a file name's dots and spaces become ``-``)
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass(frozen=True)
class FigureInfo:
    """What the report knows of one figure file: its title and series (from the PNG, where it
    carries them) and its size in pixels (0 when unreadable)."""

    file: str
    title: str
    width: int = 0
    height: int = 0
    series: list[dict[str, str]] = field(default_factory=list)


def figure_id(anchor: str, file: str) -> str:
    """The page-wide id of a figure of a study section: ``<section>--fig-<file stem>``."""
    return f"{anchor}--fig-{_UNSAFE.sub('-', Path(file).stem).strip('-') or 'figure'}"


def _fallback_title(file: str) -> str:
    return Path(file).stem.replace("_", " ").replace("-", " ")


def read_figure(path: Path, file: str) -> FigureInfo:
    """The figure at ``path`` (``file`` as the result names it); a figure missing, unreadable or
    drawn before figures carried their title keeps its file name as its title."""
    try:
        from PIL import Image

        with Image.open(path) as im:
            width, height = im.size
            text: Mapping[str, str] = getattr(im, "text", {}) or {}   # a PNG's text chunks
            title = str(text.get(TITLE_KEY) or "").strip()
            try:
                series = json.loads(text.get(SERIES_KEY) or "[]")
            except ValueError:
                series = []
    except (OSError, ValueError, SyntaxError):
        return FigureInfo(file, _fallback_title(file))
    return FigureInfo(file, title or _fallback_title(file), width, height,
                      series if isinstance(series, list) else [])


def run_line(machine: Mapping[str, object], date: str) -> str:
    """``AMD EPYC, 2 cores, no GPU · 2026-12-06 10:41 UTC`` -- where and when a result was made."""
    gpu = machine.get("gpu")
    gpu_text = "no GPU" if not gpu else (gpu.get("name", "a GPU") if isinstance(gpu, Mapping) else str(gpu))
    where = f"{machine.get('cpu', 'unknown CPU')}, {machine.get('cores', '?')} cores, {gpu_text}"
    return f"{where} · {date or 'date not recorded'}"


def figure_html(info: FigureInfo, src: str, html_id: str, number: int, study: str, mode: str,
                machine: Mapping[str, object], date: str) -> str:
    """One figure: the image at its own size (scaled down to the column), its caption and a
    link to itself."""
    e = html.escape
    size = f" width='{info.width}' height='{info.height}'" if info.width and info.height else ""
    return (f"<figure id='{e(html_id)}'><img src='{e(src)}' alt='{e(info.title)}'{size}>"
            f"<figcaption><b>Figure {number}.</b> {e(info.title)} <span class='meta'>· {e(study)}, {e(mode)} run "
            f"on {e(run_line(machine, date))} · <code>{e(info.file)}</code></span> "
            f"<a class='self' href='#{e(html_id)}' title='link to this figure'>#</a></figcaption></figure>")


__all__ = ["FigureInfo", "figure_html", "figure_id", "read_figure", "run_line"]
