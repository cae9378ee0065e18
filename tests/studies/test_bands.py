"""The bands tables: one row per headline figure, one tornado row per figure and input, the
paper's value inside or not, and one model run per distinct set of overrides."""

from __future__ import annotations

from cryptoffload.profiles.sensitivity import Input, band
from cryptoffload.studies import bands as bd


def test_the_tables_show_each_band_and_its_tornado() -> None:
    a, b = Input("a", 2.0, 1.0, 4.0, "half to twice", "assumed"), Input("b", 10.0, 9.0, 12.0, "digits", "cited")
    calls = []

    def run(o):
        calls.append(dict(o))
        return {"x": 3 * o.get("a", 2.0) - 2 * o.get("b", 10.0), "y": o.get("a", 2.0)}

    memo = bd.Memo(run)
    fx = bd.Banded("x", band(memo.figure("x"), [a, b]), -20.0, [a, b])
    fy = bd.Banded("y", band(memo.figure("y"), [a, b]), None, [a, b])
    assert len(calls) == 9  # nominal, 4 tornado ends, 4 corners: y reuses every run of x
    bands, tornado = bd.band_tables([fx, fy], ["p"], "a note")
    assert bands.id == bd.BANDS_ID and bands.note == "a note" and bands.inputs == ["p"]
    assert bands.rows == [["x", -14.0, -21.0, -6.0, -20.0, True, "a", "4 corners"],
                          ["y", 2.0, 1.0, 4.0, None, None, "a", "4 corners"]]
    assert tornado.columns == ["figure", "input", "input_provenance", "input_low", "input_nominal", "input_high",
                               "ours_at_low", "ours_at_high", "swing", "range_why"]
    assert tornado.rows[:2] == [["x", "a", "assumed", 1.0, 2.0, 4.0, -17.0, -8.0, 9.0, "half to twice"],
                                ["x", "b", "cited", 9.0, 10.0, 12.0, -12.0, -18.0, 6.0, "digits"]]
    assert [r[:2] for r in tornado.rows[2:]] == [["y", "a"], ["y", "b"]]
