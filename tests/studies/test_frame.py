"""The study frame: a study's run returns its sections as values; the frame validates first,
gives the run its progress as a context, assembles the result (name, title, paper from the
registration, mode and seed from the settings, the headline in the study's order) and writes it."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from cryptoffload.errors import ConfigError
from cryptoffload.papers import PAPERS
from cryptoffload.report.result import Claim, Table
from cryptoffload.studies import frame, register_study, registry
from cryptoffload.studies.frame import Sections


@dataclass(kw_only=True)
class Settings:
    quick: bool = True
    seed: int = 3
    rows: int = 2

    def validate(self) -> None:
        if self.rows < 1:
            raise ConfigError("--rows must be at least 1")


def _sections(cfg: Settings) -> Sections:
    frame.expect(cfg.rows + 1)
    rows = []
    for i in range(cfg.rows):
        frame.step(f"row {i}")
        rows.append([i, float(i * i)])
    table = Table(id="squares", title="Squares", columns=["i", "square"], rows=rows, provenance="simulated")
    claim = Claim(paper="n/a", ours="squares grow", provenance="simulated", band=[1.0, 4.0], band_method="range", most_sensitive="rows")
    return Sections(tables=[table], headline=["first line", claim, "last line"], notes=["a note"],
                    figures=[("f.png", lambda path: path.write_bytes(b"png"))], extra={"rows": cfg.rows},
                    key_figure="f.png")


@pytest.fixture
def study(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))

    def run(cfg: Settings) -> Sections:
        return _sections(cfg)

    framed = register_study(name="framed", title="Framed", summary="A framed study.", paper=PAPERS["qat-paillier"],
                            config=Settings)(run)
    monkeypatch.setattr(sys.modules[__name__], "run", framed, raising=False)  # as the decorator's line would
    return framed


def test_the_frame_assembles_and_writes_the_sections(study, tmp_path: Path) -> None:
    labels: list[str] = []
    totals: list[int] = []

    def bar(total: int):
        totals.append(total)
        return labels.append

    res = study(Settings(quick=False, rows=3), tmp_path / "out", bar)
    assert (res.study, res.title, res.mode, res.seed) == ("framed", "Framed", "full", 3)
    assert res.paper == PAPERS["qat-paillier"].cite() and res.machine and res.elapsed_s > 0
    assert res.headline == ["first line", res.claims[0].sentence(), "last line"]
    assert totals == [4] and labels == ["row 0", "row 1", "row 2", "writing results"]
    written = json.loads((tmp_path / "out" / "result.json").read_text(encoding="utf-8"))
    assert written["tables"]["squares"]["rows"] == [[0, 0.0], [1, 1.0], [2, 4.0]]
    assert written["figures"] == ["f.png"] and (tmp_path / "out" / "f.png").read_bytes() == b"png"
    assert written["notes"] == ["a note"] and written["extra"] == {"rows": 3}
    assert registry.registered()["framed"].run(Settings(), tmp_path / "again").mode == "quick"


def test_a_study_may_say_more_of_its_paper_than_the_citation(study, tmp_path: Path, monkeypatch) -> None:
    found = _sections(Settings())
    found.paper = PAPERS["qat-paillier"].cite() + ", Table 2"
    monkeypatch.setattr(study, "sections", lambda cfg: found)
    assert study(Settings(), tmp_path / "out").paper.endswith(", Table 2")


def test_bad_settings_fail_before_any_progress_or_file(study, tmp_path: Path) -> None:
    started: list[int] = []
    with pytest.raises(ConfigError, match="--rows"):
        study(Settings(rows=0), tmp_path / "out", started.append)
    assert not started and not (tmp_path / "out").exists()


def test_the_sections_are_values_and_progress_is_a_context(study) -> None:
    """Without a bar (a test, the API) the run's steps do nothing; a bar given to one run is
    that run's only, gone once it ends."""
    found = study.sections(Settings(rows=2))
    assert [t.id for t in found.tables] == ["squares"] and found.by_id["squares"].rows[1] == [1, 1.0]
    seen: list[str] = []
    with frame.running(lambda total: seen.append):
        frame.expect(1)
        assert frame.shown()
        frame.step("inside")
    frame.step("outside")
    assert seen == ["inside"] and not frame.shown()
