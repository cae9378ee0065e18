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


def _long_result(name: str) -> StudyResult:
    """A study result as long as the real ones: three 12-row tables with titles wider than the
    table, six findings of 400 characters, two notes."""
    from cryptoffload.report.result import Table

    res = StudyResult(name, f"Study {name}", "quick", 1, "test", {},
                      headline=[f"finding {i} of {name}: " + "x" * 400 for i in range(6)],
                      notes=[f"note {i} of {name}: " + "y" * 300 for i in range(2)])
    for t in range(3):
        res.add(Table(f"t{t}", f"table {t} of {name}, " + "a long title " * 9 + "end", ["k", "v"],
                      [[i, float(i)] for i in range(12)], "simulated"))
    return res


def _run_quiet_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str):
    ran = _stub_studies(monkeypatch)
    for name, spec in all_studies().items():
        monkeypatch.setattr(importlib.import_module(spec.module), "run",
                            lambda cfg, out, progress=None, name=name: ran.append(name) or _long_result(name))
    monkeypatch.chdir(tmp_path)  # paths printed as r/...: the line count does not depend on tmp_path
    res = CliRunner().invoke(cli.app, ["report", "--no-calibrate", "--out", "r", *args],
                             env={"COLUMNS": "200"})  # the width the line counts are for (xdist sets 80)
    assert res.exit_code == 0, res.output
    return ran, res.stdout.splitlines()


def test_report_prints_findings_one_line_each_and_where_the_files_are(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without --tables: per study run a title rule, one line per finding and note (cropped to
    the terminal's 200 columns), then where the files are; under 100 lines for the whole report."""
    ran, lines = _run_quiet_report(tmp_path, monkeypatch)
    runs = [run.name for spec in all_studies().values() for run in spec.report_runs()]
    assert ran == [spec.name for spec in all_studies().values() for _ in spec.report_runs()] and len(runs) == 7
    # 7 runs x (rule, 6 findings, 2 notes), the HE-CNN inference's log line, 2 lines at the end
    assert len(lines) == 7 * 9 + 1 + 2 and len(lines) < 100
    first = lines.index("• finding 0 of tls-offload: " + "x" * 171 + "…")
    assert lines[first - 1].startswith("─") and " Study tls-offload (quick mode, seed 1) " in lines[first - 1]
    assert lines[first + 6] == "note: note 0 of tls-offload: " + "y" * 170 + "…"
    assert all(len(line) <= 200 for line in lines)
    assert not any(line.startswith("table 0") for line in lines)
    assert lines[-2:] == [
        "wrote r/index.html",
        "one folder per study in r/ (result.json, a CSV per table, figures): bsgs-multidevice, fpga-reconfig, "
        "isc-he-cnn, isc-he-cnn-trace, paillier-offload, ridge, tls-offload"]


def test_report_tables_flag_prints_every_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each table under its title, a line of its own: a title wider than the table no longer
    wraps into the table's two thin columns."""
    _, lines = _run_quiet_report(tmp_path, monkeypatch, "--tables")
    heading = "table 0 of tls-offload, " + "a long title " * 9 + "end  [simulated]"
    at = lines.index(heading)
    assert lines[at + 1].startswith("┏━") and lines[at + 3].startswith("┡━") and len(lines[at + 1]) < 20
    # 7 runs x (rule, 3 tables, 6 findings and 2 notes in full): the findings fold at the output
    # width (issue 37: lines follow COLUMNS; before, one 430-character line each), none is cut
    assert sum(line.startswith("┏") for line in lines) == 7 * 3 and all(len(line) <= 200 for line in lines)
    assert sum(line.startswith("• finding ") for line in lines) == 7 * 6
    assert "x" * 400 in "".join(lines) and "y" * 300 in "".join(lines)


def test_report_calibration_prints_one_line_not_its_comparison_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The FPGA study's cipher calibration: the comparison table `calibrate ciphers` prints is
    the study's own "this machine" table, so the report says only where the profile went."""
    def calibrate_ciphers(out, **kw):
        kw["console"].print("COMPARISON TABLE")
        return Path(out)

    monkeypatch.setattr("cryptoffload.calibrate.ciphers.calibrate_ciphers", calibrate_ciphers)
    _stub_studies(monkeypatch)
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli.app, ["report", "--out", "r"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert "measured this machine's cipher throughput: wrote r/calibration/ciphers.toml" in lines
    assert "COMPARISON TABLE" not in res.output
