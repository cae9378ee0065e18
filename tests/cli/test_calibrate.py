"""``cryptoffload calibrate``: a measured profile is written, and bad options write nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import assert_user_error, run_cli

from cryptoffload.profiles import load_profile


def test_calibrate_ciphers_writes_a_measured_profile(tmp_path: Path) -> None:
    proc = run_cli(tmp_path, "calibrate", "ciphers", "--out", "p.toml", "--seconds", "0.01")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "wrote p.toml" in proc.stdout
    prof = load_profile(tmp_path / "p.toml")
    assert prof.kind == "measured"
    assert prof.values, "no measured value"
    assert all(pv.value > 0 and pv.source.strip() for pv in prof.values.values())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.toml"]


def test_calibrate_bad_seconds_is_a_user_error(tmp_path: Path) -> None:
    proc = run_cli(tmp_path, "calibrate", "ciphers", "--out", "p.toml", "--seconds", "-1")
    # sim/calibrate.py's own progress bar may leave a blank line on stderr
    assert_user_error(proc, "seconds", strict=False)
    assert not (tmp_path / "p.toml").exists()


def test_calibrate_ckks_on_the_gpu_without_one_refuses_and_writes_nothing(tmp_path: Path) -> None:
    from cryptoffload.crypto.ckks.gpu.device import gpu_reason

    if gpu_reason() is None:  # pragma: no cover - a CUDA machine measures instead
        pytest.skip("a GPU is present: calibrate ckks --backend gpu measures it")
    proc = run_cli(tmp_path, "calibrate", "ckks", "--backend", "gpu", "--out", "p.toml")
    assert_user_error(proc, "gpu CKKS backend is unavailable", "gpu-twin")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args,needle", [((), "needs a CUDA GPU"), (("--batches", "5"), "--batches"),
                                         (("--repeats", "0"), "--repeats"), (("--bits", "100"), "512")])
def test_calibrate_gpu_refuses_in_one_line(tmp_path: Path, args, needle) -> None:
    from cryptoffload.engines.gpu import gpu_reason

    if gpu_reason() is None and not args:
        pytest.skip("a CUDA GPU is present: calibrate gpu would measure it")
    proc = run_cli(tmp_path, "calibrate", "gpu", "--out", "g.toml", *args)
    assert_user_error(proc, needle)
    assert not (tmp_path / "g.toml").exists()
