"""Plot helpers: matplotlib without a display, one figure per file, closed after saving."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def line_plot(path: Path, x: Sequence[float], series: dict[str, Sequence[float]], *, title: str,
              xlabel: str, ylabel: str, logx: bool = True, logy: bool = True,
              paper: dict[str, Sequence[float]] | None = None, paper_x: Sequence[float] | None = None,
              hline: float | None = None, subtitle: str = "") -> None:
    """Our series as solid lines; the paper's (if given) as dashed lines of the same colour."""
    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (name, ys) in enumerate(series.items()):
        col = colors[i % len(colors)]
        ax.plot(x, ys, marker="o", ms=3, color=col, label=name)
        if paper and name in paper:
            ax.plot(paper_x if paper_x is not None else x, paper[name], ls="--", marker="x", ms=3,
                    color=col, alpha=0.6, label=f"{name} (paper)")
    if hline is not None:
        ax.axhline(hline, color="grey", lw=0.8, ls=":")
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title + (f"\n{subtitle}" if subtitle else ""), fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def bar_plot(path: Path, labels: Sequence[str], values: Sequence[float], *, title: str, ylabel: str,
             kinds: Sequence[str] | None = None, paper: Sequence[float | None] | None = None,
             logy: bool = True, hline: float | None = None, hline_label: str = "") -> None:
    """Horizontal comparison of named values; ``kinds`` (e.g. measured/simulated) colour the
    bars so a simulated bar never looks like a measured one; paper values are drawn as markers."""
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
    ax.legend(handles=handles, fontsize=7)
    fig.tight_layout()
    try:
        fig.savefig(path)
    finally:
        plt.close(fig)
