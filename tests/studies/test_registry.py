"""The study registry: options become config fields (converted, or left to the config's default
when not given), names are unique, unknown studies are user errors, and report runs default to
one quick run with the report's seed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from cryptoffload.checks import BOUNDS, COUNT
from cryptoffload.errors import ConfigError
from cryptoffload.papers import PAPERS
from cryptoffload.studies import Option, ReportContext, ReportRun, all_studies, get_study, register_study
from cryptoffload.studies import registry
from cryptoffload.studies.registry import as_str, int_tuple, names, negated


@dataclass
class FakeConfig:
    quick: bool = True
    seed: int = 5
    sizes: tuple[int, ...] = (1,)
    trace: str | None = None
    exact: bool = True
    kinds: tuple[str, ...] = ("a",)


OPTIONS = [Option("--sizes", "sizes", str, "1,2", convert=int_tuple, bound=COUNT),
           Option("--trace", "trace", Path, convert=as_str),
           Option("--fast", "exact", bool, False, convert=negated), Option("--kinds", "kinds", convert=names)]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))

    def run(cfg):
        return cfg

    register_study(name="fake", title="Fake", summary="A fake study.", paper=PAPERS["qat-paillier"],
                   config=FakeConfig, options=OPTIONS)(run)
    return registry.registered()["fake"]


def test_make_config_converts_and_leaves_defaults(fake) -> None:
    cfg = fake.make_config({"quick": False, "seed": 3, "sizes": "4,8", "trace": None, "exact": True, "kinds": None})
    assert cfg == FakeConfig(quick=False, seed=3, sizes=(4, 8), trace=None, exact=False, kinds=("a",))
    cfg = fake.make_config({"quick": True, "seed": 1, "sizes": "2", "trace": Path("t.csv"), "exact": False,
                            "kinds": "X, y"})
    assert (cfg.trace, cfg.exact, cfg.kinds) == ("t.csv", True, ["x", "y"])
    with pytest.raises(ConfigError, match="--sizes must be a comma-separated list of positive integers"):
        fake.make_config({"quick": True, "seed": 1, "sizes": "0"})
    assert "After H. Zhou and B. Hua" in fake.help and "A fake study." in fake.help


def test_default_report_run_is_quick_with_the_reports_seed(fake, tmp_path: Path) -> None:
    [run] = fake.report_runs()
    assert run.name == "fake"
    assert run.config(ReportContext(tmp_path, full=False, seed=9)) == FakeConfig(quick=True, seed=9)
    assert run.config(ReportContext(tmp_path, full=True)).quick is False


def test_registration_refuses_duplicates_and_reserved_fields(fake) -> None:
    def run(cfg):
        return cfg

    run.__module__ = "somewhere.else"
    with pytest.raises(ValueError, match="registered twice"):
        register_study(name="fake", title="", summary="", paper=PAPERS["qat-paillier"], config=FakeConfig)(run)
    with pytest.raises(ValueError, match="option fields"):
        register_study(name="other", title="", summary="", paper=PAPERS["qat-paillier"], config=FakeConfig,
                       options=[Option("--out", "out")])(run)

    def helper(cfg):
        return cfg

    with pytest.raises(ValueError, match="decorates the study's run.*not helper"):
        register_study(name="other", title="", summary="", paper=PAPERS["qat-paillier"], config=FakeConfig)(helper)

    def legacy(cfg, out, progress=None):
        return cfg

    with pytest.raises(ValueError, match=r"run takes its settings only, run\(cfg\) -> Sections"):
        register_study(name="other", title="", summary="", paper=PAPERS["qat-paillier"], config=FakeConfig)(legacy)


def test_artifacts_are_made_once(tmp_path: Path) -> None:
    made = []
    ctx = ReportContext(tmp_path)
    for _ in range(2):
        assert ctx.artifact("k", lambda c: made.append(c) or "v") == "v"
    assert made == [ctx]


def test_get_study_loads_one_module_and_refuses_unknown_names() -> None:
    assert get_study("fpga-reconfig").module == "cryptoffload.studies.fpga_reconfig.study"
    with pytest.raises(ConfigError, match="unknown study 'nosuch' \\(known: .*fpga-reconfig"):
        get_study("nosuch")


def test_every_study_module_registers_and_names_its_paper() -> None:
    studies = all_studies()
    for name, spec in studies.items():
        assert spec.paper.key in PAPERS and spec.summary and spec.title, name
        # the citation comes from the registry (listing), never typed into a title by hand
        assert spec.listing == f"{spec.title} ({spec.paper.brief()})", name
        assert not any(paper.short() in spec.title for paper in PAPERS.values()), name
        assert all(isinstance(r, ReportRun) for r in spec.report_runs())


# -- issue 32: a floor and a ceiling with a unit for every number of every study option ---------


def _numeric_options() -> list[tuple[str, Option]]:
    return [(name, opt) for name, spec in all_studies().items() for opt in spec.options if opt.numeric]


@pytest.mark.parametrize("study, option", _numeric_options(), ids=[f"{n} {o.flag}" for n, o in _numeric_options()])
def test_every_numeric_study_option_has_a_named_bound_that_refuses_absurd_values(study: str, option: Option) -> None:
    bound = option.bound
    assert bound is not None and BOUNDS[bound.name] is bound, f"study {study}: {option.flag} has no bound"
    high = bound.ceiling if option.maximum is None else min(bound.ceiling, option.maximum)
    absurd = int(high) + 1 if bound.integer else high * 10
    with pytest.raises(ConfigError, match=rf"^{option.flag} must be .*{bound.unit}"):
        if option.type in (int, float):
            option.parse(str(absurd))
        else:
            option.converted(option.parse(str(absurd)))
    with pytest.raises(ConfigError, match=option.flag):
        option.parse("1_000") if option.type in (int, float) else option.converted("1_000")


def test_a_study_with_a_numeric_option_without_a_bound_is_refused_at_registration(monkeypatch) -> None:
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))

    def run(cfg):
        return cfg

    with pytest.raises(ValueError, match=r"numeric option\(s\) --count have no bound"):
        register_study(name="unbounded", title="U", summary="U.", paper=PAPERS["qat-paillier"], config=FakeConfig,
                       options=[Option("--count", "sizes", int)])(run)
    with pytest.raises(ValueError, match=r"--rates have no bound"):
        register_study(name="unbounded", title="U", summary="U.", paper=PAPERS["qat-paillier"], config=FakeConfig,
                       options=[Option("--rates", "sizes", convert=registry.floats)])(run)


def test_each_number_of_a_list_option_is_bounded() -> None:
    rates = next(o for o in get_study("fpga-reconfig").options if o.flag == "--rates")
    assert rates.converted("10,1e3") == [10.0, 1000.0]
    with pytest.raises(ConfigError, match=r"--rates must be between 0.001 and 1e\+09 requests/s, got 1000000000000.0"):
        rates.converted("10,1e12")
