"""Where the Paillier GPU kernels run, by name: ``"cuda"`` (a CUDA device through CuPy,
:mod:`.gpu_cuda`) or ``"cpu-twin"`` (the same source compiled for the CPU, :mod:`.gpu_twin`),
both behind :class:`~.gpu_interface.Runtime`.

:func:`get_runtime` hands out one shared runtime per device; :func:`cuda_reason` and
:func:`twin_reason` say in one line why a device cannot run here. The names the algorithms use
(``Runtime``, ``Stream``, ``width_for_bits``, ``key_kernels``, ``WIDTHS``) are re-exported from here.
"""

from __future__ import annotations

import threading

from cryptoffload.crypto._native.gpu_cuda import CupyRuntime, cuda_reason
from cryptoffload.crypto._native.gpu_interface import (
    THREADS_PER_BLOCK, DeviceWords, KernelArg, Runtime, Stream, check_args, kernel_source, key_kernels, nvrtc_options,
    width_for_bits)
from cryptoffload.crypto._native.gpu_kernels import WIDTHS
from cryptoffload.crypto._native.gpu_twin import TwinRuntime, twin_reason
from cryptoffload.errors import ConfigError

DEVICES = ("cuda", "cpu-twin")

_RUNTIMES: dict[tuple[str, int], Runtime] = {}
_RUNTIMES_LOCK = threading.Lock()


def device_reason(device: str) -> str | None:
    """None when ``device`` ("cuda" or "cpu-twin") can run the kernels here, else why not."""
    if device not in DEVICES:
        raise ConfigError(f"unknown GPU device {device!r}; choose one of {', '.join(DEVICES)}")
    return cuda_reason() if device == "cuda" else twin_reason()


def get_runtime(device: str = "cuda", index: int = 0) -> Runtime:
    """The (shared) runtime for ``device`` ("cuda" or "cpu-twin"); raises
    :class:`~cryptoffload.errors.BackendUnavailable` with the reason when it cannot run here."""
    if device not in DEVICES:
        raise ConfigError(f"unknown GPU device {device!r}; choose one of {', '.join(DEVICES)}")
    key = (device, index if device == "cuda" else 0)
    with _RUNTIMES_LOCK:
        rt = _RUNTIMES.get(key)
        if rt is None:
            rt = CupyRuntime(index) if device == "cuda" else TwinRuntime()
            _RUNTIMES[key] = rt
    return rt


__all__ = ["DEVICES", "THREADS_PER_BLOCK", "WIDTHS", "CupyRuntime", "DeviceWords", "KernelArg", "Runtime", "Stream",
           "TwinRuntime", "check_args", "cuda_reason", "device_reason", "get_runtime", "kernel_source", "key_kernels", "nvrtc_options",
           "twin_reason", "width_for_bits"]
