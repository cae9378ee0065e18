"""The one table of offload engines: a name, where its class lives (imported only when the
engine is built or probed), the constructor options that make it that engine, a probe that
says in one line why it cannot run here, and its place in ``auto``'s order of preference.

Why a table: the CLI's choices, the studies and ``make_engine`` all read it, so adding an
engine (the GPU one, say) is one row here and nothing else. Probes are cheap and have no side
effects; an engine whose probe passes may still refuse to start (a GPU without a kernel), so
``auto`` builds candidates in order and takes the first that works.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Callable, Optional

from cryptoffload.engines.base import Engine
from cryptoffload.errors import BackendUnavailable, ConfigError


def _load(target: str | Callable[..., object]) -> Callable[..., object]:
    if callable(target):
        return target
    module, _, attr = target.partition(":")
    loaded = getattr(importlib.import_module(module), attr)
    if not callable(loaded):   # a registry entry naming something else: a bug in ENGINES
        raise TypeError(f"{target} is not callable")
    return loaded


@dataclass(frozen=True)
class EngineSpec:
    """One engine. ``factory`` and ``probe`` are ``"module:attribute"`` (imported when first
    used) or callables; ``probe`` returns None when the engine can run here, else a one-line
    reason. ``options`` are the constructor arguments that make the class this engine.
    ``auto_rank``: lower is preferred by ``auto``; None keeps the engine out of ``auto``."""

    name: str
    factory: str | Callable[..., Engine]
    summary: str
    probe: str | Callable[[], Optional[str]] | None = None
    options: dict[str, object] = field(default_factory=dict)
    auto_rank: Optional[int] = None

    def reason(self) -> Optional[str]:
        """None when this engine can run here, else why not (one line)."""
        if self.probe is None:
            return None
        why = _load(self.probe)()
        if why is not None and not isinstance(why, str):
            raise TypeError(f"the {self.name} engine's probe returned {why!r}, not a reason or None")
        return why

    def build(self, **kw: object) -> Engine:
        engine = _load(self.factory)(**{**self.options, **kw})
        if not isinstance(engine, Engine):   # a registry entry naming something else: a bug in ENGINES
            raise TypeError(f"the {self.name} engine's factory made a {type(engine).__name__}")
        return engine


ENGINES: dict[str, EngineSpec] = {spec.name: spec for spec in (
    EngineSpec("cpu", "cryptoffload.engines.cpu:CpuEngine", "worker processes pinned to cores (GMP)",
               probe="cryptoffload.engines.cpu:cpu_reason"),
    EngineSpec("cpu-threads", "cryptoffload.engines.cpu:CpuEngine", "worker threads (GMP, the GIL released)",
               probe="cryptoffload.engines.cpu:cpu_reason", options={"processes": False}, auto_rank=2),
    EngineSpec("ifma", "cryptoffload.engines.ifma:IfmaEngine", "AVX512-IFMA, 8 modexps per instruction (crypto_mb)",
               probe="cryptoffload.engines.ifma:ifma_reason", auto_rank=1),
    EngineSpec("gpu", "cryptoffload.engines.gpu:GpuEngine",
               "a CUDA GPU through CuPy (Paillier kernels compiled at run time by NVRTC)",
               probe="cryptoffload.engines.gpu:gpu_reason", auto_rank=0),
    EngineSpec("gpu-twin", "cryptoffload.engines.gpu:GpuEngine",
               "the GPU kernels and engine on the CPU (the CUDA source built by g++; for tests, slow)",
               probe="cryptoffload.engines.gpu:twin_reason", options={"device": "cpu-twin"}),
)}

#: Every name ``make_engine`` accepts, ``auto`` last.
ENGINE_NAMES: tuple[str, ...] = (*ENGINES, "auto")


def engine_reasons() -> dict[str, Optional[str]]:
    """Each engine's probe: None where it can run here, else why not."""
    return {name: spec.reason() for name, spec in ENGINES.items()}


def make_engine(name: str, **kw: object) -> Engine:
    """An engine by name (keyword arguments go to its constructor), or ``auto``: the engines
    ``auto`` ranks, best first, the first whose probe passes and which starts. An engine
    that cannot run here raises :class:`BackendUnavailable` with the reason."""
    if name == "auto":
        reasons = []
        ranked = sorted(((s.auto_rank, s) for s in ENGINES.values() if s.auto_rank is not None),
                        key=lambda rank_spec: rank_spec[0])
        for _, candidate in ranked:
            why = candidate.reason()
            if why is None:
                try:
                    return candidate.build(**kw)
                except BackendUnavailable as exc:
                    why = str(exc)
            reasons.append(f"{candidate.name}: {why}")
        raise BackendUnavailable("no engine works here (" + "; ".join(reasons) + ")")
    spec = ENGINES.get(name)
    if spec is None:
        raise ConfigError(f"unknown engine {name!r}; choose one of {', '.join((*ENGINES, 'auto'))}")
    why = spec.reason()
    if why is not None:
        raise BackendUnavailable(f"engine {name} cannot run here: {why}")
    return spec.build(**kw)
