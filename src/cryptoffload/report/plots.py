"""Plot helpers: matplotlib without a display, one figure per file, closed after saving.

Why shared helpers for legends and ticks: a legend drawn inside the axes covers data (the
Paillier chart's legend hid the paper's own baselines), and a log axis over device counts
labels 1, 2, 4 as ``10⁰``, ``2×10⁰``. Every study figure places its legend with
:func:`legend_outside` and labels integer counts with :func:`integer_log_ticks`, so neither
comes back one figure at a time.
"""

from __future__ import annotations

import math
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


def save(fig: Figure, path: Path) -> None:
    """Save tight (an outside legend is inside the picture) and close, even when saving fails."""
    try:
        fig.savefig(path, bbox_inches="tight")
    finally:
        plt.close(fig)


def _drawn(ys: Sequence[float | None]) -> bool:
    """Whether a series has a point to draw (a paper line of only gaps draws nothing)."""
    return any(y is not None and math.isfinite(float(y)) for y in ys)


def line_plot(path: Path, x: Sequence[float], series: Mapping[str, Sequence[float]], *, title: str,
              xlabel: str, ylabel: str, logx: bool = True, logy: bool = True,
              paper: Mapping[str, Sequence[float | None]] | None = None, paper_x: Sequence[float] | None = None,
              hline: float | None = None, subtitle: str = "", paper_note: str = "") -> None:
    """Our series as solid lines; the paper's (if given) as dashed lines of the same colour.
    ``paper_note`` (e.g. "dashed: the paper") joins the title only when a dashed line was
    drawn, so a title never names a line the figure lacks."""
    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    dashed = False
    for i, (name, ys) in enumerate(series.items()):
        col = colors[i % len(colors)]
        ax.plot(x, ys, marker="o", ms=3, color=col, label=name)
        if paper and name in paper and _drawn(paper[name]):
            dashed = True
            gaps = [math.nan if y is None else float(y) for y in paper[name]]  # None: no paper value
            ax.plot(paper_x if paper_x is not None else x, gaps, ls="--", marker="x", ms=3,
                    color=col, alpha=0.6, label=f"{name} (paper)")
    if hline is not None:
        ax.axhline(hline, color="grey", lw=0.8, ls=":")
    if logx:
        ax.set_xscale("log")
        integer_log_ticks(ax, list(x) + list(paper_x if paper and paper_x is not None else []))
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    lines = [title + (f"; {paper_note}" if paper_note and dashed else ""), subtitle]
    ax.set_title("\n".join(s for s in lines if s), fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    legend_outside(ax)
    save(fig, path)


def bar_plot(path: Path, labels: Sequence[str], values: Sequence[float], *, title: str, ylabel: str,
             kinds: Sequence[str] | None = None, paper: Sequence[float | None] | None = None,
             logy: bool = True, hline: float | None = None, hline_label: str = "") -> None:
    """Horizontal comparison of named values; ``kinds`` (e.g. measured/simulated) colour the
    bars so a simulated bar never looks like a measured one; paper values are drawn as markers.
    The legend goes under the axes: the kinds' explanations are long, and beside a tall chart
    they would make the picture wider than a page."""
    fig, ax = plt.subplots(figsize=(9, max(3.0, 0.38 * len(labels) + 1.2)), dpi=110)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    kind_list = list(kinds) if kinds is not None else ["value"] * len(labels)
    palette = {k: colors[i % len(colors)] for i, k in enumerate(dict.fromkeys(kind_list))}
    ys = list(range(len(labels)))[::-1]
    from matplotlib.patches import Patch

    ax.barh(ys, values, color=[palette[k] for k in kind_list])
    handles: list = [Patch(color=col, label=k) for k, col in palette.items()]
    if paper is not None:
        px = [(v, y) for v, y in zip(paper, ys) if v is not None]
        if px:
            handles += ax.plot([v for v, _ in px], [y for _, y in px], "kx", ms=7, label="paper")
    if hline is not None:
        handles.append(ax.axvline(hline, color="grey", lw=0.8, ls=":", label=hline_label or "reference"))
    ax.set_yticks(ys)
    ax.set_yticklabels(labels, fontsize=8)
    if logy:
        ax.set_xscale("log")
    ax.set_xlabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, axis="x", which="both", alpha=0.3)
    legend_outside(ax, handles, where="below")
    save(fig, path)


__all__ = ["LEGEND_WRAP", "bar_plot", "count_label", "integer_log_ticks", "legend_outside", "line_plot", "save"]
