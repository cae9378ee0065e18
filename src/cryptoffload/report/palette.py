"""The report's colours: one colour, one meaning, in the HTML's badges and tables and in every plot.

Why one table: a reader learns what a colour means once, from the legend at the top of the
report, and then reads it everywhere. Before this module the badges had one palette, the
verdicts another that reused two of its colours (green was both *measured* and *agreement*, red
both *fitted* and *divergence*), and each plot coloured its series by matplotlib's cycle, so the
same policy was blue in one figure and orange in the next while a measured bar was whatever
colour came first. Here a colour says where a number comes from (its provenance) or what the
verdict on it is, never which series it belongs to: series are told apart by marker and line
style (:func:`series_style`).

The colours are dark enough for white text on a badge (contrast 4.5:1 or more) and chosen so
no two meanings share a hue family: provenance takes blue, violet, magenta, black and brown;
verdicts green, red and amber; everything that is no single provenance (derived, assumed, an
input, a mixed table, a reference line) one grey.
"""

from __future__ import annotations

from dataclasses import dataclass

from cryptoffload.report.provenance import provenance_word

#: Where a number comes from -> its colour (the five provenances a number can have on its own).
PROVENANCE_COLOURS: dict[str, str] = {
    "measured": "#0b5cad",   # blue: run here, in this run
    "simulated": "#6b3fa0",  # violet: predicted by our models
    "fitted": "#b3246b",     # magenta: fitted to the table it stands beside
    "cited": "#1f1f1f",      # black: the paper's own number
    "stored": "#7a4a1c",     # brown: an earlier run of ours, machine and date named
}
#: Everything that is no single provenance: derived, assumed, input, mixed; and reference lines.
NEUTRAL = "#5e6873"
#: Words that are provenance words in a label but not one of the five: shown in :data:`NEUTRAL`.
NEUTRAL_WORDS = ("derived", "assumed", "input", "mixed")
#: A study's figures say "predicted" where a table says "simulated": the same thing.
SYNONYMS = {"predicted": "simulated", "paper": "cited"}
#: The verdict on a row beside a paper value -> its colour (``fitted`` rows are not judged and
#: keep the provenance colour; ``not judged in quick mode`` is neutral).
VERDICT_COLOURS: dict[str, str] = {
    "agreement": "#1a7f37",     # green
    "divergence": "#c9190b",    # red
    "inconclusive": "#a36a00",  # amber
}

#: Marker shapes and line styles: series ``i`` of a figure gets ``MARKERS[i % 8]`` and
#: ``LINE_STYLES[(i + i // 8) % 4]`` -- no two of the first 32 look alike, whatever their colour.
#: Dashes are kept for the paper's lines (:data:`PAPER_LINE_STYLE`).
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINE_STYLES = ("-", "-.", ":", (0, (5, 1, 1, 1, 1, 1)))
#: the paper's values, drawn beside ours: dashed (the studies' titles say "dashed: the paper")
PAPER_LINE_STYLE = "--"


def provenance_colour(label: str) -> str:
    """The colour of a provenance word or of a cell that starts with one (``"measured, scaled"``,
    ``"cited: Table 2"``); :data:`NEUTRAL` for anything else."""
    word = provenance_word(label)
    return PROVENANCE_COLOURS.get(SYNONYMS.get(word, word), NEUTRAL)


def colour_of_class(cls: str) -> str:
    """The colour a CSS class of the report stands for: a provenance, a verdict, or neutral."""
    return PROVENANCE_COLOURS.get(cls) or VERDICT_COLOURS.get(cls) or NEUTRAL


@dataclass(frozen=True)
class SeriesStyle:
    """How one series of a figure is drawn apart from the others, whatever its colour.

    Markers are hollow and shrink with the series' index, so where two series coincide the
    later one's marker sits inside the earlier one's and both stay visible."""

    marker: str
    linestyle: str | tuple[int, tuple[int, ...]]
    markersize: float


def series_style(index: int) -> SeriesStyle:
    """The style of series ``index`` of a figure (0-based)."""
    ls = LINE_STYLES[(index + index // len(MARKERS)) % len(LINE_STYLES)]
    return SeriesStyle(MARKERS[index % len(MARKERS)], ls, (10.0, 7.0, 4.5)[index % 3])


def css() -> str:
    """The CSS rules that give every badge, verdict and table cell its colour from this module."""
    rules = [f".badge.{k}{{background:{c}}}" for k, c in PROVENANCE_COLOURS.items()]
    rules += [f".badge.{k}{{background:#fff;color:{NEUTRAL};border:1px solid {NEUTRAL}}}" for k in NEUTRAL_WORDS]
    rules += [f".claim.{k}{{border-color:{c}}} .score .{k},.verdict.{k}{{color:{c}}}" for k, c in VERDICT_COLOURS.items()]
    rules += [f".claim.fitted{{border-color:{PROVENANCE_COLOURS['fitted']}}} .score .fitted,.verdict.fitted"
              f"{{color:{PROVENANCE_COLOURS['fitted']}}}"]
    rules += [f".claim.not{{border-color:{NEUTRAL}}} .score .not,.verdict.not{{color:{NEUTRAL}}}"]
    return "".join(rules)


__all__ = ["LINE_STYLES", "MARKERS", "NEUTRAL", "NEUTRAL_WORDS", "PAPER_LINE_STYLE", "PROVENANCE_COLOURS", "SeriesStyle",
           "VERDICT_COLOURS", "colour_of_class", "css", "provenance_colour", "series_style"]
