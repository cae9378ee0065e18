"""Asynchronous offload engines: request/response rings, compute backends, client modes.

``make_engine(name)`` builds one by name from the one table in :mod:`.registry` (which also
says why an engine cannot run here); ``run_mode`` drives the paper's client modes over any of
them; ``encrypt_array`` is the bulk path. Engine classes other than the CPU one are imported
only when asked for (``from cryptoffload.engines import GpuEngine`` still works), so an
optional back end's imports never run for callers that do not use it.

What flows in and out: in, jobs (``Job``: a kind such as ``paillier.encrypt`` and its
payload) from ``apps/``, ``calibrate/`` and the studies; out, futures with their results and
``EngineStats``; ``run_mode`` returns a ``ModeResult`` (throughput, latencies). Real work only:
the simulated counterparts live in ``sim/`` (a peer, never imported here).

Where to start reading: :mod:`.base` (``Job``, ``JobFuture``, the submit/poll ``Engine``
contract), then :mod:`.rings` and :mod:`.cpu` (the reference engine), then :mod:`.modes`.

Modules:
  * ``base`` -- jobs, futures, engine statistics and the ``Engine``/``BatchEngine`` contract.
  * ``rings`` -- bounded request/response rings shaped after QAT's ring pairs.
  * ``compute`` -- one batch of jobs computed where the work runs (grouped per native call).
  * ``cpu`` -- ``CpuEngine``: the rings served by worker threads or pinned processes;
    ``cpu_worker`` -- the worker process's loop; ``pinning`` -- which core each worker uses.
  * ``ifma`` -- ``IfmaEngine``: jobs eight at a time through AVX512-IFMA.
  * ``gpu`` -- ``GpuEngine``: batches on a CUDA GPU or on its CPU twin.
  * ``registry`` -- the one table of engines (``make_engine``, ``engine_reasons``).
  * ``modes`` -- the QAT paper's client modes (sync, threads, coro1, coro2, and batch) over any engine.
  * ``dask`` -- ``DaskRunner``: chunks of work over local or remote Dask workers.
  * ``bsgs_run`` -- a split BSGS product executed with real ciphertexts on Dask workers (what
    ``sim.op_dag`` is checked against).
"""

from __future__ import annotations

from typing import Any

from cryptoffload.engines.base import (
    BatchEngine, Engine, EngineClosed, EngineError, EngineStats, Job, JobFailed, JobFuture)
from cryptoffload.engines.cpu import CpuEngine
from cryptoffload.engines.modes import CLIENT_MODES, PAPER_CLIENT_MODES, ModeResult, encrypt_array, run_mode
from cryptoffload.engines.registry import ENGINE_NAMES, ENGINES, EngineSpec, engine_reasons, make_engine
from cryptoffload.engines.rings import Ring, RingClosed, RingEmpty, RingFull

_LAZY = {"GpuEngine": "cryptoffload.engines.gpu", "gpu_reason": "cryptoffload.engines.gpu",
         "IfmaEngine": "cryptoffload.engines.ifma", "ifma_reason": "cryptoffload.engines.ifma"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BatchEngine", "CpuEngine", "ENGINES", "ENGINE_NAMES", "Engine", "EngineClosed", "EngineError", "EngineSpec",
    "EngineStats", "GpuEngine", "IfmaEngine", "Job", "JobFailed", "JobFuture", "CLIENT_MODES", "ModeResult", "PAPER_CLIENT_MODES",
    "Ring", "RingClosed", "RingEmpty", "RingFull", "encrypt_array", "engine_reasons", "gpu_reason", "ifma_reason",
    "make_engine", "run_mode",
]
