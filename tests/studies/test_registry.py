"""The study registry: options become config fields (converted, or left to the config's default
when not given), names are unique, unknown studies are user errors, and report runs default to
one quick run with the report's seed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

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


OPTIONS = [Option("--sizes", "sizes", str, "1,2", convert=int_tuple), Option("--trace", "trace", Path, convert=as_str),
           Option("--fast", "exact", bool, False, convert=negated), Option("--kinds", "kinds", convert=names)]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))

    def run(cfg, out, progress=None):
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
    def run(cfg, out, progress=None):
        return cfg

    run.__module__ = "somewhere.else"
    with pytest.raises(ValueError, match="registered twice"):
        register_study(name="fake", title="", summary="", paper=PAPERS["qat-paillier"], config=FakeConfig)(run)
    with pytest.raises(ValueError, match="option fields"):
        register_study(name="other", title="", summary="", paper=PAPERS["qat-paillier"], config=FakeConfig,
                       options=[Option("--out", "out")])(run)

    def helper(cfg, out, progress=None):
        return cfg

    with pytest.raises(ValueError, match="decorates the study's run.*not helper"):
        register_study(name="other", title="", summary="", paper=PAPERS["qat-paillier"], config=FakeConfig)(helper)


def test_artifacts_are_made_once(tmp_path: Path) -> None:
    made = []
    ctx = ReportContext(tmp_path)
    for _ in range(2):
        assert ctx.artifact("k", lambda c: made.append(c) or "v") == "v"
    assert made == [ctx]


def test_get_study_loads_one_module_and_refuses_unknown_names() -> None:
    assert get_study("fpga-reconfig").module == "cryptoffload.studies.fpga_reconfig"
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
