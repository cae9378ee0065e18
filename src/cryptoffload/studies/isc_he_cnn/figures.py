"""The isc-he-cnn study's figures: Table 2's latency curve, Table 3's latency and throughput
against device count (each beside the paper's, dashed where the paper has the point), and the device DRAM's occupancy.

Why its own module: drawing is not simulating; the figures read the tables' typed results.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

from cryptoffload.report.palette import provenance_colour, series_style
from cryptoffload.report.plots import describe, legend_outside, line_plot, save
from cryptoffload.sim.isc.platform import LABELS, PLATFORMS
from cryptoffload.studies.isc_he_cnn.paper import GB, PAPER_TABLE2
from cryptoffload.studies.isc_he_cnn.tables import IscSetting, Table2, Table3, paper_table3_row

Figure = tuple[str, Callable[[Path], None]]


def _table2_figure(setting: IscSetting, t2: Table2, path: Path) -> None:
    bws, prov = list(t2.runs), setting.provenance
    ours = f"ours ({prov})"
    series: dict[str, Sequence[float]] = {ours: [t2.runs[b].mean_latency_s * 1e3 for b in bws]}
    if t2.fitted_runs:
        series["program fitted to Table 2"] = [t2.fitted_runs[b].mean_latency_s * 1e3 for b in bws]
    cited = [PAPER_TABLE2.get(float(b)) for b in bws]
    known = [v for v in cited if v is not None]
    ok = setting.paper_like and len(known) == len(cited)  # the paper gives every bandwidth swept
    paper: dict[str, Sequence[float]] | None = {ours: known} if ok else None
    cpu_ms = t2.cpu.seconds * 1e3
    line_plot(path, bws, series, paper=paper,
              title=f"Table 2: latency vs bandwidth, one device ({setting.program.name})",
              xlabel="storage -> device DRAM bandwidth (GB/s)", ylabel="inference latency (ms)",
              hline=cpu_ms, subtitle=f"dotted: CPU, one thread ({cpu_ms:,.0f} ms)", paper_note="dashed: the paper")


def _table3_figure(setting: IscSetting, t3: Table3, quantity: str, ylabel: str, title: str, path: Path) -> None:
    """``quantity``: ``latency_ms`` or ``throughput_per_s`` (a Table 3 column, per platform)."""
    nan = float("nan")

    def value(row: object, p: str) -> float:
        v = getattr(row, f"{p}_{quantity}") if row is not None else None
        return nan if v is None else v

    ks = setting.devices
    series: dict[str, Sequence[float]] = {LABELS[p]: [value(r, p) for r in t3.rows] for p in PLATFORMS}
    paper: dict[str, Sequence[float]] = {LABELS[p]: [value(paper_table3_row(k), p) for k in ks] for p in PLATFORMS}
    line_plot(path, ks, series, paper=paper, title=title, xlabel="devices k (32 PCIe lanes in all)", ylabel=ylabel,
              logx=True, logy=True, paper_note="dashed: the paper")


def _occupancy_figure(setting: IscSetting, t2: Table2, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dram, min_dram = setting.csd.dram_bytes, setting.world.compiled.min_dram_bytes
    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    # one colour, the run's provenance (report/palette.py: a colour means where a number comes
    # from); the bandwidths told apart by line style and a sparse hollow marker
    colour, series = provenance_colour(setting.provenance), []
    for i, (b, run) in enumerate((b, r) for b, r in t2.runs.items() if r.occupancy):
        smp, style = run.occupancy, series_style(i)
        xs = [t for t, _ in smp] + [run.makespan_s]
        ys = [u / GB for _, u in smp] + [smp[-1][1] / GB]
        ax.step(xs, ys, where="post", color=colour, ls=style.linestyle, marker=style.marker,
                markersize=style.markersize, markerfacecolor="none", markevery=max(1, len(xs) // 8), label=f"{b:g} GB/s")
        series.append({"label": f"{b:g} GB/s", "colour": colour, "provenance": setting.provenance,
                       "marker": style.marker, "linestyle": str(style.linestyle)})
    ax.axhline(dram / GB, color="grey", ls=":", lw=0.9, label=f"capacity {dram / GB:g} GB")
    ax.axhline(min_dram / GB, color="black", ls="--", lw=0.7, label=f"needed without prefetch {min_dram / GB:.2f} GB")
    ax.set_xlabel("time in the inference (s)")
    ax.set_ylabel("device DRAM in use (GB)")
    ax.set_title(f"DRAM occupancy, one device, dead data evicted at once ({setting.program.name}) "
                 f"[{setting.provenance}]", fontsize=10)
    ax.grid(True, alpha=0.3)
    legend_outside(ax)
    save(fig, path, series + [d for d in describe(fig) if d["label"].startswith(("capacity", "needed"))])


def figures(setting: IscSetting, t2: Table2, t3: Table3) -> list[Figure]:
    """(file name, drawer) for each figure, Table 2's first (the study's key figure)."""
    name, prov = setting.program.name, setting.provenance
    return [
        ("table2_latency.png", lambda p: _table2_figure(setting, t2, p)),
        ("table3_latency.png", lambda p: _table3_figure(
            setting, t3, "latency_ms", "latency (ms)",
            f"Table 3: latency vs devices ({name}) [{prov}]", p)),
        ("table3_throughput.png", lambda p: _table3_figure(
            setting, t3, "throughput_per_s", "throughput (inferences/s)",
            f"Table 3: throughput vs devices ({name}) [{prov}]", p)),
        ("dram_occupancy.png", lambda p: _occupancy_figure(setting, t2, p)),
    ]


__all__ = ["figures"]
