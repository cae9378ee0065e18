"""The GPU runtimes: device choice, reasons when unavailable, the twin's argument checks."""

from __future__ import annotations

import numpy as np
import pytest

from cryptoffload.crypto._native import gpu_runtime as gr
from cryptoffload.errors import BackendUnavailable, ConfigError

twin = pytest.mark.skipif(gr.twin_reason() is not None, reason="CPU twin not built")


def test_width_for_bits_picks_the_smallest_width() -> None:
    assert gr.width_for_bits(1) == 16
    assert gr.width_for_bits(512) == 16
    assert gr.width_for_bits(513) == 32
    assert gr.width_for_bits(2048) == 64
    assert gr.width_for_bits(2049) == 96
    assert gr.width_for_bits(6144) == 192
    with pytest.raises(ConfigError, match="largest width"):
        gr.width_for_bits(6145)


def test_unknown_device_is_refused() -> None:
    with pytest.raises(ConfigError, match="cpu-twin"):
        gr.get_runtime("tpu")


def test_cuda_refused_with_a_one_line_reason_without_a_gpu() -> None:
    reason = gr.cuda_reason()
    if reason is None:
        pytest.skip("a CUDA GPU is present")
    assert "\n" not in reason
    with pytest.raises(BackendUnavailable) as err:
        gr.get_runtime("cuda")
    assert str(err.value) == reason


@twin
def test_twin_runtime_is_shared_and_described() -> None:
    rt = gr.get_runtime("cpu-twin")
    assert rt is gr.get_runtime("cpu-twin")
    assert rt.device == "cpu-twin" and "twin" in rt.describe()
    assert rt.info()["device"] == "cpu-twin"


@twin
def test_twin_launch_checks_arguments() -> None:
    rt = gr.get_runtime("cpu-twin")
    s = rt.stream()
    a = rt.upload(np.zeros((16, 2), dtype=np.uint32), s)
    ctx = np.zeros(3 * 16 + 1, dtype=np.uint32)
    with pytest.raises(TypeError, match="takes 5 arguments"):
        rt.launch("mulmod", 16, 2, (2, a, a, ctx), s)
    with pytest.raises(TypeError, match="uint32"):
        rt.launch("mulmod", 16, 2, (2, a.astype(np.int64), a, ctx, rt.empty((16, 2), s)), s)
    with pytest.raises(TypeError, match="writable"):
        ro = np.zeros((16, 2), dtype=np.uint32)
        ro.flags.writeable = False
        rt.launch("mulmod", 16, 2, (2, a, a, ctx, ro), s)
    with pytest.raises(ConfigError, match="width"):
        rt.launch("mulmod", 24, 2, (2, a, a, ctx, rt.empty((16, 2), s)), s)
    back = rt.download(a, s)
    assert back.shape == (16, 2) and back is not a
