"""gmpy2, imported on first use.

Why lazily: the GPU path (:mod:`cryptoffload.crypto.paillier_gpu`, the GPU engine) takes
:class:`~.keys.PublicKey` objects but never calls gmpy2, and a GPU machine's Python may not have
it (the lent one has CuPy and numpy, not gmpy2). So importing this package must not need it;
what does -- key generation, the checks of a loaded key, the reference arithmetic -- imports it
on its first call, and without it raises
:class:`~cryptoffload.errors.BackendUnavailable` naming the package. gmpy2 stays a dependency
of the package: an installed ``cryptoffload`` always has it.
"""

from __future__ import annotations

import importlib
from typing import Any

from cryptoffload.errors import BackendUnavailable


class _LazyGmpy2:
    """Stands in for the ``gmpy2`` module: the first use of a name imports it."""

    def __getattr__(self, name: str) -> Any:
        try:
            module = importlib.import_module("gmpy2")
        except ImportError as exc:
            raise BackendUnavailable("gmpy2 is not installed (pip install gmpy2==2.3.2): Paillier key generation, "
                                     "key checks and the reference arithmetic need it") from exc
        value = getattr(module, name)
        setattr(self, name, value)   # later uses skip __getattr__
        return value


gmpy2: Any = _LazyGmpy2()
