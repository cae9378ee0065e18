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


def _bootstrap_profile(folder: Path, ring: int = 4096) -> Path:
    """A per-level profile: a rotation's cost grows with the limbs, hoisting saves 3/4, EvalMod's
    products cost a rotation (the shape of OpenFHE's measured costs, in round numbers)."""
    lines = ['[meta]', 'name = "cli_test"', 'kind = "measured"', 'description = "round numbers"', '',
             '[ring]', f'poly_modulus_degree = {{ value = {ring}, source = "test" }}']
    for lv in (1, 13, 25):
        r = 1e-3 * (lv + 1)
        ops = {"rotate_s": r, "hoisted_rotate_s": r / 4, "pmul_s": r / 50, "add_s": r / 200, "rescale_s": r / 20,
               "mul_s": r}
        lines += [f"[level.{lv}]"] + [f'{k} = {{ value = {v!r}, source = "test" }}' for k, v in ops.items()]
    path = folder / "boot.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_plan_bootstrap_prints_the_plan_beside_openfhes_default(tmp_path: Path) -> None:
    prof = str(_bootstrap_profile(tmp_path))
    ok = run_cli(tmp_path, "plan", "bootstrap", "--ring", "4096", "--profile", prof, "--devices", "2")
    assert ok.returncode == 0, ok.stderr
    out = ok.stdout
    assert "CKKS bootstrap plan: N = 4096, 2048 slots, depth 25, at least 2 levels after  [simulated]" in out
    assert "OpenFHE default" in out and "planner" in out and "(5, 4)" in out and "Stages of the chosen plan" in out
    assert "not a measurement" in out and "cli_test (measured)" in out


def test_plan_bootstrap_json_is_the_plan_a_script_hands_to_a_backend(tmp_path: Path) -> None:
    import json

    from cryptoffload.crypto.ckks.bootstrap.plan import BootstrapPlan
    from cryptoffload.policies.bootstrap_model import bootstrap_depth

    prof = str(_bootstrap_profile(tmp_path))
    ok = run_cli(tmp_path, "plan", "bootstrap", "--ring", "4096", "--profile", prof, "--json", columns=20)
    assert ok.returncode == 0, ok.stderr
    data = json.loads(ok.stdout)
    assert all(len(line) < 200 for line in ok.stdout.splitlines())           # one value a line, never wrapped
    plan = BootstrapPlan(**{k: tuple(v) if isinstance(v, list) else v for k, v in data["chosen"]["plan"].items()})
    assert bootstrap_depth(plan.level_budget) + data["chosen"]["levels_after"] == data["setting"]["depth"] == 25
    assert data["openfhe_default"]["plan"]["level_budget"] == [5, 4] and data["provenance"] == "simulated"
    chosen, default = data["chosen"]["predicted_ms"]["total"], data["openfhe_default"]["predicted_ms"]["total"]
    assert data["predicted_speedup"] == default / chosen >= 1
    assert "on_devices" not in data and {"CoeffToSlot", "EvalMod", "SlotToCoeff", "total"} <= set(
        data["chosen"]["predicted_ms"])
    short = json.loads(run_cli(tmp_path, "plan", "bootstrap", "--ring", "4096", "--profile", prof, "--depth", "21",
                               "--json").stdout)
    assert short["openfhe_default"] is None and "does not fit" in short["openfhe_default_note"]


def test_plan_bootstrap_bad_options_are_one_line(tmp_path: Path) -> None:
    prof = str(_bootstrap_profile(tmp_path))
    base = ["plan", "bootstrap", "--profile", prof, "--ring", "4096"]
    assert_user_error(run_cli(tmp_path, "plan", "bootstrap", "--ring", "5000"), "--ring", "power of two")
    assert_user_error(run_cli(tmp_path, "plan", "bootstrap", "--ring", "524288"), "--ring must be between 1,024 and 131,072")
    assert_user_error(run_cli(tmp_path, *base, "--slots", "3"), "--slots")
    assert_user_error(run_cli(tmp_path, *base, "--slots", "4096"), "--slots must be 0 (full packing) or a power of two from 2 to 2048")
    assert_user_error(run_cli(tmp_path, *base, "--depth", "17"), "no bootstrap fits depth 17")
    assert_user_error(run_cli(tmp_path, *base, "--devices", "65"), "--devices must be between 1 and 64")
    assert_user_error(run_cli(tmp_path, *base, "--link-gbps", "0"), "--link-gbps", "Gb/s")
    assert_user_error(run_cli(tmp_path, *base, "--link-latency-us", "1e9"), "--link-latency-us", "us")
    assert_user_error(run_cli(tmp_path, "plan", "bootstrap", "--profile", str(tmp_path / "no.toml")), "not found")
