"""Without CuPy or a CUDA device the gpu backend is unavailable with a one-line reason; the twin
needs neither."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from cryptoffload.crypto.ckks import make_backend
from cryptoffload.crypto.ckks.gpu import device
from cryptoffload.errors import BackendUnavailable

from .gpu_helpers import PARAMS


def test_without_cupy_the_gpu_backend_names_the_reason_and_the_twin(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)   # import cupy -> ImportError, on any machine
    assert "CuPy is not importable" in device.gpu_reason()
    with pytest.raises(BackendUnavailable) as exc:
        make_backend("gpu", PARAMS, insecure_study=True)
    msg = str(exc.value)
    assert "\n" not in msg and "gpu-twin" in msg and "cupy-cuda13x" in msg


def test_the_twin_runs_on_numpy():
    assert device.array_module("numpy") is np
    b = make_backend("gpu-twin", PARAMS, insecure_study=True)
    assert b.xp is np and b.kernels == "cuda-host"   # the GPU's launch code, kernels built for the CPU
