"""The Python API's studies (cryptoffload.api.study): names, options, refusals before anything
runs or is written (with the closest names), and a result read back. A study's full run is in
docs/examples/4_study.py (tests/docs/test_examples.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cryptoffload import study
from cryptoffload.errors import ConfigError


def test_names_and_options_are_the_command_lines() -> None:
    assert study.names() == ["bsgs-multidevice", "fpga-reconfig", "isc-he-cnn", "paillier-offload", "ridge",
                             "tls-offload"]
    opts = study.options("fpga-reconfig")
    assert "rates" in opts and "reconfig_ms" in opts and opts["rates"].startswith("Comma-separated")


def test_bad_names_and_options_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown study 'ridg' .*did you mean 'ridge'\\?"):
        study.run("ridg", tmp_path / "o")
    with pytest.raises(ConfigError, match="no option 'rate' \\(did you mean 'rates'\\?\\)"):
        study.run("fpga-reconfig", tmp_path / "o", rate=[100])
    with pytest.raises(ConfigError, match="--rates must be between"):
        study.run("fpga-reconfig", tmp_path / "o", rates=[0])
    with pytest.raises(ConfigError, match="seed"):
        study.run("fpga-reconfig", tmp_path / "o", seed=-1)
    assert not (tmp_path / "o").exists()


def test_read_gives_back_a_written_result(tmp_path: Path) -> None:
    from cryptoffload.report.result import StudyResult, Table, write_result

    res = StudyResult(study="x", title="X", mode="quick", seed=1, version="0", machine={"cpu": "c"})
    res.add(Table("t", "T", ["a", "b"], [[1, 2.5]], provenance="simulated"))
    write_result(res, tmp_path / "o")
    back = study.read(tmp_path / "o")
    assert back.study == "x" and back.tables["t"].rows == [[1, 2.5]]
    assert study.read(tmp_path / "o" / "result.json").mode == "quick"
