"""Asynchronous offload engines: request/response rings, compute backends, client modes.

``make_engine(name)`` builds one by name; ``run_mode`` drives the paper's client modes over
any of them; ``encrypt_array`` is the bulk path. Backends that need hardware this machine
lacks raise :class:`~cryptoffload.errors.BackendUnavailable` with the reason.
"""

from __future__ import annotations

from typing import Any

from cryptoffload.engines.base import (
    BatchEngine, Engine, EngineClosed, EngineError, EngineStats, Job, JobFailed, JobFuture)
from cryptoffload.engines.cpu import CpuEngine
from cryptoffload.engines.gpu import GpuEngine, gpu_reason
from cryptoffload.engines.ifma import IfmaEngine, ifma_reason
from cryptoffload.engines.modes import MODES, PAPER_MODES, ModeResult, encrypt_array, run_mode
from cryptoffload.engines.rings import Ring, RingClosed, RingEmpty, RingFull
from cryptoffload.errors import BackendUnavailable, ConfigError

ENGINE_NAMES: tuple[str, ...] = ("cpu", "cpu-threads", "ifma", "gpu", "auto")


def make_engine(name: str, **kw: Any) -> BatchEngine:
    """An engine by name: ``cpu`` (worker processes), ``cpu-threads``, ``ifma``, ``gpu``, or
    ``auto`` (GPU, else IFMA, else CPU threads: the best that works here). Keyword arguments
    go to the engine's constructor."""
    if name == "cpu":
        return CpuEngine(**kw)
    if name == "cpu-threads":
        return CpuEngine(processes=False, **kw)
    if name == "ifma":
        return IfmaEngine(**kw)
    if name == "gpu":
        return GpuEngine(**kw)
    if name == "auto":
        for factory in (GpuEngine, IfmaEngine):
            try:
                return factory(**kw)
            except BackendUnavailable:
                continue
        return CpuEngine(processes=False, **kw)
    raise ConfigError(f"unknown engine {name!r}; choose one of {', '.join(ENGINE_NAMES)}")


__all__ = [
    "BatchEngine", "CpuEngine", "ENGINE_NAMES", "Engine", "EngineClosed", "EngineError", "EngineStats",
    "GpuEngine", "IfmaEngine", "Job", "JobFailed", "JobFuture", "MODES", "ModeResult", "PAPER_MODES",
    "Ring", "RingClosed", "RingEmpty", "RingFull", "encrypt_array", "gpu_reason", "ifma_reason",
    "make_engine", "run_mode",
]
