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


def test_series_are_coloured_by_provenance_and_told_apart_by_shape(tmp_path: Path) -> None:
    from cryptoffload.report.figures import read_figure
    from cryptoffload.report.palette import NEUTRAL, PROVENANCE_COLOURS
    from cryptoffload.report.plots import series_provenance

    assert series_provenance("naive [fitted]") == "fitted" and series_provenance("tuned [predicted]") == "simulated"
    assert series_provenance("predict", "p90 vs rate (simulated)") == "simulated"
    assert series_provenance("ours (encrypted)", "Coefficients") == ""  # nothing says: no colour by guess
    assert series_provenance("x", "measured and simulated") == ""       # two words: not one provenance
    assert series_provenance("x", declared={"x": "measured"}) == "measured"
    path = tmp_path / "l.png"
    line_plot(path, [1, 2], {"a (measured)": [1.0, 2.0], "b": [1.0, 2.0]}, paper={"a (measured)": [1.5, None]},
              title="t", xlabel="x", ylabel="y")
    series = read_figure(path, "l.png").series
    assert [(s["label"], s["colour"]) for s in series] == [
        ("a (measured)", PROVENANCE_COLOURS["measured"]), ("a (measured) (paper)", PROVENANCE_COLOURS["cited"]),
        ("b", NEUTRAL)]
    assert series[0]["marker"] == series[1]["marker"] != series[2]["marker"]  # the paper's line: its series' marker


def test_more_lines_than_a_panel_holds_are_split_into_panels(tmp_path: Path, monkeypatch) -> None:
    from cryptoffload.report.plots import MAX_PANEL_SERIES

    figs: list = []
    real_savefig = plt.Figure.savefig

    def spy(fig, path, *a, **k):
        figs.append([(len(ax.get_lines()), ax.get_ylim()) for ax in fig.axes])
        return real_savefig(fig, path, *a, **k)

    monkeypatch.setattr(plt.Figure, "savefig", spy)
    series = {f"s{i}": [float(i + 1), float(i + 2)] for i in range(MAX_PANEL_SERIES + 1)}
    line_plot(tmp_path / "p.png", [1, 10], series, title="t (simulated)", xlabel="x", ylabel="y")
    (n0, y0), (n1, y1) = figs[-1]
    assert n0 + n1 == MAX_PANEL_SERIES + 1 and max(n0, n1) <= MAX_PANEL_SERIES
    assert y0 == y1  # shared axes: panels compare directly


def test_bar_kinds_of_one_provenance_share_its_colour_and_differ_by_hatch(tmp_path: Path) -> None:
    from cryptoffload.report.figures import read_figure
    from cryptoffload.report.palette import PROVENANCE_COLOURS

    path = tmp_path / "b.png"
    bar_plot(path, ["a", "b", "c"], [1.0, 2.0, 3.0], kinds=["measured", "measured, scaled", "cited: Table 1"],
             title="t", ylabel="y")
    series = read_figure(path, "b.png").series
    assert [s["colour"] for s in series] == [PROVENANCE_COLOURS["measured"]] * 2 + [PROVENANCE_COLOURS["cited"]]
    assert series[0]["linestyle"] != series[1]["linestyle"]  # the hatch
