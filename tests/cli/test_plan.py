"""``cryptoffload plan``: the BSGS planner and the CSD capacity planner print their tables; bad
options and profiles are one error line."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import assert_user_error, run_cli


def test_plan_bsgs_and_its_errors(tmp_path: Path) -> None:
    ok = run_cli(tmp_path, "plan", "bsgs", "--devices", "1,4", "--diagonals", "256", "--exhaustive")
    assert ok.returncode == 0, ok.stderr
    assert "replicate" in ok.stdout and "predicted ms" in ok.stdout
    assert_user_error(run_cli(tmp_path, "plan", "bsgs", "--devices", "2,x"), "--devices")
    assert_user_error(run_cli(tmp_path, "plan", "bsgs", "--strategy", "gather"), "unknown BSGS strategy")
    assert_user_error(run_cli(tmp_path, "plan", "bsgs", "--diagonals", "0"), "--diagonals must be a positive integer")
    bad = tmp_path / "bad.toml"
    bad.write_text('[meta]\nname = "bad"\nkind = "measured"\ndescription = "no rotation"\n'
                   '[ops]\npmul_s = { value = 1e-4, source = "x" }\nadd_s = { value = 1e-5, source = "x" }\n'
                   '[ciphertext]\nbytes = { value = 1e6, source = "x" }\n'
                   '[link]\nbandwidth_Bps = { value = 1e9, source = "x" }\nlatency_s = { value = 0, source = "x" }\n')
    assert_user_error(run_cli(tmp_path, "plan", "bsgs", "--profile", str(bad)), "ops.rotate_s", "rotation")


def test_plan_isc_prints_the_capacity_table(tmp_path: Path) -> None:
    ok = run_cli(tmp_path, "plan", "isc", "--clients", "100")
    assert ok.returncode == 0, ok.stderr
    assert "CSD capacity plan for 100 clients" in ok.stdout and "CSDs recommended" in ok.stdout
    assert_user_error(run_cli(tmp_path, "plan", "isc", "--clients", "0"), "--clients must be a positive integer")


def test_plan_profile_must_be_a_regular_file(tmp_path: Path) -> None:
    """issue 22: a profile that is a FIFO or a device is refused before it is read."""
    import os

    os.mkfifo(tmp_path / "p.toml")
    assert_user_error(run_cli(tmp_path, "plan", "bsgs", "--profile", "p.toml", timeout=60), "not a regular file")
    assert_user_error(run_cli(tmp_path, "plan", "bsgs", "--profile", "/dev/zero", timeout=60), "not a regular file")
