"""The root command: version, and the entry point's handling of errors."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import run_cli

from cryptoffload import __version__


def test_version(tmp_path: Path) -> None:
    proc = run_cli(tmp_path, "version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == __version__


def test_version_option_answers_before_any_command(tmp_path: Path) -> None:
    """issue 25: `cryptoffload --version` (what people reach for), eager: it answers even when a
    command follows, and prints nothing else."""
    from typer.testing import CliRunner

    from cryptoffload.cli import app

    proc = run_cli(tmp_path, "--version")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"{__version__}\n", "")
    res = CliRunner().invoke(app, ["--version", "study", "nosuch"])
    assert (res.exit_code, res.output) == (0, f"{__version__}\n")


def _readme_commands() -> list[tuple[str, ...]]:
    """The command paths of every `.venv/bin/cryptoffload ...` line in the README."""
    import re

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    found = []
    for line in re.findall(r"^\.venv/bin/cryptoffload ([^#\n]*)", text, re.MULTILINE):
        words = [w for w in line.split() if not w.startswith("-")]
        found.append(tuple(words[:2]))
    return found


def test_every_command_the_readme_shows_exists() -> None:
    """A README line naming a command the app does not have (or that lost its group) fails here."""
    from cli_contract import cli_commands

    commands = set(cli_commands())
    shown = _readme_commands()
    assert len(shown) >= 30
    assert shown.count(()) == 1  # `cryptoffload --version`: the root's own option, no command
    missing = [" ".join(c) for c in shown if c and c[:1] not in commands and c[:2] not in commands]
    assert not missing, f"the README shows commands the app does not have: {missing}"
    for path in (("paillier", "add"), ("paillier", "sum"), ("paillier", "mul"), ("he-cnn", "infer")):
        assert path in shown, path  # issue 25: the new commands are in the README


def _app_raising(exc: BaseException):
    import typer

    app = typer.Typer(pretty_exceptions_enable=False)

    @app.command()
    def boom() -> None:
        raise exc

    return app


def test_a_user_error_is_one_line_and_exit_2(monkeypatch, capsys) -> None:
    import pytest

    from cryptoffload.cli import root
    from cryptoffload.errors import ConfigError

    monkeypatch.setattr(root, "app", _app_raising(ConfigError("--rates must be > 0\n(got -1)")))
    with pytest.raises(SystemExit) as info:
        root.main([])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines() == ["error: --rates must be > 0 (got -1)"]


def test_an_internal_failure_keeps_its_traceback_and_exits_1(monkeypatch, capsys) -> None:
    import pytest

    from cryptoffload.cli import root
    from cryptoffload.engines import RingFull

    monkeypatch.setattr(root, "app", _app_raising(RingFull("ring 'requests' is full (4 slots)")))
    with pytest.raises(SystemExit) as info:
        root.main([])
    assert info.value.code == 1
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "RingFull: ring 'requests' is full" in err
    assert "internal error: this is a bug in cryptoffload" in err and "please report it" in err
    assert not any(line.startswith("error:") for line in err.splitlines())


def test_subprocesses_run_the_code_under_test(tmp_path: Path) -> None:
    """The CLI tests start `python -m cryptoffload.cli` in a temporary folder: it must import
    this tree's package, not an installed one (conftest.py makes PYTHONPATH absolute)."""
    import os
    import subprocess
    import sys

    import cryptoffload

    out = subprocess.run([sys.executable, "-c", "import cryptoffload; print(cryptoffload.__file__)"], cwd=tmp_path,
                         env=dict(os.environ), capture_output=True, text=True, check=True).stdout.strip()
    assert Path(out).resolve() == Path(cryptoffload.__file__).resolve()


def test_an_error_after_the_bar_started_leaves_only_its_own_line(capsys) -> None:
    """A study may find bad input after its progress bar started (a trace read in the first
    step): the bar is erased, so the error stays the one line on stderr."""
    import pytest

    from cryptoffload.cli.root import progress_bar
    from cryptoffload.errors import TraceError

    with pytest.raises(TraceError):
        with progress_bar() as prog:
            prog(11)
            raise TraceError("absent.csv: cannot read trace")
    assert capsys.readouterr().err == ""


def test_usage_errors_are_one_error_line_naming_the_command(capsys) -> None:
    """typer's own usage errors (a value that does not parse, an unknown or missing option)
    follow the same contract as ours: one line, exit 2, the command and where help is."""
    import pytest

    from cryptoffload.cli import main

    for argv, needle in ((["paillier", "keygen", "--out", "k", "--nope"], "No such option: --nope"),
                         (["paillier", "keygen"], "Missing option '--out'"),
                         (["no-such-command"], "No such command"),
                         (["paillier", "encrpyt"], "Did you mean 'encrypt'")):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 1 and err[0].startswith("error: cryptoffload") and needle in err[0], err
        assert "--help" in err[0]
    with pytest.raises(SystemExit) as info:  # a number is ours to read (one grammar, a named bound)
        main(["paillier", "keygen", "--bits", "abc", "--out", "k"])
    assert info.value.code == 2
    assert capsys.readouterr().err.splitlines() == ["error: --bits must be an integer (ASCII digits, optional sign), "
                                                    "got 'abc'"]


def test_help_and_exit_codes_pass_through(capsys) -> None:
    import pytest

    from cryptoffload.cli import main

    main(["paillier", "--help"])  # returns: exit status 0
    assert "keygen" in capsys.readouterr().out
    with pytest.raises(SystemExit) as info:
        main(["paillier"])  # a group without a command shows its help (typer: exit 2)
    assert info.value.code == 2 and "keygen" in capsys.readouterr().out


def test_server_limits_options_are_checked_then_apply_to_every_server(capsys) -> None:
    import pytest

    from cryptoffload.apps import serving
    from cryptoffload.cli import root

    before = serving.limits()
    serving.set_limits(serving.ServerLimits())
    try:
        for args, option in ((["ridge", "csp", "--port", "0", "--max-records", "10", "--max-connections", "-1"],
                              "--max-connections"),
                             (["he-cnn", "serve", "--port", "0", "--max-connections-per-client", "0"],
                              "--max-connections-per-client")):
            with pytest.raises(SystemExit) as info:
                root.main(args)
            assert info.value.code == 2
            err = capsys.readouterr().err.splitlines()
            assert len(err) == 1 and err[0].startswith(f"error: {option} must be"), err
        root.set_server_limits(100, 5)
        assert serving.limits() == serving.ServerLimits(max_connections=100, max_per_client=5)
    finally:
        serving.set_limits(before)  # the other tests' servers keep the limits they had


def test_print_data_and_print_json_write_whole_lines(capsys) -> None:
    """issue 32: what a script reads goes to stdout as is -- no wrapping at any width, no
    markup, no colour codes -- and a line break inside an item is refused (it would read as
    two values)."""
    import json

    import pytest

    from cryptoffload.cli.root import print_data, print_json, say

    big = str(-(1 << 2040))
    print_data([big, "[bold]x[/bold]", ""])
    print_json({"values": [big], "count": 1})
    say("wrote x")
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[:3] == [big, "[bold]x[/bold]", ""]
    assert json.loads("\n".join(lines[3:])) == {"values": [big], "count": 1} and "\x1b" not in out
    assert err == "wrote x\n"
    with pytest.raises(ValueError, match="line break"):
        print_data(["1\n2"])


def test_prose_follows_columns_and_data_never_wraps(tmp_path: Path) -> None:
    """issue 37: text for people (prose, status lines) follows COLUMNS -- piped lines had reached
    500 characters -- while data (print_data, print_json) and error lines stay whole at any
    width."""
    import subprocess
    import sys

    code = ("from cryptoffload.cli.root import console, print_data, say, _error_line; "
            "console.print('a ' * 30 + 'end', markup=False); say('b ' * 30 + 'end'); print_data(['9' * 700]); "
            "_error_line('c ' * 30 + 'end')")
    proc = subprocess.run([sys.executable, "-c", code], env={**__import__("os").environ, "COLUMNS": "20"},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out, err = proc.stdout.splitlines(), proc.stderr.splitlines()
    assert out[-1] == "9" * 700 and all(len(line) <= 20 for line in out[:-1])
    assert " ".join(out[:-1]).split() == ["a"] * 30 + ["end"]
    assert err[-1] == "error: " + "c " * 30 + "end" and all(len(line) <= 20 for line in err[:-1])
    wide = subprocess.run([sys.executable, "-c", code], env={**__import__("os").environ, "COLUMNS": "200"},
                          capture_output=True, text=True, timeout=120)
    assert wide.stdout.splitlines()[0] == "a " * 30 + "end"


def test_quiet_silences_status_and_progress_but_not_results_or_errors(capsys) -> None:
    from cryptoffload.cli import root

    root._state.quiet = True
    try:
        root.say("wrote x")
        with root.progress_bar() as prog:
            prog(2)("one")
        root.warn("warning: kept")
        root.print_data(["42"])
    finally:
        root._state.quiet = False
    out, err = capsys.readouterr()
    assert out == "42\n" and err == "warning: kept\n"


def test_flags_show_no_type_in_help() -> None:
    """issue 37: `--quick <bool>` read as if the flag took a value; a repeatable option showed
    `<list[Path]>`."""
    from typer.testing import CliRunner

    from cryptoffload.cli import app

    res = CliRunner().invoke(app, ["paillier", "add", "--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0 and "<bool>" not in res.output and "list[" not in res.output
    assert "--json" in res.output and "<path>" in res.output


def test_a_command_line_imports_only_its_own_group() -> None:
    """issue 37: each group in root.COMMANDS is imported when a command line names it, so
    `he-cnn infer` does not build the study group (one command per study) or import the
    calibration's modules first; every group still resolves by name, in the table's order."""
    import json
    import os
    import subprocess
    import sys

    from cryptoffload.cli.root import COMMANDS

    code = ("import json, sys; from cryptoffload.cli import main\n"
            "try:\n    main(['he-cnn', 'infer', '--help'])\nexcept SystemExit:\n    pass\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('cryptoffload.cli.'))))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "100"})
    assert proc.returncode == 0, proc.stderr
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    assert loaded == ["cryptoffload.cli.coercion", "cryptoffload.cli.he_cnn", "cryptoffload.cli.root"], loaded

    from typer._click import Context
    from typer.main import get_command

    from cryptoffload.cli import app

    root = get_command(app)
    ctx = Context(root, info_name="cryptoffload")
    assert root.list_commands(ctx) == ["version", *COMMANDS]
    for name in COMMANDS:
        cmd = root.get_command(ctx, name)
        assert cmd is not None and cmd.name == name
