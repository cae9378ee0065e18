"""report/figures.py: a figure's id, title and caption -- from the PNG where it carries them, from
its file name where it does not -- and the machine and date of the run that drew it."""

from __future__ import annotations

from pathlib import Path

from cryptoffload.report.figures import figure_html, figure_id, read_figure, run_line


def test_figure_ids_are_safe_and_stable() -> None:
    assert figure_id("fpga-reconfig", "p90_vs_rate.png") == "fpga-reconfig--fig-p90_vs_rate"
    assert figure_id("s", "a b'.c.png") == "s--fig-a-b-c"


def test_a_figure_without_metadata_or_file_keeps_its_file_name(tmp_path: Path) -> None:
    info = read_figure(tmp_path / "missing.png", "load_factor.png")
    assert info.title == "load factor" and info.width == 0 and info.series == []
    (tmp_path / "bad.png").write_bytes(b"not a png")
    assert read_figure(tmp_path / "bad.png", "bad.png").title == "bad"


def test_the_caption_names_machine_and_date_and_links_to_itself(tmp_path: Path) -> None:
    gpu = {"name": "NVIDIA H100", "memory_bytes": 1}
    assert run_line({"cpu": "AMD EPYC", "cores": 2, "gpu": gpu}, "2026-12-06 10:00 UTC") == \
        "AMD EPYC, 2 cores, NVIDIA H100 · 2026-12-06 10:00 UTC"
    assert run_line({}, "") == "unknown CPU, ? cores, no GPU · date not recorded"
    info = read_figure(tmp_path / "x.png", "x.png")
    html = figure_html(info, "s/x.png", "s--fig-x", 3, "s", "quick", {"cpu": "<b>", "cores": 2}, "d")
    assert "<figure id='s--fig-x'>" in html and "<b>Figure 3.</b> x" in html
    assert "&lt;b&gt;, 2 cores, no GPU · d" in html and "<a class='self' href='#s--fig-x'" in html
