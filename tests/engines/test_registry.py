"""The engine table: every row can be probed and built by name, unknown names are user
errors listing the table, and ``auto`` takes the best engine that really starts."""

from __future__ import annotations

import pytest

from cryptoffload.engines import ENGINE_NAMES, ENGINES, EngineSpec, Job, engine_reasons, make_engine
from cryptoffload.errors import BackendUnavailable, ConfigError


def test_every_row_probes_to_none_or_one_line() -> None:
    assert ENGINE_NAMES == (*ENGINES, "auto")
    for name, why in engine_reasons().items():
        assert why is None or (isinstance(why, str) and why and "\n" not in why), (name, why)


@pytest.mark.parametrize("name", [n for n in ENGINES])
def test_each_engine_builds_or_says_why(name: str) -> None:
    why = ENGINES[name].reason()
    if why is not None:
        with pytest.raises(BackendUnavailable, match=f"engine {name} cannot run here"):
            make_engine(name)
        return
    try:
        eng = make_engine(name, workers=1)
    except BackendUnavailable as exc:  # a probe may pass where the engine still cannot start
        assert "\n" not in str(exc)
        return
    with eng:
        assert eng.name == name and eng.submit(Job.modexp(3, 4, 1000)).result() == 81


def test_unknown_name_lists_the_table() -> None:
    with pytest.raises(ConfigError, match="unknown engine 'tpu'; choose one of cpu, cpu-threads, ifma, gpu, gpu-twin, auto"):
        make_engine("tpu")


def _refuses(**kw):
    raise BackendUnavailable("probe passed but it does not start")


def test_auto_skips_engines_that_cannot_run_or_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(ENGINES, "absent", EngineSpec("absent", _refuses, "x", probe=lambda: "not here", auto_rank=-2))
    monkeypatch.setitem(ENGINES, "broken", EngineSpec("broken", _refuses, "x", auto_rank=-1))
    with make_engine("auto", workers=1) as eng:
        assert eng.name in {s.name for s in ENGINES.values() if s.auto_rank is not None and s.auto_rank >= 0}


def test_auto_with_nothing_working_says_why_for_each(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(ENGINES):
        monkeypatch.delitem(ENGINES, name)
    monkeypatch.setitem(ENGINES, "absent", EngineSpec("absent", _refuses, "x", probe=lambda: "not here", auto_rank=0))
    monkeypatch.setitem(ENGINES, "broken", EngineSpec("broken", _refuses, "x", auto_rank=1))
    with pytest.raises(BackendUnavailable, match="absent: not here; broken: probe passed but it does not start"):
        make_engine("auto")


def test_make_engine_names() -> None:
    with make_engine("cpu-threads", workers=1) as eng:
        assert eng.name == "cpu-threads" and eng.submit(Job.modexp(2, 5, 1000)).result() == 32
    with make_engine("auto") as eng:
        assert eng.submit(Job.modexp(2, 5, 1000)).result() == 32
    with pytest.raises(ConfigError):
        make_engine("tpu")
