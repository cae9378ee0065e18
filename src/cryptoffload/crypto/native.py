"""The native back ends as the layers above see them: which arithmetic path runs here, the GPU
runtimes, and the error a native library call raises.

Why a public module: :mod:`._native` (the C core, the CUDA kernels and their CPU twin, built by
``pip install`` through cffi) is this package's own business, and its modules change with the
kernels. What a caller outside ``crypto/`` may rely on -- whether the core is built, which
CPU path (GMP, MULX/ADX, AVX512-IFMA) it takes, a GPU runtime by device name with the one-line
reason one is missing -- is named here once, so a test or a layer above depends on this and
not on the module layout under ``_native/`` (issue 36).
"""

from __future__ import annotations

from cryptoffload.crypto._gcrypt import GcryptError
from cryptoffload.crypto._native.core import adx_available, cpu_path, ifma_available, native_available
from cryptoffload.crypto._native.gpu_runtime import cuda_reason, get_runtime, twin_reason

__all__ = ["GcryptError", "adx_available", "cpu_path", "cuda_reason", "get_runtime", "ifma_available",
           "native_available", "twin_reason"]
