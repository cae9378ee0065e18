"""The CPU twin runtime: shared, described, its launches checked, secrets wiped."""

from __future__ import annotations

import numpy as np
import pytest

from cryptoffload.crypto._native import gpu_runtime as gr
from cryptoffload.crypto._native.gpu_twin import TwinRuntime, twin_reason

pytestmark = pytest.mark.skipif(twin_reason() is not None, reason="CPU twin not built")


def test_twin_runtime_is_shared_and_described() -> None:
    rt = gr.get_runtime("cpu-twin")
    assert isinstance(rt, TwinRuntime) and rt is gr.get_runtime("cpu-twin")
    assert rt.device == "cpu-twin" and "twin" in rt.describe()
    assert rt.info()["device"] == "cpu-twin"


def test_twin_launch_checks_arguments_and_copies() -> None:
    rt = gr.get_runtime("cpu-twin")
    s = rt.stream()
    a = rt.upload(np.zeros((16, 4), dtype=np.uint32)[:, ::2], s)   # a strided view becomes contiguous
    assert a.flags.c_contiguous and a.shape == (16, 2)
    ctx = np.zeros(3 * 16 + 1, dtype=np.uint32)
    with pytest.raises(TypeError, match="takes 5 arguments"):
        rt.launch("mulmod", 16, 2, (2, a, a, ctx), s)
    with pytest.raises(TypeError, match="uint32"):
        rt.launch("mulmod", 16, 2, (2, a.astype(np.int64), a, ctx, rt.empty((16, 2), s)), s)
    back = rt.download(a, s)
    assert back.shape == (16, 2) and back is not a


def test_secret_upload_and_wipe() -> None:
    rt = gr.get_runtime("cpu-twin")
    s = rt.stream()
    host = np.arange(1, 9, dtype=np.uint32)
    dev = rt.upload_secret(host, s)
    assert dev is not host and np.array_equal(dev, host)
    rt.wipe(dev, s)
    assert not dev.any()
