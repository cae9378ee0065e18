"""The phase recorder the protocol's steps take: seconds added per name, into the caller's dict."""

from __future__ import annotations

import pytest

from cryptoffload.apps.ridge import phases as ph


def test_phases_add_up_per_name_into_the_callers_dict(monkeypatch):
    clock = iter([1.0, 3.5, 10.0, 10.25, 20.0, 21.0])
    monkeypatch.setattr(ph.time, "perf_counter", lambda: next(clock))
    seconds = {"encode": 0.5}
    p = ph.Phases(seconds)
    with p("encode"):
        pass
    with p("encrypt"):
        pass
    with pytest.raises(ValueError):
        with p("encode"):  # a failing step still counts its time
            raise ValueError
    assert p.seconds is seconds
    assert seconds == {"encode": 0.5 + 2.5 + 1.0, "encrypt": 0.25}
    assert (p.get("encrypt"), p.get("aggregate")) == (0.25, 0.0)


def test_phases_or_new_keeps_the_callers_recorder():
    p = ph.Phases()
    assert ph.phases_or_new(p) is p
    assert ph.phases_or_new(None).seconds == {}
