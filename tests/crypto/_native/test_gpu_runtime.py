"""Picking a runtime by device name."""

from __future__ import annotations

import pytest

from cryptoffload.crypto._native import gpu_runtime as gr
from cryptoffload.errors import ConfigError


def test_unknown_device_is_refused() -> None:
    with pytest.raises(ConfigError, match="cpu-twin"):
        gr.get_runtime("tpu")
    with pytest.raises(ConfigError, match="cpu-twin"):
        gr.device_reason("tpu")


def test_device_reasons() -> None:
    assert gr.device_reason("cuda") == gr.cuda_reason()
    assert gr.device_reason("cpu-twin") == gr.twin_reason()
