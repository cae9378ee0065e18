"""CKKS: one interface, its backends, and a tracer that records what an encrypted program does.

What flows in and out: real-valued slot vectors (numpy) in; :class:`Ciphertext` and
:class:`Plaintext` handles, decrypted vectors, serialised frames (ciphertexts, public and
secret contexts) and, from the recording backend, op traces (JSON) out. Callers: the HE-CNN
application, ``workloads/`` (traces and BSGS op DAGs), ``engines/bsgs_run.py`` (Dask runs) and
``calibrate/`` (measured op costs). Where to start reading: :mod:`.backend` (the interface
every program is written against), then :mod:`.emulator` (the shortest adapter), then
:mod:`.bsgs` (an algorithm written against the interface).

Layout (one concept per module, imports pointing down this list):

* ``errors`` -- :class:`CkksError`, the package's user error;
* ``params`` -- :class:`CkksParams`, the one parameter class (sizes, security bound);
* ``primes``, ``rotations`` -- SEAL's prime chain and its rotation-key plan, reproduced;
* ``framing`` -- the serialised frame (header, payload, checksum) of ciphertexts and contexts;
* ``inflate`` -- SEAL's serialised objects measured (header, declared and actual inflated size)
  before SEAL inflates them: :func:`inflated_size`, :class:`InflateLimit`; and stored whole
  (:func:`~.inflate.uncompressed`);
* ``keyfile`` -- the key file: a secret context laid out for the library to read in place
  (regions from byte 0, page-sum digests, the framed rest), what ``save_key_file`` writes;
* ``batched`` -- :class:`~.batched.BatchedOps`, the batched ops as loops of single ops (a GPU
  overrides them);
* ``backend`` -- :class:`CkksBackend` (the interface), :class:`CheckedBackend` (the checks and
  the key bookkeeping the adapters share, ``add_rotation_keys`` included), the
  :class:`Ciphertext`/:class:`Plaintext` handles;
* ``timing`` -- :func:`timed`, the timer of CKKS work that waits for an asynchronous device
  (``synchronize``) before starting and before stopping;
* ``seal``, ``emulator``, ``openfhe`` -- the adapters, imported by name through ``registry``;
  ``gpu/`` -- leveled RNS-CKKS of our own over an array module (CuPy, or numpy as its CPU
  twin), its ``__init__`` has its layers;
* ``trace`` -- :class:`RecordingBackend`, a backend that records the ops run on it
  (``cryptoffload-he-trace/1``), on a real backend or on a shape-only emulator;
* ``bsgs`` -- the baby-step giant-step matrix-vector product, written once against the interface;
* ``registry`` -- the one table of backend names, :func:`make_backend`, :func:`backend_from_context`.

Conventions (SEAL's, which the trace schema follows)

* ``mul`` does not relinearise (a size-3 ciphertext), ``rescale`` divides the scale by the
  dropped prime (the real prime, not ``2**bits``), ``mod_switch_to`` drops limbs without
  changing the scale. Binary ops need equal levels and (for additions) equal scales.
* ``rotate(ct, k)`` is a *left* rotation: slot ``i`` of the result is slot ``i + k`` of the
  input (negative ``k``: right). A step without its own key is composed from the keys of its
  non-adjacent form, so :meth:`CkksBackend.rotation_plan` lists the keys a rotation applies.

Every public name below is an attribute of this package, imported from its module on first
access (so reading the registry, as the CLI does, loads neither numpy nor a library); the
backend classes (``SealBackend``, ``EmulatorBackend``, ``OpenFheBackend``, ...) come from the
registry the same way.
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> the module (in this package) that defines it
_EXPORTS = {
    "CkksError": "errors",
    **dict.fromkeys(("CKKS_SECURITY_BITS", "DEFAULT_PARAMS", "SEAL_SECURITY_BITS", "WORD_BYTES", "CkksParams"),
                   "params"),
    "coeff_modulus_primes": "primes",
    **dict.fromkeys(("naf", "power_of_two_steps", "rotation_plan"), "rotations"),
    **dict.fromkeys(("KIND_CIPHERTEXT", "KIND_PLAINTEXT", "KIND_PUBLIC", "KIND_SECRET", "pack_frame", "peek_context",
                     "unpack_frame"), "framing"),
    **dict.fromkeys(("InflateLimit", "inflated_size"), "inflate"),
    **dict.fromkeys(("CheckedBackend", "Ciphertext", "CkksBackend", "Plaintext"), "backend"),
    **dict.fromkeys(("Stopwatch", "timed"), "timing"),
    **dict.fromkeys(("TRACE_SCHEMA", "RecordingBackend"), "trace"),
    **dict.fromkeys(("BACKENDS", "backend_class", "backend_from_context", "backend_help", "backend_names",
                     "make_backend"), "registry"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(attr: str) -> Any:
    module = _EXPORTS.get(attr)
    if module is not None:
        value = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
    else:
        from cryptoffload.crypto.ckks.registry import BACKENDS, backend_class  # noqa: PLC0415

        name = next((n for n, entry in BACKENDS.items() if entry.cls == attr), None)
        if name is None:
            raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")
        value = backend_class(name)
    globals()[attr] = value
    return value


def __dir__() -> list[str]:
    return __all__
