"""``cryptoffload report`` (what ``make demo`` runs): every registered study is run, each in its
own folder, including runs that need an artifact made earlier in the report."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from cryptoffload import cli
from cryptoffload.report.result import StudyResult
from cryptoffload.studies import all_studies


def test_report_runs_every_registered_study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every study's run() is called with its own output folder (the studies themselves are
    stubbed; their own tests run them). A study missing from the report, or a run that cannot
    even start, fails here rather than in `make demo`. The HE-CNN inference and the cipher
    calibration are stubbed too: the in-storage study's second run gets the recorded trace,
    the FPGA study the measured profile."""
    configs: dict[str, object] = {}
    studies = all_studies()

    def stub(name: str):
        def run(cfg, out, progress=None):
            configs[Path(out).name] = cfg
            return StudyResult(name, name, "quick", 0, "test", {})
        return run

    for name, spec in studies.items():
        monkeypatch.setattr(importlib.import_module(spec.module), "run", stub(name))

    def infer_image(index, trace_out):
        Path(trace_out).write_text("{}")
        return SimpleNamespace(prediction=7, plain_prediction=7, label=7, seconds={"evaluate": 1.0},
                               as_dict=lambda: {"prediction": 7})

    monkeypatch.setattr("cryptoffload.apps.he_cnn.infer.infer_image", infer_image)
    monkeypatch.setattr("cryptoffload.calibrate.ciphers.calibrate_ciphers", lambda out, **kw: Path(out))
    out = tmp_path / "r"
    res = CliRunner().invoke(cli.app, ["report", "--out", str(out)])
    assert res.exit_code == 0, res.output
    runs = {run.name for spec in studies.values() for run in spec.report_runs()}
    assert set(configs) == runs and set(studies) <= runs and "isc-he-cnn-trace" in runs
    assert configs["isc-he-cnn-trace"].model == str(out / "he-cnn" / "trace.json")
    assert configs["isc-he-cnn"].model is None
    assert configs["fpga-reconfig"].sw_profile == str(out / "calibration" / "ciphers.toml")
    assert (out / "he-cnn" / "infer.json").exists() and (out / "index.html").exists()


def _stub_studies(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    ran: list[str] = []
    for name, spec in all_studies().items():
        monkeypatch.setattr(importlib.import_module(spec.module), "run",
                            lambda cfg, out, progress=None, name=name: ran.append(name) or
                            StudyResult(name, name, "quick", 0, "test", {}))
    monkeypatch.setattr("cryptoffload.apps.he_cnn.infer.infer_image",
                        lambda index, trace_out: Path(trace_out).write_text("{}") and SimpleNamespace(
                            prediction=7, plain_prediction=7, label=7, seconds={"evaluate": 1.0},
                            as_dict=lambda: {"prediction": 7}))
    return ran


@pytest.mark.parametrize("shot, env, error", [
    ("first.jpg", None, "the screenshot is a PNG"),
    ("first.png", "no-such-browser", "CRYPTOFFLOAD_CHROMIUM=no-such-browser is not an executable"),
])
def test_screenshot_option_is_refused_before_any_study_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            shot: str, env: str | None, error: str) -> None:
    ran = _stub_studies(monkeypatch)
    if env:
        monkeypatch.setenv("CRYPTOFFLOAD_CHROMIUM", env)
    res = CliRunner().invoke(cli.app, ["report", "--out", str(tmp_path / "r"), "--screenshot", str(tmp_path / shot)])
    assert res.exit_code != 0 and error in str(res.exception) + res.output
    assert ran == [] and not (tmp_path / "r").exists()


def test_screenshot_option_writes_the_first_screen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a stand-in browser (CI has no Chromium): the PNG it is asked for lands at the path given."""
    _stub_studies(monkeypatch)
    monkeypatch.setattr("cryptoffload.calibrate.ciphers.calibrate_ciphers", lambda out, **kw: Path(out))
    fake = tmp_path / "chromium"
    fake.write_text('#!/bin/sh\nfor a in "$@"; do case "$a" in --screenshot=*) '
                    'printf \'\\211PNG\\r\\n\\032\\n\' > "${a#--screenshot=}";; esac; done\n')
    fake.chmod(0o755)
    monkeypatch.setenv("CRYPTOFFLOAD_CHROMIUM", str(fake))
    shot = tmp_path / "shots" / "first.png"
    res = CliRunner().invoke(cli.app, ["report", "--out", str(tmp_path / "r"), "--screenshot", str(shot)])
    assert res.exit_code == 0, res.output
    assert shot.read_bytes().startswith(b"\x89PNG") and (tmp_path / "r" / "index.html").exists()
