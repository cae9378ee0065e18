"""GPU engine: the hook for a CUDA big-integer modexp kernel (none is implemented yet).

Why it exists before its kernel: the client modes, rings, batching and statistics are the
same for every device, so a GPU backend only has to supply ``powm(bases, exps, modulus)`` for
a batch (and, later, a fixed-base DJN table). A GPU wants thousands of independent modexps
per launch, which is exactly what the batch mode and a deep in-flight window produce. To
plug one in: implement :meth:`GpuEngine._kernel_powm` (e.g. with CuPy raw kernels over
32-bit limbs, Montgomery multiplication, one thread or warp per exponentiation), and drop
the ``BackendUnavailable`` raised after detection.

Detection is deliberately cheap and side-effect free: ``nvidia-smi`` on PATH and an importable
CuPy (not a dependency of this package). Until a kernel exists, constructing the engine
raises :class:`BackendUnavailable` with the reason, on every machine.
"""

from __future__ import annotations

import importlib.util
import shutil
from typing import Sequence

from cryptoffload.engines.base import BatchEngine, Outcome, Request
from cryptoffload.engines.cpu import EncryptorCache, compute_batch
from cryptoffload.errors import BackendUnavailable

# Flip when _kernel_powm is real.
KERNEL_IMPLEMENTED = False


def gpu_reason() -> str | None:
    """None when a CUDA GPU and CuPy are present, else a one-line reason."""
    missing = []
    if shutil.which("nvidia-smi") is None:
        missing.append("nvidia-smi not found")
    if importlib.util.find_spec("cupy") is None:
        missing.append("CuPy not installed")
    return "; ".join(missing) or None


class GpuEngine(BatchEngine):
    """Offload to a CUDA GPU (see the module docstring: detection works, the kernel does not
    exist yet, so construction raises :class:`BackendUnavailable`)."""

    name = "gpu"

    def __init__(self, workers: int = 1, *, max_batch: int = 4096, ring_capacity: int = 16384,
                 in_order: bool = False, block_when_full: bool = True) -> None:
        reason = gpu_reason()
        if reason is not None:
            raise BackendUnavailable(f"no CUDA GPU/CuPy here ({reason})")
        if not KERNEL_IMPLEMENTED:
            raise BackendUnavailable("a CUDA GPU is present but no big-integer GPU kernel is implemented yet")
        super().__init__(workers=workers, max_batch=max_batch, ring_capacity=ring_capacity,  # pragma: no cover
                         in_order=in_order, block_when_full=block_when_full)
        self._encryptors = EncryptorCache("gmp")  # pragma: no cover
        self._start_dispatchers()  # pragma: no cover

    def _kernel_powm(self, bases: Sequence[int], exps: Sequence[int], modulus: int) -> list[int]:
        raise NotImplementedError("GPU modexp kernel")  # pragma: no cover

    def _run_batch(self, worker: int, batch: list[Request]) -> list[Outcome]:  # pragma: no cover
        return compute_batch([(k, p) for _, k, p in batch], self._kernel_powm, self._encryptors)
