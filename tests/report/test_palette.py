"""report/palette.py: one colour per meaning, readable under white text, and series that differ
in shape whatever their colour."""

from __future__ import annotations

import itertools

from cryptoffload.report.palette import (
    NEUTRAL,
    PAPER_LINE_STYLE,
    PROVENANCE_COLOURS,
    VERDICT_COLOURS,
    css,
    provenance_colour,
    series_style,
)


def _luminance(hex_colour: str) -> float:
    def lin(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (lin(int(hex_colour[i:i + 2], 16) / 255) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _lab(hex_colour: str) -> tuple[float, float, float]:
    """CIE L*a*b* (D65) of an sRGB colour, for telling colours apart as people see them."""
    def lin(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (lin(int(hex_colour[i:i + 2], 16) / 255) for i in (1, 3, 5))
    x, y, z = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047, 0.2126 * r + 0.7152 * g + 0.0722 * b, \
        (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 216 / 24389 else (24389 / 27 * t + 16) / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def test_every_meaning_has_its_own_colour_far_from_the_others() -> None:
    meanings = {**PROVENANCE_COLOURS, **VERDICT_COLOURS, "neutral": NEUTRAL}
    assert len(set(meanings.values())) == len(meanings)
    for (a, ca), (b, cb) in itertools.combinations(meanings.items(), 2):
        distance = sum((p - q) ** 2 for p, q in zip(_lab(ca), _lab(cb))) ** 0.5
        assert distance > 20, f"{a} {ca} and {b} {cb} look alike (CIE76 {distance:.0f})"


def test_white_badge_text_is_readable_on_every_colour() -> None:
    for name, colour in {**PROVENANCE_COLOURS, **VERDICT_COLOURS, "neutral": NEUTRAL}.items():
        assert (1.05) / (_luminance(colour) + 0.05) >= 4.5, name  # WCAG AA for normal text


def test_a_cell_or_label_is_coloured_by_its_provenance_word() -> None:
    assert provenance_colour("measured, scaled to 1M records") == PROVENANCE_COLOURS["measured"]
    assert provenance_colour("cited: Table 2") == PROVENANCE_COLOURS["cited"]
    assert provenance_colour("predicted") == PROVENANCE_COLOURS["simulated"]
    assert provenance_colour("derived: a / b") == NEUTRAL and provenance_colour("value") == NEUTRAL


def test_no_two_of_the_first_32_series_look_alike_and_dashes_stay_the_papers() -> None:
    styles = [series_style(i) for i in range(32)]
    assert len({(s.marker, str(s.linestyle)) for s in styles}) == 32
    assert all(s.linestyle != PAPER_LINE_STYLE for s in styles)
    # two series on the same points: the later marker is smaller, so it sits inside the earlier
    assert series_style(1).markersize < series_style(0).markersize


def test_the_css_colours_badges_and_verdicts_from_the_palette() -> None:
    rules = css()
    for name, colour in PROVENANCE_COLOURS.items():
        assert f".badge.{name}{{background:{colour}}}" in rules
    for name, colour in VERDICT_COLOURS.items():
        assert f".claim.{name}{{border-color:{colour}}}" in rules
