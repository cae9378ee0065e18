"""``cryptoffload study``: the listing, the user-error contract on bad options, profiles and
traces (exit 2, one line, nothing written), and a tiny run that writes the result contract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import assert_nothing_written, assert_user_error, run_cli

from cryptoffload import __version__
from cryptoffload.profiles import builtin_profile_path
from cryptoffload.report.result import PROVENANCES
from cryptoffload.studies import all_studies


PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_study_list(tmp_path: Path) -> None:
    proc = run_cli(tmp_path, "study", "list")
    assert proc.returncode == 0, proc.stderr
    lines = {ln.split()[0]: ln for ln in proc.stdout.splitlines() if ln.strip()}
    assert "fpga-reconfig" in lines
    for name, spec in all_studies().items():   # every study's line names the paper it reproduces
        assert spec.title in lines[name] and spec.paper.short() in lines[name], lines[name]


def test_readme_studies_are_exactly_the_study_list(tmp_path: Path) -> None:
    """issue 25: the README's study section named `he-cnn`, which `study` does not have. Its
    headings are now the names `cryptoffload study list` prints, in its order."""
    import re

    proc = run_cli(tmp_path, "study", "list")
    assert proc.returncode == 0, proc.stderr
    listed = [ln.split()[0] for ln in proc.stdout.splitlines() if ln.strip()]
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Studies\n", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"^### `([^`]+)`", section, re.MULTILINE) == listed
    assert listed == ["bsgs-multidevice", "fpga-reconfig", "isc-he-cnn", "paillier-offload", "ridge", "tls-offload"]


def _bad_profile(tmp_path: Path) -> str:
    text = builtin_profile_path("virtex2_ciphers").read_text(encoding="utf-8")
    lines = [ln for ln in text.splitlines() if not ln.startswith("fpga_mbps = { value = 8880")]
    assert len(lines) == len(text.splitlines()) - 1
    (tmp_path / "bad.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return "bad.toml"


def _garbage_trace(tmp_path: Path) -> str:
    (tmp_path / "garbage.csv").write_text("foo bar\nbaz qux quux\n,,,,,,\n\x01\x02\n", encoding="utf-8")
    return "garbage.csv"


BAD_STUDY_ARGS = {
    "unknown-policy": (["--policies", "nosuch"], ["nosuch"]),
    "one-unknown-policy-among-good": (["--policies", "predict,nosuch"], ["nosuch"]),
    "rate-zero": (["--rates", "0"], ["rate"]),
    "rate-negative": (["--rates", "-5"], ["rate", "-5"]),
    "rate-negative-among-good": (["--rates", "100,-1"], ["rate"]),
    "rate-nan": (["--rates", "nan"], ["rate"]),
    "rate-not-a-number": (["--rates", "10,abc"], ["--rates", "abc"]),
    "requests-one": (["--requests", "1"], ["--requests"]),
    "profile-missing-field": ([], ["bad.toml", "ciphers.aes-ecb.fpga_mbps"]),
    "profile-not-found": (["--profile", "does-not-exist.toml"], ["does-not-exist.toml"]),
    "profile-unknown-builtin": (["--profile", "no_such_builtin"], ["no_such_builtin"]),
    "trace-garbage": ([], ["garbage.csv", "no valid request lines"]),
    "trace-not-found": (["--trace", "absent.csv"], ["absent.csv"]),
    "window-zero": (["--window-mb", "0"], ["--window-mb"]),
    "engine-unknown": (["--engine", "warp"], ["warp"]),
}


@pytest.mark.parametrize("case", list(BAD_STUDY_ARGS))
def test_study_user_errors_exit_2_with_one_line_and_write_nothing(tmp_path: Path, case: str) -> None:
    args, needles = BAD_STUDY_ARGS[case]
    if case == "profile-missing-field":
        args = ["--profile", _bad_profile(tmp_path)]
    if case == "trace-garbage":
        args = ["--trace", _garbage_trace(tmp_path)]
    small = [] if "--requests" in args else ["--requests", "500"]  # fast if the check came late
    # a narrow terminal: the one line must not be wrapped
    proc = run_cli(tmp_path, "study", "fpga-reconfig", *args, *small, "--out", "o", columns=40)
    assert_user_error(proc, *needles)
    assert_nothing_written(tmp_path / "o")


@pytest.mark.slow
def test_small_study_run_writes_the_contract(tmp_path: Path) -> None:
    proc = run_cli(tmp_path, "study", "fpga-reconfig", "--requests", "3000", "--rates", "100,1000", "--out", "o",
               "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stdout.splitlines()
    # the findings on stdout, where the files are on stderr (status lines), no tables (--tables prints them)
    assert proc.stderr.splitlines() == ["wrote o/result.json (16 tables, 3 figures)",
                                        "tables: one CSV each in o/ (--tables prints them here)"]
    assert not any(line.startswith(("┏", "│")) for line in lines) and len(lines) < 25
    # the scoreboard first, then the paper's Predict, our tuned interval beside it
    assert sum(line.startswith("• ") for line in lines) == 8 and lines[1].startswith("• Scoreboard: ")
    out = tmp_path / "o"
    data = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert {"study", "mode", "seed", "version", "machine", "tables", "figures", "profiles", "notes"} <= set(data)
    assert (data["study"], data["seed"], data["version"]) == ("fpga-reconfig", 1, __version__)
    assert data["mode"] in ("quick", "full")
    for tid in ("table6_p90_vs_oracle", "mean_p90_vs_oracle", "latency_p90_ms", "fig7_load_factor",
                "table7_cipher_mix", "table8_enc_time_reduction_pct"):
        assert tid in data["tables"], tid
        t = data["tables"][tid]
        assert {"columns", "rows", "paper", "provenance"} <= set(t)
        assert t["provenance"] in PROVENANCES
        assert all(len(r) == len(t["columns"]) for r in t["rows"])
        assert (out / f"{tid}.csv").is_file()
    t6 = data["tables"]["table6_p90_vs_oracle"]
    assert t6["columns"][0] == "rate" and [r[0] for r in t6["rows"]] == [100, 1000]
    assert [r[0] for r in t6["paper"]] == [100, 1000]
    assert (out / "table6_p90_vs_oracle_paper.csv").is_file()
    assert data["extra"]["config"]["requests"] == 3000
    assert any("virtex2_ciphers" in p for p in data["profiles"])
    assert data["figures"] and all(f.endswith(".png") for f in data["figures"])
    for f in data["figures"]:
        assert (out / f).read_bytes()[:8] == PNG_MAGIC
    assert not [p for p in out.iterdir() if p.name.startswith(".partial-")]


def test_study_paillier_offload_bad_option(tmp_path: Path) -> None:
    proc = run_cli(tmp_path, "study", "paillier-offload", "--quick", "--bits", "1001", "--out", "po")
    assert_user_error(proc, "even")
    assert_nothing_written(tmp_path / "po")


def test_every_registered_study_has_a_command_with_its_options() -> None:
    """The `study NAME` commands are generated from the registry: each has --quick, --out,
    --no-progress and every option the study declares."""
    from typer.testing import CliRunner

    from cryptoffload import cli
    from cryptoffload.studies import all_studies

    studies = all_studies()
    assert {"bsgs-multidevice", "fpga-reconfig", "isc-he-cnn", "paillier-offload", "ridge", "tls-offload"} <= set(studies)
    for name, spec in studies.items():
        res = CliRunner().invoke(cli.app, ["study", name, "--help"], env={"COLUMNS": "300"})
        assert res.exit_code == 0, res.output
        for flag in ["--quick", "--out", "--no-progress", *(o.flag.split("/")[0] for o in spec.options)]:
            assert flag in res.output, (name, flag)
        assert ("--seed" in res.output) == (spec.seed_help is not None)
