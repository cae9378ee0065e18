"""bar_plot: a PNG, one legend colour per kind, figures closed."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

from cryptoffload.report.plots import bar_plot


def test_bar_plot_kinds_get_distinct_colours(tmp_path: Path, monkeypatch) -> None:
    seen = {}
    real_savefig = plt.Figure.savefig

    def spy(fig, path, *a, **k):
        leg = fig.axes[0].get_legend()
        seen["legend"] = {t.get_text(): h.get_facecolor() for t, h in zip(leg.get_texts(), leg.legend_handles)
                          if hasattr(h, "get_facecolor")}
        seen["bars"] = [p.get_facecolor() for p in fig.axes[0].patches]
        return real_savefig(fig, path, *a, **k)

    monkeypatch.setattr(plt.Figure, "savefig", spy)
    before = len(plt.get_fignums())
    path = tmp_path / "b.png"
    bar_plot(path, ["a", "b", "c"], [1.0, 10.0, 100.0], kinds=["simulated", "measured", "measured"],
             paper=[2.0, None, None], title="t", ylabel="y", hline=50.0, hline_label="ref")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(plt.get_fignums()) == before
    legend = seen["legend"]
    assert legend["simulated"] != legend["measured"]
    # bars are drawn top to bottom in the order given: a (simulated) then b, c (measured)
    assert seen["bars"][0] == legend["simulated"] and seen["bars"][1] == legend["measured"]
