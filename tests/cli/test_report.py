"""``cryptoffload report``: every registered study is run."""

from __future__ import annotations

from pathlib import Path


def test_report_runs_every_registered_study(tmp_path: Path, monkeypatch) -> None:
    """`report` (what `make demo` runs) wires each study in STUDIES to its runner: every study's
    run() is called once with its own output folder (the studies themselves are stubbed; their
    own tests run them). A study missing from the wiring, or a runner that cannot even start
    (a name not imported), fails here rather than in `make demo`."""
    import importlib

    from typer.testing import CliRunner

    from cryptoffload import cli
    from cryptoffload.errors import ConfigError
    from cryptoffload.report.result import StudyResult
    from cryptoffload.studies import STUDIES

    called: list[str] = []

    def stub(name: str):
        def run(cfg, out, progress=None):
            called.append(name)
            assert Path(out).name.startswith(name)
            return StudyResult(name, name, "quick", 0, "test", {})
        return run

    for name, module in STUDIES.items():
        monkeypatch.setattr(importlib.import_module(module), "run", stub(name))

    def no_inference(*a, **k):
        raise ConfigError("skipped in this test")

    monkeypatch.setattr("cryptoffload.apps.he_cnn.infer.infer_image", no_inference)
    res = CliRunner().invoke(cli.app, ["report", "--out", str(tmp_path / "r"), "--no-calibrate"])
    assert res.exit_code == 0, res.output
    assert sorted(set(called)) == sorted(STUDIES)
    assert (tmp_path / "r" / "index.html").exists()
