"""CKKS: one interface, its backends, and a tracer that records what an encrypted program does.

Layout (one concept per module, imports pointing down this list):

* ``errors`` -- :class:`CkksError`, the package's user error;
* ``params`` -- :class:`CkksParams`, the one parameter class (sizes, security bound);
* ``primes``, ``rotations`` -- SEAL's prime chain and its rotation-key plan, reproduced;
* ``framing`` -- the serialised frame (header, payload, checksum) of ciphertexts and contexts;
* ``backend`` -- :class:`CkksBackend` (the interface), :class:`CheckedBackend` (the checks the
  adapters share), the :class:`Ciphertext`/:class:`Plaintext` handles;
* ``seal``, ``emulator``, ``openfhe`` -- the adapters, imported by name through ``registry``;
* ``trace`` -- the op tracer (``cryptoffload-he-trace/1``);
* ``registry`` -- the one table of backend names, :func:`make_backend`, :func:`backend_from_context`.

Conventions (SEAL's, which the trace schema follows)

* ``mul`` does not relinearise (a size-3 ciphertext), ``rescale`` divides the scale by the
  dropped prime (the real prime, not ``2**bits``), ``mod_switch_to`` drops limbs without
  changing the scale. Binary ops need equal levels and (for additions) equal scales.
* ``rotate(ct, k)`` is a *left* rotation: slot ``i`` of the result is slot ``i + k`` of the
  input (negative ``k``: right). A step without its own key is composed from the keys of its
  non-adjacent form, so :meth:`CkksBackend.rotation_plan` lists the keys a rotation applies.

The backend classes (``SealBackend``, ``EmulatorBackend``, ``OpenFheBackend``) are attributes
of this package too, imported on first access through the registry.
"""

from __future__ import annotations

from typing import Any

from cryptoffload.crypto.ckks.backend import CheckedBackend, Ciphertext, CkksBackend, Plaintext
from cryptoffload.crypto.ckks.errors import CkksError
from cryptoffload.crypto.ckks.framing import (
    KIND_CIPHERTEXT,
    KIND_PLAINTEXT,
    KIND_PUBLIC,
    KIND_SECRET,
    pack_frame,
    peek_context,
    unpack_frame,
)
from cryptoffload.crypto.ckks.params import CKKS_SECURITY_BITS, DEFAULT_PARAMS, WORD_BYTES, CkksParams
from cryptoffload.crypto.ckks.primes import coeff_modulus_primes
from cryptoffload.crypto.ckks.registry import BACKENDS, backend_class, backend_from_context, backend_names, make_backend
from cryptoffload.crypto.ckks.rotations import naf, power_of_two_steps, rotation_plan
from cryptoffload.crypto.ckks.trace import TRACE_SCHEMA, TracingEvaluator

__all__ = [
    "BACKENDS", "CKKS_SECURITY_BITS", "DEFAULT_PARAMS", "KIND_CIPHERTEXT", "KIND_PLAINTEXT", "KIND_PUBLIC",
    "KIND_SECRET", "TRACE_SCHEMA", "WORD_BYTES", "CheckedBackend", "Ciphertext", "CkksBackend", "CkksError",
    "CkksParams", "Plaintext", "TracingEvaluator", "backend_class", "backend_from_context", "backend_names",
    "coeff_modulus_primes", "make_backend", "naf", "pack_frame", "peek_context", "power_of_two_steps",
    "rotation_plan", "unpack_frame",
]

_CLASSES = {cls: name for name, (_module, cls, _help) in BACKENDS.items()}


def __getattr__(attr: str) -> Any:
    """``SealBackend`` etc.: the registered class, imported now (optional libraries stay unloaded
    until a backend that needs them is asked for)."""
    name = _CLASSES.get(attr)
    if name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")
    return backend_class(name)
