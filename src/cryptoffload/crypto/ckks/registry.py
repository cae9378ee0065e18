"""The one table of CKKS backends: a name -> the module and class that implement it.

Why a table of names and not of classes: the optional back ends (OpenFHE, which imports on
Python 3.10 only here; CuPy for the GPU) must not be imported until asked for, so the table
names where each class lives and :func:`backend_class` imports it on first use. Everything
that offers a choice of backend (:func:`make_backend`, :func:`backend_from_context`, the CLI's
``--backend``, the calibrator) reads :data:`BACKENDS`; adding a backend is one line here.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, NamedTuple

from cryptoffload.crypto.ckks.errors import CkksError
from cryptoffload.crypto.ckks.framing import KIND_NAMES, KIND_PUBLIC, KIND_SECRET, peek_context
from cryptoffload.crypto.ckks.params import DEFAULT_PARAMS, CkksParams
from cryptoffload.errors import BackendUnavailable, ConfigError

if TYPE_CHECKING:  # the interface imports numpy; the CLI reads this table without it
    from cryptoffload.crypto.ckks.backend import CheckedBackend, CkksBackend

__all__ = ["BACKENDS", "BackendEntry", "backend_class", "backend_from_context", "backend_help", "backend_names",
           "describe_backend", "make_backend"]


class BackendEntry(NamedTuple):
    module: str        #: where the class lives (imported on first use)
    cls: str           #: the class, a :class:`CkksBackend`
    library: str       #: what does the arithmetic, for help texts and measured profiles
    distribution: str | None = None  #: the package whose version a measurement names


#: name -> entry. The first entry is the default.
BACKENDS: dict[str, BackendEntry] = {
    "seal": BackendEntry("cryptoffload.crypto.ckks.seal", "SealBackend", "SEAL via tenseal", "tenseal"),
    "emulator": BackendEntry("cryptoffload.crypto.ckks.emulator", "EmulatorBackend",
                             "exact arithmetic, NOT encryption"),
    "openfhe": BackendEntry("cryptoffload.crypto.ckks.openfhe", "OpenFheBackend",
                            "OpenFHE, in its Python 3.10 environment", "openfhe"),
    "gpu": BackendEntry("cryptoffload.crypto.ckks.gpu.backend", "GpuCkksBackend", "RNS-CKKS on a CUDA GPU via CuPy",
                        "cupy-cuda13x"),
    "gpu-twin": BackendEntry("cryptoffload.crypto.ckks.gpu.backend", "RnsCkksBackend",
                             "the gpu backend's code on the CPU twin, NumPy and numba", "numba"),
}


def backend_names() -> list[str]:
    """The registered backend names, the default first."""
    return list(BACKENDS)


def backend_help() -> str:
    """``seal (SEAL via tenseal), emulator (...), ...`` for a ``--backend`` option's help."""
    return ", ".join(f"{name} ({entry.library})" for name, entry in BACKENDS.items())


def describe_backend(name: str) -> str:
    """The library behind ``name`` with its installed version (``SEAL via tenseal 0.3.18``), as
    a measured profile names it."""
    entry = BACKENDS.get(str(name).lower())
    if entry is None:
        return f"{name} backend"
    if entry.distribution is None:
        return entry.library
    from importlib import metadata  # noqa: PLC0415 -- only a measurement needs it

    try:
        version = metadata.version(entry.distribution)
    except metadata.PackageNotFoundError:
        version = "unknown"
    return f"{entry.library} {version}"


def backend_class(name: str) -> type[CheckedBackend]:
    """The class registered as ``name``, imported now; :class:`ConfigError` for an unknown name,
    :class:`BackendUnavailable` when its module (or a library it needs) does not import."""
    key = str(name).lower()
    entry = BACKENDS.get(key)
    if entry is None:
        raise ConfigError(f"unknown CKKS backend {name!r} (known: {', '.join(BACKENDS)})")
    try:
        mod = importlib.import_module(entry.module)
    except Exception as exc:  # ImportError, or a native library failing to load
        raise BackendUnavailable(f"the {key} CKKS backend is unavailable: {type(exc).__name__}: {exc}") from None
    return getattr(mod, entry.cls)


def make_backend(name: str = "seal", params: CkksParams = DEFAULT_PARAMS, **kw: Any) -> CkksBackend:
    """A backend by registered name (``"seal"``, ``"emulator"``: not encryption, ``"openfhe"``, ...).

    Keyword arguments go to the backend (``insecure_study=True`` to allow parameters beyond
    the 128-bit-security bound). Keys are not made here: call ``keygen``.
    """
    return backend_class(name)(params, **kw)


def backend_from_context(data: bytes, **kw: Any) -> CkksBackend:
    """Rebuild a backend from a public or secret context, whichever backend made it."""
    be, kind = peek_context(data)
    if be not in BACKENDS:
        raise CkksError(f"the context comes from an unknown backend {be!r}")
    cls = backend_class(be)
    if kind == KIND_SECRET:
        return cls.from_secret_context(data, **kw)
    if kind == KIND_PUBLIC:
        return cls.from_public_context(data, **kw)
    raise CkksError(f"not a context (a {KIND_NAMES.get(kind, kind)})")
