"""The native back ends as the layers above see them: which arithmetic path runs here, the GPU
runtimes, and the error a native library call raises.

Why a public module: :mod:`._native` (the C core, the CUDA kernels and their CPU twin, built by
``pip install`` through cffi) is this package's own business, and its modules change with the
kernels. What a caller outside ``crypto/`` may rely on -- whether the core is built, which
CPU path (GMP, MULX/ADX, AVX512-IFMA) it takes, a GPU runtime by device name with the one-line
reason one is missing, the C core's batch calls the engines and the ridge parties make, the GPU
runtime module -- is named here once, so a test or a layer above depends on this and not on the
module layout under ``_native/`` (issue 36; ``tests/test_architecture.py`` holds every module
outside ``crypto/`` to it).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cryptoffload.crypto._gcrypt import GcryptError
    from cryptoffload.crypto._native import gpu_runtime
    from cryptoffload.crypto._native.core import (adx_available, adx_fits, column_products, cpu_path, ifma_available,
                                                  ints_to_words, mbx_kernel_bits, mbx_powm_batch, multi_powm,
                                                  native_available, powm_batch, require_native, words_for_bits)
    from cryptoffload.crypto._native.gpu_runtime import cuda_reason, get_runtime, twin_reason

_CORE = "cryptoffload.crypto._native.core"
_GPU = "cryptoffload.crypto._native.gpu_runtime"

#: each public name -> the private module that defines it. Resolved on each use (PEP 562), not
#: at import: the GPU runtimes and libgcrypt's binding take 0.15 s to import, which a caller of
#: the C core alone (an engine, the ridge parties) need not pay; and a name is looked up where it
#: lives, so what a test replaces there is what every caller sees.
_FROM: dict[str, str] = {
    "GcryptError": "cryptoffload.crypto._gcrypt",
    **dict.fromkeys(("adx_available", "adx_fits", "column_products", "cpu_path", "ifma_available", "ints_to_words",
                     "mbx_kernel_bits", "mbx_powm_batch", "multi_powm", "native_available", "powm_batch",
                     "require_native", "words_for_bits"), _CORE),
    **dict.fromkeys(("cuda_reason", "get_runtime", "twin_reason"), _GPU),
}
#: the GPU runtime module itself (its classes: ``Runtime``, ``Stream``, ``DeviceWords``, ``WIDTHS``)
_MODULES: dict[str, str] = {"gpu_runtime": _GPU}

__all__ = sorted([*_FROM, *_MODULES])


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        return importlib.import_module(_MODULES[name])
    source = _FROM.get(name)
    if source is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module: ModuleType = importlib.import_module(source)
    return getattr(module, name)
