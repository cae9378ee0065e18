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
