"""bar_plot and line_plot: a PNG, one legend colour per kind, figures closed; no legend over the
data, device counts ticked as integers, a title that names only what is drawn."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

from cryptoffload.report.plots import bar_plot, line_plot


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


def _drawn_figures(monkeypatch) -> list:
    """Each figure as it is saved, laid out (so every artist has its window extent)."""
    figs: list = []
    real_savefig = plt.Figure.savefig

    def spy(fig, path, *a, **k):
        fig.canvas.draw()
        axes = fig.axes[0]
        figs.append({"legend": axes.get_legend().get_window_extent(),
                     "data": [a.get_window_extent() for a in list(axes.lines) + list(axes.patches)],
                     "axes": axes.get_window_extent(),
                     "title": axes.get_title(),
                     "xticks": [t.get_text() for t in axes.get_xticklabels()]})
        return real_savefig(fig, path, *a, **k)

    monkeypatch.setattr(plt.Figure, "savefig", spy)
    return figs


#: the Paillier key chart's shape: the paper's baselines at the top, long kind explanations
PAILLIER_KINDS = ["cited (equal by construction: CPU costs are scaled to the paper's SW figure)",
                  "fitted (card latency fitted to it)", "fitted (driver cost fitted to its throughput)",
                  "simulated (from cited RSA rates)", "measured", "measured"]


def test_no_legend_covers_any_data(tmp_path: Path, monkeypatch) -> None:
    figs = _drawn_figures(monkeypatch)
    bar_plot(tmp_path / "bars.png", ["SW", "QAT+S1", "QAT+S2", "QHCS1", "phe", "ours"],
             [100.0, 300.0, 15000.0, 19000.0, 500.0, 60000.0], kinds=PAILLIER_KINDS, paper=[110.0] + [None] * 5,
             title="Paillier", ylabel="enc/s", hline=27400.0, hline_label="QHCS1 (paper, ~27,400/s)")
    series = {"FPGA&SSD": [850.0, 900.0, 1050.0, 1800.0, 3600.0], "FPGA-only": [850.0, 850.0, 900.0, 1050.0, 1800.0],
              "CSD": [900.0] * 5}
    line_plot(tmp_path / "lines.png", [1, 2, 4, 8, 16], series, paper={k: [v * 1.1 for v in vs] for k, vs in series.items()},
              title="Table 3", xlabel="devices k", ylabel="ms", hline=800.0, paper_note="dashed: the paper")
    assert len(figs) == 2
    for fig in figs:
        assert len(fig["data"]) >= 5
        assert not any(fig["legend"].overlaps(box) for box in fig["data"])
        assert not fig["legend"].overlaps(fig["axes"])


def test_device_counts_on_a_log_axis_are_labelled_as_integers(tmp_path: Path, monkeypatch) -> None:
    figs = _drawn_figures(monkeypatch)
    line_plot(tmp_path / "a.png", [1, 2, 4, 8, 16], {"ours": [1.0, 2.0, 3.0, 4.0, 5.0]}, title="t", xlabel="k",
              ylabel="y")
    line_plot(tmp_path / "b.png", [0.5, 1.0, 2.0], {"ours": [1.0, 2.0, 3.0]}, title="t", xlabel="GB/s", ylabel="y")
    rates = [10, 100, 200, 500, 700, 1000, 2000, 4000, 10000, 20000]
    line_plot(tmp_path / "c.png", rates, {"ours": [1.0] * len(rates)}, title="t", xlabel="req/s", ylabel="y")
    assert figs[0]["xticks"] == ["1", "2", "4", "8", "16"]
    # 700 is too close to 500 to label beside it (under 1/12 of the 3.3 decades shown)
    assert figs[2]["xticks"] == ["10", "100", "200", "500", "1,000", "2,000", "4,000", "10k", "20k"]
    assert "$\\mathdefault{10^{0}}$" in figs[1]["xticks"]  # not counts: matplotlib's log ticks stay


def test_the_title_names_the_dashed_line_only_when_one_is_drawn(tmp_path: Path, monkeypatch) -> None:
    figs = _drawn_figures(monkeypatch)
    for paper in ({"ours": [1.5, 2.5]}, {"ours": [float("nan"), float("nan")]}, None):
        line_plot(tmp_path / "t.png", [1, 2], {"ours": [1.0, 2.0]}, paper=paper, title="Table 2", xlabel="x",
                  ylabel="y", subtitle="dotted: CPU", paper_note="dashed: the paper")
    assert [f["title"] for f in figs] == ["Table 2; dashed: the paper\ndotted: CPU", "Table 2\ndotted: CPU",
                                          "Table 2\ndotted: CPU"]
