"""``cryptoffload he-cnn``: every command takes --backend from the CKKS registry; an unavailable
backend is one error line before any work."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_helpers import assert_user_error, run_cli

from cryptoffload.crypto.ckks.gpu.device import gpu_reason


@pytest.mark.parametrize("command", [["infer"], ["bench", "--images", "1"], ["evaluate", "--images", "1"]])
def test_gpu_backend_without_a_gpu_is_one_error_line(tmp_path: Path, command: list[str]) -> None:
    if gpu_reason() is None:  # pragma: no cover - a CUDA machine runs it instead
        pytest.skip("a GPU is present")
    proc = run_cli(tmp_path, "he-cnn", *command, "--backend", "gpu")
    assert_user_error(proc, "gpu CKKS backend is unavailable")


def test_unknown_backend_names_the_registered_ones(tmp_path: Path) -> None:
    proc = run_cli(tmp_path, "he-cnn", "infer", "--backend", "nope")
    assert_user_error(proc, "unknown CKKS backend", "gpu-twin", "gpu")


def test_he_cnn_trace_may_not_replace_the_model_and_a_fifo_model_is_refused(tmp_path: Path) -> None:
    """issue 22: `--trace` naming the model (here through a symlink) would replace it; a FIFO
    as the model would block the command for ever."""
    import os

    (tmp_path / "m.npz").write_bytes(b"weights")
    os.symlink("m.npz", tmp_path / "link.npz")
    assert_user_error(run_cli(tmp_path, "he-cnn", "infer", "--model", "m.npz", "--trace", "link.npz", timeout=60),
                      "same file", "--model")
    assert (tmp_path / "m.npz").read_bytes() == b"weights"
    os.mkfifo(tmp_path / "fifo.npz")
    assert_user_error(run_cli(tmp_path, "he-cnn", "infer", "--model", "fifo.npz", timeout=60), "not a regular file")
