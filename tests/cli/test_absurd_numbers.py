"""Issue 22 item 7: absurd numbers still passed. A float option at 1e308 or 1e-300, a profile
field at 1e-300, NaN or an infinity spelled in TOML, an integer too large for a float: each was
accepted and gave nonsense (a trace whose second request came 1e300 s after the first) or an
overflow traceback (``ridge csp --x-bound 1e308``: ``math.ceil(inf)``; a TOML integer of 400
digits: ``float()``). Now every number typed or read has a floor and a ceiling in its unit, and
the refusal is one ``error:`` line naming the option or the file and field, the unit and the
range, exit 2, nothing written."""

from __future__ import annotations

import re
import tempfile
from importlib import resources
from pathlib import Path

import pytest

from cli_contract import CLEAN, Outcome, run_cli_forked

RIDGE_CSP = ["ridge", "csp", "--port", "0", "--max-records", "100", "--insecure-http"]
Q = ["--quick", "--no-progress"]

# every float option of the app (test_the_float_options_listed_here_are_all_the_apps), the
# arguments it needs, and the unit its message names
FLOAT_OPTIONS = [
    (["calibrate"], "--seconds", "s"),
    (["calibrate", "ciphers"], "--seconds", "s"),
    (["calibrate", "paillier-window"], "--seconds", "s"),
    (["plan", "bootstrap"], "--link-gbps", "Gb/s"),
    (["plan", "bootstrap"], "--link-latency-us", "us"),
    (["plan", "isc", "--clients", "10"], "--requests-per-client", "requests/s"),
    (["plan", "isc", "--clients", "10"], "--nand-tb", "TB"),
    (["ridge", "buyer", "--platform", "http://127.0.0.1:1", "--csp", "http://127.0.0.1:1", "--insecure-http"],
     "--timeout", "s"),
    (["ridge", "platform", "--port", "0", "--csp", "http://127.0.0.1:1", "--db", "p.db", "--csp-token-file", "{token}",
      "--providers", "alice", "--insecure-http"], "--wait-csp", "s"),
    (["ridge", "provider", "--platform", "http://127.0.0.1:1", "--data", "generate:n=10", "--token-file", "{token}",
      "--no-progress", "--insecure-http", "--csp-fingerprint", "0" * 64], "--retry-for", "s"),
    (RIDGE_CSP, "--x-bound", "between 1e-06 and 1e+09"),
    (RIDGE_CSP, "--y-bound", "between 1e-06 and 1e+09"),
    (RIDGE_CSP, "--lam", "0 or between 1e-09 and 1e+12"),
    (["ridge", "demo", "--no-progress"], "--lam", "0 or between 1e-09 and 1e+12"),
    (["study", "fpga-reconfig", *Q], "--reconfig-ms", "ms"),
    (["study", "fpga-reconfig", *Q], "--window-mb", "MB"),
    (["study", "fpga-reconfig", *Q], "--rates", "requests/s"),
    (["study", "isc-he-cnn", *Q], "--dram-gb", "GB"),
    (["study", "ridge", *Q], "--lam", "0 or between 1e-09 and 1e+12"),
    (["tls", "bench", "--quick"], "--interval", "s"),
    (["tls", "bench", "--quick"], "--wrk-duration", "s"),
    (["tls", "bench", "--quick"], "--latency-target-ms", "ms"),
    (["trace", "generate", "--out", "t.csv"], "--rate", "requests/s"),
]


def _run(argv: list[str], watch: list[Path] = ()) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="cli-absurd-") as work:
        outcome = run_cli_forked(argv, Path(work), watch=list(watch), timeout=60.0,
                                 env={"CRYPTOFFLOAD_RIDGE_BUYER_TOKEN": ""})
        assert not list(Path(work).iterdir()), "a refused command wrote into its working folder"
    return outcome


def _one_error_line(outcome: Outcome, *needles: str) -> str:
    assert outcome.verdict == CLEAN, outcome.describe()  # exit 2, one error: line, no traceback, nothing written
    line = outcome.stderr.strip()
    for n in needles:
        assert n in line, line
    return line


@pytest.fixture(scope="module")
def token(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("absurd-token") / "token"
    path.write_text("t" * 64 + "\n")
    path.chmod(0o600)
    return path


@pytest.mark.parametrize("value", ["1e308", "1e-300"])
@pytest.mark.parametrize("base, flag, unit", FLOAT_OPTIONS, ids=[f"{' '.join(b[:2])} {f}" for b, f, _ in FLOAT_OPTIONS])
def test_every_float_option_has_a_floor_and_a_ceiling(token: Path, base: list[str], flag: str, unit: str,
                                                      value: str) -> None:
    argv = [a.format(token=token) for a in base]
    line = _one_error_line(_run([*argv, flag, value], [token.parent]), flag, unit, "between")
    assert re.search(r"got 1e[+-]30[08]$", line), line


def test_the_float_options_listed_here_are_all_the_apps() -> None:
    from cli_contract import cli_commands, option_name, param_kind

    found = {(" ".join(path), option_name(p)) for path, params in cli_commands().items()
             for p in params if param_kind(p) == "float"}
    listed = {(" ".join(w for w in b[:2] if not w.startswith("-")), f) for b, f, _ in FLOAT_OPTIONS}
    assert found <= listed, f"float options without a bound test here: {sorted(found - listed)}"


def test_an_option_at_1e308_that_overflowed_to_a_traceback_is_one_error_line() -> None:
    # before: OverflowError: cannot convert float infinity to integer (x_bound ** 2 * 2^f), exit 1
    _one_error_line(_run([*RIDGE_CSP, "--x-bound", "1e308"]), "--x-bound must be between 1e-06 and 1e+09, got 1e+308")


def test_negative_zero_is_zero_where_zero_is_refused() -> None:
    _one_error_line(_run(["trace", "generate", "--out", "t.csv", "--rate", "-0.0"]),
                    "--rate must be between 0.001 and 1e+09 requests/s, got -0.0")


@pytest.fixture(scope="module")
def profiles(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("absurd-profiles")
    bsgs = resources.files("cryptoffload.profiles").joinpath("bsgs_u280.toml").read_text(encoding="utf-8")
    for tag, field, value in [("rotate_tiny", "rotate_s", "1e-300"), ("rotate_nan", "rotate_s", "nan"),
                              ("rotate_inf", "rotate_s", "inf"), ("rotate_neg_inf", "rotate_s", "-inf"),
                              ("bandwidth_huge", "bandwidth_Bps", "1e308"),
                              ("diagonals_400_digits", "diagonals", "9" * 400)]:
        text, n = re.subn(rf"({field}\s*=\s*\{{\s*value\s*=\s*)[^,}}]+", rf"\g<1>{value}", bsgs, count=1)
        assert n == 1, field
        (root / f"{tag}.toml").write_text(text)
    return root


def test_a_profile_field_at_1e_300_names_file_field_unit_and_range(profiles: Path) -> None:
    _one_error_line(_run(["plan", "bsgs", "--profile", str(profiles / "rotate_tiny.toml")], [profiles]),
                    "rotate_tiny.toml", "field 'ops.rotate_s'", "a duration in s",
                    "0 or a number between 1e-12 and 1e+06 s", "got 1e-300")


def test_a_profile_field_at_1e308_is_refused(profiles: Path) -> None:
    _one_error_line(_run(["study", "bsgs-multidevice", *Q, "--profile", str(profiles / "bandwidth_huge.toml")],
                         [profiles]),
                    "bandwidth_huge.toml", "field 'link.bandwidth_Bps'", "between 1 and 1e+15 B/s", "got 1e+308")


@pytest.mark.parametrize("tag, shown", [("rotate_nan", "nan"), ("rotate_inf", "inf"), ("rotate_neg_inf", "-inf")])
def test_nan_and_inf_spelled_in_a_profile_are_refused_with_the_range(profiles: Path, tag: str, shown: str) -> None:
    _one_error_line(_run(["plan", "bsgs", "--profile", str(profiles / f"{tag}.toml")], [profiles]),
                    f"{tag}.toml", "field 'ops.rotate_s'", "between 1e-12 and 1e+06 s", f"got {shown} (not a finite number)")


def test_a_profile_integer_too_large_for_a_float_is_one_error_line(profiles: Path) -> None:
    # before: OverflowError: int too large to convert to float (math.isfinite on the TOML integer), exit 1
    _one_error_line(_run(["plan", "bsgs", "--profile", str(profiles / "diagonals_400_digits.toml")], [profiles]),
                    "diagonals_400_digits.toml", "field 'shape.diagonals'", "a whole number between 1 and 1e+09",
                    "not a finite number")
