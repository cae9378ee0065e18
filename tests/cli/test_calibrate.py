"""``cryptoffload calibrate``: a measured profile is written, and bad options write nothing."""

from __future__ import annotations

import json
import os
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


def _write_measured(path: Path, values: dict[str, float]) -> Path:
    from cryptoffload.profiles.loader import ProfileValue, write_profile

    meta = {"name": "measured-test", "kind": "measured", "description": "test"}
    return write_profile(path, meta, {k: ProfileValue(v, "measured in a test") for k, v in values.items()})


CKKS_VALUES = {"ring.limbs": 3, "ops.rotate_s": 0.003175, "ops.pmul_s": 0.0002524, "ciphertext.bytes": 330554,
               "link.bandwidth_Bps": 388988195.75, "overhead.concurrent_slowdown": 1.51}


def test_calibrate_ckks_prints_what_it_measured_with_units(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not only "wrote ...": the values written, read back from the file, each in a unit."""
    from contextlib import nullcontext

    from typer.testing import CliRunner

    from cryptoffload import cli

    monkeypatch.setattr("cryptoffload.crypto.ckks.make_backend", lambda name, params: None)
    monkeypatch.setattr("cryptoffload.engines.dask.DaskRunner", lambda address, workers, **kw: nullcontext())
    monkeypatch.setattr("cryptoffload.calibrate.ckks.calibrate_ckks",
                        lambda out, **kw: _write_measured(out, CKKS_VALUES))
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli.app, ["calibrate", "ckks", "--out", "p.toml"])
    assert res.exit_code == 0, res.output
    assert [line.rstrip() for line in res.stdout.splitlines()] == [
        "measured-test: measured values",
        "┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━┳━━━━━━┓",
        "┃ field                        ┃ value ┃ unit ┃",
        "┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━╇━━━━━━┩",
        "│ ring.limbs                   │     3 │      │",
        "│ ops.rotate_s                 │  3.17 │ ms   │",
        "│ ops.pmul_s                   │ 252.4 │ us   │",
        "│ ciphertext.bytes             │ 330.6 │ KB   │",
        "│ link.bandwidth_Bps           │ 389.0 │ MB/s │",
        "│ overhead.concurrent_slowdown │  1.51 │      │",
        "└──────────────────────────────┴───────┴──────┘",
        "wrote p.toml",
    ]


@pytest.mark.parametrize("field,value,shown", [
    ("ops.enc.per_item_s", 2.5e-8, (25.0, "ns")), ("ops.enc.fixed_s", 1.5, (1.5, "s")),
    ("link.h2d_bytes_per_s", 2.4e10, (24000.0, "MB/s")), ("ops.enc.bytes_in", 512, (512.0, "bytes")),
    ("ops.enc.wave_items", 4096, (4096, "")), ("ciphertext.bytes", 2.5e6, (2.5, "MB"))])
def test_measured_values_are_shown_in_their_unit(field: str, value: float, shown: tuple) -> None:
    from cryptoffload.cli.calibrate import shown as shown_as

    got = shown_as(field, value)
    assert (round(got[0], 9), got[1]) == shown


def test_measured_table_leaves_out_the_raw_samples(tmp_path: Path) -> None:
    """calibrate gpu: the fitted costs are shown, not the per-batch timings they were fitted to."""
    from rich.console import Console

    from cryptoffload.cli.calibrate import measured_table

    path = _write_measured(tmp_path / "g.toml", {"samples.enc.b8192_s": 0.01, "ops.enc.per_item_s": 2.5e-8,
                                                "link.h2d_bytes_per_s": 2.4e10})
    console = Console(record=True, width=80)
    console.print(measured_table(path, skip=("samples.",)))
    rows = [line for line in console.export_text().splitlines() if line.startswith("│")]
    assert rows == ["│ ops.enc.per_item_s   │     25 │ ns   │", "│ link.h2d_bytes_per_s │ 24,000 │ MB/s │"]


def test_calibrate_paillier_window_caches_this_cpus_choice(tmp_path: Path) -> None:
    """--choose-window's home: every backend that runs here measured again, the fastest window
    cached per CPU (0600) where encryption reads it."""
    env = dict(os.environ, CRYPTOFFLOAD_CACHE=str(tmp_path / "cache"), PYTHONPATH=os.environ.get("PYTHONPATH", ""))
    proc = run_cli(tmp_path, "calibrate", "paillier-window", "--bits", "512", "--seconds", "0.005", "--rounds", "1",
                   "--max-table-mib", "4", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "constant time" in proc.stdout and "cached in" in proc.stdout
    cache = tmp_path / "cache" / "paillier-windows.json"
    assert cache.stat().st_mode & 0o777 == 0o600
    assert json.loads(cache.read_text())["cpus"]


@pytest.mark.parametrize("args, needle", [(["--bits", "100"], "512-bit floor"), (["--backend", "qat"], "--backend"),
                                          (["--seconds", "0"], "seconds"), (["--rounds", "0"], "--rounds")])
def test_calibrate_paillier_window_bad_input_is_one_line(tmp_path: Path, args, needle) -> None:
    env = dict(os.environ, CRYPTOFFLOAD_CACHE=str(tmp_path / "cache"))
    assert_user_error(run_cli(tmp_path, "calibrate", "paillier-window", *args, env=env), needle)
    assert not (tmp_path / "cache").exists()
