"""``cryptoffload trace``: generate, inspect, and their user errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import assert_user_error, run_cli


def test_trace_inspect_missing_file_is_a_user_error(tmp_path: Path) -> None:
    assert_user_error(run_cli(tmp_path, "trace", "inspect", "nothere.csv"), "nothere.csv")


@pytest.mark.parametrize("n", ["0", "-5"])
def test_trace_generate_bad_count_is_a_user_error(tmp_path: Path, n: str) -> None:
    # 0 requests would write a file that `trace inspect` and the studies refuse
    proc = run_cli(tmp_path, "trace", "generate", "--requests", n, "--out", "t.csv")
    assert_user_error(proc)
    assert not (tmp_path / "t.csv").exists()


def test_trace_generate_then_inspect(tmp_path: Path) -> None:
    gen = run_cli(tmp_path, "trace", "generate", "--requests", "2000", "--out", "t.csv")
    assert gen.returncode == 0, gen.stderr
    assert "2,000 requests" in gen.stdout
    lines = (tmp_path / "t.csv").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2001  # header + one line per request
    ins = run_cli(tmp_path, "trace", "inspect", "t.csv")
    assert ins.returncode == 0, ins.stderr
    assert "t.csv: 2,000 requests" in ins.stdout
    assert "cipher mix:" in ins.stdout and "AES-ECB" in ins.stdout
    assert "bad line" not in ins.stdout


def test_trace_inspect_clf_counts_the_bad_line(tmp_path: Path) -> None:
    (tmp_path / "access.log").write_text(
        '127.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET /a.html HTTP/1.0" 200 2326\n'
        '10.0.0.2 - frank [10/Oct/2000:13:55:37 -0700] "GET /b.png HTTP/1.0" 200 10000\n'
        "this is not a log line\n"
        '10.0.0.3 - - [10/Oct/2000:13:55:39 -0700] "GET /c HTTP/1.1" 404 -\n',
        encoding="utf-8")
    proc = run_cli(tmp_path, "trace", "inspect", "access.log")
    assert proc.returncode == 0, proc.stderr
    assert "access.log: 2 requests" in proc.stdout
    assert "2 bad line(s)" in proc.stdout  # line 4's 404 has no body ('-'): nothing to encrypt (issue 32)
    assert "line 3" in proc.stdout and "line 4: bytes '-' (no body)" in proc.stdout


def test_trace_inspect_refuses_a_fifo_and_a_device_at_once(tmp_path: Path) -> None:
    """issue 22: a FIFO would block the reader for ever, /dev/zero never ends."""
    import os

    os.mkfifo(tmp_path / "fifo.csv")
    assert_user_error(run_cli(tmp_path, "trace", "inspect", "fifo.csv", timeout=60), "fifo.csv is not a regular file")
    assert_user_error(run_cli(tmp_path, "trace", "inspect", "/dev/zero", timeout=60), "/dev/zero is not a regular file")


def test_text_from_files_and_paths_is_printed_as_it_is(tmp_path: Path) -> None:
    """issue 32 (output read back wrong): a bad line holding "[/bad]" ended `trace inspect` in
    rich's MarkupError traceback, and a path with "[bold]" in it was printed without it. The
    file's text and the paths are shown verbatim."""
    (tmp_path / "t.csv").write_text("time,client,bytes\n0.1,1.1.1.1,100\n[/bad],x,1\n")
    proc = run_cli(tmp_path, "trace", "inspect", "t.csv")
    assert proc.returncode == 0, proc.stderr
    assert "line 3: time '[/bad]' is neither seconds" in proc.stdout
    (tmp_path / "d[bold]").mkdir()
    proc = run_cli(tmp_path, "trace", "generate", "--requests", "10", "--out", "d[bold]/t[red].csv")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("wrote d[bold]/t[red].csv: 10 requests")
