"""``cryptoffload plan``: the BSGS planner and the CSD capacity planner print their tables; bad
options and profiles are one error line."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import assert_user_error, run_cli


def test_plan_bsgs_and_its_errors(tmp_path: Path) -> None:
    ok = run_cli(tmp_path, "plan", "bsgs", "--devices", "1,4", "--diagonals", "256", "--exhaustive")
    assert ok.returncode == 0, ok.stderr
    assert "replicate" in ok.stdout and "predicted ms" in ok.stdout
    # C = 256 is not the study's product (C = 32768): only the planner's own baseline is named
    assert ok.stdout.splitlines()[-1] == ("naive (bs=16): the fastest baby-step size on one device for this profile, "
                                          "kept as is on N devices with replicated baby steps; speed-up at N = 4: 1.08x")
    assert "study" not in ok.stdout
    assert_user_error(run_cli(tmp_path, "plan", "bsgs", "--devices", "2,x"), "--devices")
    assert_user_error(run_cli(tmp_path, "plan", "bsgs", "--strategy", "gather"), "unknown BSGS strategy")
    assert_user_error(run_cli(tmp_path, "plan", "bsgs", "--diagonals", "0"), "--diagonals must be between 1 and 65,536 diagonals, got 0")
    bad = tmp_path / "bad.toml"
    bad.write_text('[meta]\nname = "bad"\nkind = "measured"\ndescription = "no rotation"\n'
                   '[ops]\npmul_s = { value = 1e-4, source = "x" }\nadd_s = { value = 1e-5, source = "x" }\n'
                   '[ciphertext]\nbytes = { value = 1e6, source = "x" }\n'
                   '[link]\nbandwidth_Bps = { value = 1e9, source = "x" }\nlatency_s = { value = 0, source = "x" }\n')
    assert_user_error(run_cli(tmp_path, "plan", "bsgs", "--profile", str(bad)), "ops.rotate_s", "rotation")


def test_plan_bsgs_names_its_naive_baseline_and_the_studys(tmp_path: Path) -> None:
    """One question, one answer: the planner's naive bs (169, the fastest on one device) is not
    the study's Table 1 naive bs (256); both speed-ups are given, and how to plan as the study."""
    ok = run_cli(tmp_path, "plan", "bsgs", "--devices", "16")
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.splitlines()[-3:] == [
        "naive (bs=169): the fastest baby-step size on one device for this profile, kept as is on N devices with "
        "replicated baby steps; speed-up at N = 16: 1.36x",
        "the study's Table 1 (bsgs-multidevice) keeps bs = 256 instead (the profile's shape.naive_baby, else the "
        "paper's 256): against it, speed-up at N = 16: 1.63x here",
        "the study also tunes only powers of two with replicated baby steps: --naive-bs 256 --space pow2 --strategy "
        "replicate plans as it does"]
    as_study = run_cli(tmp_path, "plan", "bsgs", "--devices", "16", "--naive-bs", "256", "--space", "pow2",
                       "--strategy", "replicate")
    assert as_study.stdout.splitlines()[-1] == (  # the study's 1.60x at N = 16 (docs/studies/bsgs-multidevice.md)
        "naive (bs=256): --naive-bs 256, kept as is on N devices with replicated baby steps; speed-up at N = 16: 1.60x")


def test_plan_isc_prints_the_capacity_table(tmp_path: Path) -> None:
    ok = run_cli(tmp_path, "plan", "isc", "--clients", "100")
    assert ok.returncode == 0, ok.stderr
    assert "CSD capacity plan for 100 clients" in ok.stdout and "CSDs recommended" in ok.stdout
    assert ok.stdout.splitlines()[-1] == (
        "1 CSD recommended, sized by capacity only: no --requests-per-client given, so load is not sized "
        "(one CSD carries 0.864 inferences/s at 80% busy)")
    loaded = run_cli(tmp_path, "plan", "isc", "--clients", "100", "--requests-per-client", "0.05")
    assert loaded.stdout.splitlines()[-1] == (
        "6 CSDs recommended: the larger of 1 for capacity and 6 for the load (5 inferences/s, 0.864 per CSD at 80% busy)")
    assert_user_error(run_cli(tmp_path, "plan", "isc", "--clients", "0"), "--clients must be between 1 and 1,000,000,000 clients, got 0")


def test_plan_profile_must_be_a_regular_file(tmp_path: Path) -> None:
    """issue 22: a profile that is a FIFO or a device is refused before it is read."""
    import os

    os.mkfifo(tmp_path / "p.toml")
    assert_user_error(run_cli(tmp_path, "plan", "bsgs", "--profile", "p.toml", timeout=60), "not a regular file")
    assert_user_error(run_cli(tmp_path, "plan", "bsgs", "--profile", "/dev/zero", timeout=60), "not a regular file")
