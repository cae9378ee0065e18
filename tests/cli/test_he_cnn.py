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


def _digit_png(tmp_path: Path, index: int) -> tuple[str, int]:
    """Held-out image ``index`` drawn four times larger, dark ink on white, as a PNG; and the
    digit the plaintext model reads in the original."""
    import numpy as np
    from PIL import Image

    from cryptoffload.apps.he_cnn.data import load_mnist
    from cryptoffload.apps.he_cnn.model import load_model
    from cryptoffload.apps.he_cnn.train import DEFAULT_WEIGHTS

    x = load_mnist().x_test[index]
    Image.fromarray((255 - np.round(np.kron(x, np.ones((4, 4))) * 255)).astype(np.uint8)).save(tmp_path / "digit.png")
    return "digit.png", int(np.argmax(load_model(DEFAULT_WEIGHTS).forward(x)[0]))


@pytest.mark.slow
def test_infer_an_image_file_of_ones_own(tmp_path: Path) -> None:
    """issue 25: `he-cnn infer --image FILE` classifies a PNG encrypted, with the shipped
    weights, as the plaintext model reads the MNIST original it was drawn from."""
    import json

    pytest.importorskip("tenseal")
    name, plain_digit = _digit_png(tmp_path, 7)
    proc = run_cli(tmp_path, "he-cnn", "infer", "--image", name, "--trace", "t.json", "--json")
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert res["image_file"] == name and res["index"] is None and res["label"] is None
    assert res["plain_prediction"] == plain_digit and res["prediction"] == plain_digit
    assert json.loads((tmp_path / "t.json").read_text())["plan"]["image_index"] is None


def test_infer_image_file_refusals(tmp_path: Path) -> None:
    (tmp_path / "notes.png").write_text("not an image\n")
    assert_user_error(run_cli(tmp_path, "he-cnn", "infer", "--image", "notes.png", timeout=60),
                      "image notes.png: it is not a PNG or JPEG file")
    assert_user_error(run_cli(tmp_path, "he-cnn", "infer", "--image", "absent.png", timeout=60),
                      "cannot read image file (--image) absent.png")
    assert_user_error(run_cli(tmp_path, "he-cnn", "infer", "--image", "notes.png", "--mnist-dir", "m", timeout=60),
                      "--mnist-dir has no use with --image FILE")
    assert_user_error(run_cli(tmp_path, "he-cnn", "infer", "--image", "notes.png", "--trace", "notes.png", timeout=60),
                      "--trace notes.png is the same file as --image notes.png")
    assert (tmp_path / "notes.png").read_text() == "not an image\n"
    assert_user_error(run_cli(tmp_path, "he-cnn", "infer", "--image", "-1", timeout=60),
                      "--image must be between 0 and 100,000, got -1")
