"""Plot helpers: matplotlib without a display, one figure per file, closed after saving.

Why shared helpers for legends and ticks: a legend drawn inside the axes covers data (the
Paillier chart's legend hid the paper's own baselines), and a log axis over device counts
labels 1, 2, 4 as ``10⁰``, ``2×10⁰``. Every study figure places its legend with
:func:`legend_outside` and labels integer counts with :func:`integer_log_ticks`, so neither
comes back one figure at a time.

Why colours by provenance and series by shape: a colour means where a number comes from
(:mod:`.palette`), the same in every figure and in the HTML's badges; which series a line is
shows in its marker and line style, and a figure with more lines than a reader can tell apart
is split into panels. Every PNG carries its title and its series (:func:`save`), so the report
can list figures by title and a test can hold every series to the palette.
"""

from __future__ import annotations

import json
import math
import re
import textwrap
from pathlib import Path
from typing import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.artist import Artist  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.legend import Legend  # noqa: E402
from matplotlib.transforms import offset_copy  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402

from cryptoffload.report.palette import (  # noqa: E402
    NEUTRAL,
    PAPER_LINE_STYLE,
    PROVENANCE_COLOURS,
    SYNONYMS,
    provenance_colour,
    series_style,
)
from cryptoffload.report.provenance import provenance_word  # noqa: E402

#: legend text wraps at this many characters, so an outside legend stays narrower than the plot
LEGEND_WRAP = 48
#: how far under the axes a ``below`` legend starts (points): tick labels and the axis label
BELOW_PT = 44.0
#: integer ticks closer than this fraction of a log axis' span (in decades) are thinned
MIN_TICK_GAP = 1 / 12


def legend_outside(ax: Axes, handles: Sequence[Artist] | None = None, *, where: str = "right",
                   fontsize: float = 8) -> Legend:
    """A legend beside (``right``) or under (``below``) the axes, never over the data; long
    labels wrap. Save with ``bbox_inches="tight"`` (:func:`save`) so the figure grows to hold it."""
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    else:
        labels = [h.get_label() for h in handles]
    labels = [textwrap.fill(str(t), LEGEND_WRAP) for t in labels]
    if where == "below":
        # anchored a fixed distance under the axes (clear of the tick labels and the axis
        # label), whatever the figure's height
        under = offset_copy(ax.transAxes, fig=ax.get_figure(root=True), y=-BELOW_PT, units="points")
        return ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(0.0, 0.0), bbox_transform=under,
                         fontsize=fontsize, ncol=2 if len(labels) > 3 else 1, borderaxespad=0.0)
    return ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=fontsize,
                     borderaxespad=0.0)


def _is_count(v: float) -> bool:
    return math.isfinite(v) and v > 0 and float(v).is_integer()


def count_label(v: float) -> str:
    """``16``, ``1,000``; from ten thousand on ``10k``, ``20k`` (neighbours' labels stay apart)."""
    return f"{v / 1000:g}k" if v >= 10_000 and v % 1000 == 0 else f"{v:,.0f}"


def integer_log_ticks(ax: Axes, values: Sequence[float], axis: str = "x") -> bool:
    """On a log axis whose values are positive whole numbers (device counts, request rates),
    tick those values and label them ``1, 2, 4, 16`` rather than ``10⁰``, ``2×10⁰``; a value
    too close to the last ticked one (under :data:`MIN_TICK_GAP` of the axis' span) is skipped
    so labels never run together. Returns whether it did (other values keep the log ticks)."""
    vals = sorted({float(v) for v in values})
    if not vals or not all(_is_count(v) for v in vals):
        return False
    gap = math.log10(vals[-1] / vals[0]) * MIN_TICK_GAP
    ticks = [vals[0]]
    for v in vals[1:]:
        if math.log10(v / ticks[-1]) >= gap:
            ticks.append(v)
    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_locator(FixedLocator(ticks))
    target.set_major_formatter(FuncFormatter(lambda v, _pos: count_label(v)))
    target.set_minor_locator(NullLocator())
    return True


#: PNG text keys the report reads back: the figure's title, and its series as JSON
#: (``[{"label", "colour", "provenance", "marker", "linestyle"}]``, see :func:`describe`)
TITLE_KEY, SERIES_KEY = "Title", "cryptoffload-series"
#: a figure with more lines than this (ours and the paper's) is split into panels
MAX_PANEL_SERIES = 8


def describe(fig: Figure) -> list[dict[str, str]]:
    """Every labelled line of ``fig`` as :data:`SERIES_KEY` records it (for a figure a study drew
    itself; :func:`line_plot` and :func:`bar_plot` say what they drew, provenance included)."""
    out = []
    for ax in fig.axes:
        for ln in ax.get_lines():
            if not str(ln.get_label()).startswith("_"):
                out.append({"label": str(ln.get_label()), "colour": to_hex(ln.get_color()), "provenance": "",
                            "marker": str(ln.get_marker()), "linestyle": str(ln.get_linestyle())})
    return out


def _title(fig: Figure) -> str:
    sup = fig.get_suptitle()
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    return " ".join((sup or (titles[0] if titles else "")).split())


def save(fig: Figure, path: Path, series: Sequence[Mapping[str, str]] | None = None) -> None:
    """Save tight (an outside legend is inside the picture) and close, even when saving fails.

    The PNG carries its title and its series (:data:`TITLE_KEY`, :data:`SERIES_KEY`): the report
    lists figures by title and a test checks every series' colour against the palette."""
    try:
        meta = {TITLE_KEY: _title(fig), SERIES_KEY: json.dumps(list(series) if series is not None else describe(fig))}
        fig.savefig(path, bbox_inches="tight", metadata=meta if Path(path).suffix.lower() == ".png" else None)
    finally:
        plt.close(fig)


def _drawn(ys: Sequence[float | None]) -> bool:
    """Whether a series has a point to draw (a paper line of only gaps draws nothing)."""
    return any(y is not None and math.isfinite(float(y)) for y in ys)


_PROVENANCE_IN_TEXT = re.compile(r"\b(measured|simulated|predicted|fitted|cited|stored|derived)\b", re.IGNORECASE)


def series_provenance(label: str, title: str = "", declared: str | Mapping[str, str] | None = None) -> str:
    """The provenance a series is coloured by: declared (one word for every series, or one per
    label), else the one the series' label names (``"naive [fitted]"``, ``"ours (measured)"``),
    else the one the title names for the whole figure (``"... (simulated)"``); ``""`` when
    nothing says (drawn in :data:`~.palette.NEUTRAL`, never given a provenance colour by guess)."""
    if isinstance(declared, str):
        return declared
    if declared is not None and label in declared:
        return declared[label]
    for text in (label, title):
        found = _PROVENANCE_IN_TEXT.findall(text)
        words = {SYNONYMS.get(w.lower(), w.lower()) for w in found}
        if len(words) == 1:
            return words.pop()
    return ""


def _panels(series: Mapping[str, Sequence[float]], paper_drawn: set[str]) -> list[list[str]]:
    """Series names grouped into panels of at most :data:`MAX_PANEL_SERIES` lines (a series and
    its paper line stay together), as evenly as the count allows."""
    lines = {name: 1 + (name in paper_drawn) for name in series}
    total = sum(lines.values())
    n_panels = max(1, math.ceil(total / MAX_PANEL_SERIES))
    per = math.ceil(total / n_panels)
    panels: list[list[str]] = [[]]
    used = 0
    for name, n in lines.items():
        # a new panel at the even share while panels remain, else only when this one is full
        if panels[-1] and (used + n > per and len(panels) < n_panels or used + n > MAX_PANEL_SERIES):
            panels.append([])
            used = 0
        panels[-1].append(name)
        used += n
    return panels


def line_plot(path: Path, x: Sequence[float], series: Mapping[str, Sequence[float]], *, title: str,
              xlabel: str, ylabel: str, logx: bool = True, logy: bool = True,
              paper: Mapping[str, Sequence[float | None]] | None = None, paper_x: Sequence[float] | None = None,
              hline: float | None = None, subtitle: str = "", paper_note: str = "",
              provenance: str | Mapping[str, str] | None = None) -> None:
    """Our series in their provenance's colour (:mod:`.palette`), told apart by marker and line
    style; the paper's (if given) dashed, in the cited colour, with the marker of the series it
    stands beside. More than :data:`MAX_PANEL_SERIES` lines are split into panels that share
    their axes, so no series is lost in a crowd. ``paper_note`` (e.g. "dashed: the paper") joins
    the title only when a dashed line was drawn, so a title never names a line the figure lacks."""
    drawn = {name for name in series if paper and name in paper and _drawn(paper[name])}
    panels = _panels(series, drawn)
    fig, axes = plt.subplots(len(panels), 1, figsize=(8, 5 if len(panels) == 1 else 3.6 * len(panels)), dpi=110,
                             sharex=True, sharey=True, squeeze=False)
    records: list[dict[str, str]] = []
    index = {name: i for i, name in enumerate(series)}
    for panel, (ax, names) in enumerate(zip(axes[:, 0], panels)):
        for name in names:
            records += _draw_series(ax, name, index[name], x, series[name], series_provenance(name, title, provenance),
                                    paper[name] if paper and name in drawn else None,
                                    paper_x if paper_x is not None else x, panel)
        _dress(ax, hline, logx, logy, list(x) + list(paper_x if paper and paper_x is not None else []))
        ax.set_ylabel(ylabel)
        legend_outside(ax)
    axes[-1, 0].set_xlabel(xlabel)
    lines = [title + (f"; {paper_note}" if paper_note and drawn else ""), subtitle]
    axes[0, 0].set_title("\n".join(s for s in lines if s), fontsize=10)
    save(fig, path, records)


def _draw_series(ax: Axes, name: str, i: int, x: Sequence[float], ys: Sequence[float], prov: str,
                 paper: Sequence[float | None] | None, paper_x: Sequence[float], panel: int) -> list[dict[str, str]]:
    """One of our series (hollow markers) and, when given, the paper's beside it (filled)."""
    style, col = series_style(i), provenance_colour(prov)
    ax.plot(x, ys, marker=style.marker, ms=style.markersize, mfc="none", mew=1.2, ls=style.linestyle, lw=1.4,
            color=col, label=name)
    out = [{"label": name, "colour": col, "provenance": prov, "marker": style.marker, "linestyle": str(style.linestyle),
            "panel": str(panel)}]
    if paper is not None:
        cited = PROVENANCE_COLOURS["cited"]
        gaps = [math.nan if y is None else float(y) for y in paper]  # None: no paper value
        ax.plot(paper_x, gaps, ls=PAPER_LINE_STYLE, lw=1.0, marker=style.marker, ms=max(3.0, style.markersize - 3),
                color=cited, alpha=0.8, label=f"{name} (paper)")
        out.append({"label": f"{name} (paper)", "colour": cited, "provenance": "cited", "marker": style.marker,
                    "linestyle": PAPER_LINE_STYLE, "panel": str(panel)})
    return out


def _dress(ax: Axes, hline: float | None, logx: bool, logy: bool, xs: Sequence[float]) -> None:
    if hline is not None:
        ax.axhline(hline, color=NEUTRAL, lw=0.8, ls=":")
    if logx:
        ax.set_xscale("log")
        integer_log_ticks(ax, xs)
    if logy:
        ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)


def bar_plot(path: Path, labels: Sequence[str], values: Sequence[float], *, title: str, ylabel: str,
             kinds: Sequence[str] | None = None, paper: Sequence[float | None] | None = None,
             logy: bool = True, hline: float | None = None, hline_label: str = "") -> None:
    """Horizontal comparison of named values. ``kinds`` (a provenance each, e.g. ``measured``,
    ``"measured, scaled to 1M records"``) colour the bars by provenance (:mod:`.palette`), so a
    simulated bar never looks like a measured one; two kinds of one provenance (a qualifier)
    differ by hatching. Paper values are drawn as black crosses. The legend goes under the
    axes: the kinds' explanations are long, and beside a tall chart they would make the picture
    wider than a page."""
    fig, ax = plt.subplots(figsize=(9, max(3.0, 0.38 * len(labels) + 1.2)), dpi=110)
    kind_list = list(kinds) if kinds is not None else ["value"] * len(labels)
    style = _bar_styles(kind_list)
    ys = list(range(len(labels)))[::-1]
    from matplotlib.patches import Patch

    for y, v, k in zip(ys, values, kind_list):
        ax.barh([y], [v], color=style[k][0], hatch=style[k][1], edgecolor="white")
    handles: list = [Patch(facecolor=c, hatch=h, edgecolor="white", label=k) for k, (c, h) in style.items()]
    records = [{"label": k, "colour": c, "provenance": provenance_word(k), "marker": "bar", "linestyle": h or "solid"}
               for k, (c, h) in style.items()]
    if paper is not None:
        px = [(v, y) for v, y in zip(paper, ys) if v is not None]
        if px:
            cited = PROVENANCE_COLOURS["cited"]
            handles += ax.plot([v for v, _ in px], [y for _, y in px], "x", color=cited, ms=7, mew=2, label="paper")
            records.append({"label": "paper", "colour": cited, "provenance": "cited", "marker": "x", "linestyle": "None"})
    if hline is not None:
        handles.append(ax.axvline(hline, color=NEUTRAL, lw=0.8, ls=":", label=hline_label or "reference"))
    ax.set_yticks(ys)
    ax.set_yticklabels(labels, fontsize=8)
    if logy:
        ax.set_xscale("log")
    ax.set_xlabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, axis="x", which="both", alpha=0.3)
    legend_outside(ax, handles, where="below")
    save(fig, path, records)


#: hatches telling apart two kinds of bars of one provenance (the first has none)
HATCHES = ("", "//", "..", "xx", "\\\\")


def _bar_styles(kinds: Sequence[str]) -> dict[str, tuple[str, str]]:
    """Each kind's (colour, hatch): the colour of its provenance, a hatch per further kind of it."""
    seen: dict[str, int] = {}
    out: dict[str, tuple[str, str]] = {}
    for k in dict.fromkeys(kinds):
        col = provenance_colour(k)
        out[k] = (col, HATCHES[seen.get(col, 0) % len(HATCHES)])
        seen[col] = seen.get(col, 0) + 1
    return out


__all__ = ["LEGEND_WRAP", "MAX_PANEL_SERIES", "SERIES_KEY", "TITLE_KEY", "bar_plot", "count_label", "describe",
           "integer_log_ticks", "legend_outside", "line_plot", "save", "series_provenance"]
