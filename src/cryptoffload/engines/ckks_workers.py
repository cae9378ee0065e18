"""The CKKS keys a Dask worker evaluates with: the client's *public* context, rebuilt once per
worker process and kept there, shared by every execution that runs ciphertexts on workers
(:mod:`.bsgs_run`'s products, :mod:`.bootstrap_run`'s bootstrap stages).

Why one place: a worker evaluates and never decrypts, so what leaves the client must be a
public context (public, relinearisation and Galois keys), and a worker must refuse anything
else. Two walls, each written once: the client checks the frame of what the backend exported
before it is sent (:func:`public_context`), and a worker checks it again before rebuilding a
backend from it (:func:`load_backend`). A rebuilt backend is cached in the worker process by a
digest of the context (:func:`context_digest`; at most :data:`MAX_BACKENDS`), so a second
execution with the same keys sends nothing.
"""

from __future__ import annotations

import hashlib
from typing import Any, Sequence

from cryptoffload.crypto.ckks import KIND_PUBLIC, CkksBackend, CkksError, backend_from_context, peek_context
from cryptoffload.crypto.ckks.framing import KIND_NAMES
from cryptoffload.errors import ConfigError
from cryptoffload.lru import LruCache

__all__ = ["BACKENDS", "MAX_BACKENDS", "backend", "context_digest", "has_backend", "load_backend",
           "public_context", "share_context"]

# ---- worker side (module-level state of a worker process; the functions are pickled by reference)
MAX_BACKENDS = 4
BACKENDS: LruCache[str, CkksBackend] = LruCache(MAX_BACKENDS)   # context digest -> backend


def has_backend(digest: str) -> bool:
    return digest in BACKENDS


def load_backend(context: bytes, digest: str, insecure_study: bool) -> str:
    """Rebuild the client's backend here from its *public* context: a worker evaluates and
    never decrypts, so a context holding a secret key is refused (the second wall behind the
    client's own check, :func:`public_context`)."""
    kind = peek_context(context)[1]
    if kind != KIND_PUBLIC:
        raise CkksError(f"a Dask worker takes a public CKKS context only, got a {KIND_NAMES.get(kind, kind)}")
    BACKENDS.get_or_make(digest, lambda: backend_from_context(context, insecure_study=insecure_study))
    return digest


def backend(digest: str) -> CkksBackend:
    """The backend this worker rebuilt from the context of ``digest``."""
    be = BACKENDS.get(digest)
    if be is None:
        raise RuntimeError("this worker lost the CKKS context (restarted?); run again")
    return be


# ---- client side -------------------------------------------------------------------------------
def context_digest(context: bytes) -> str:
    return hashlib.blake2b(context, digest_size=16).hexdigest()


def public_context(be: CkksBackend) -> bytes:
    """What the workers get of the client's keys: the public context (public, relinearisation
    and Galois keys), checked to be one by its frame before it leaves this process -- the
    secret key never travels to a worker, whatever the backend's export returns."""
    try:
        context = be.public_context()
        kind = peek_context(context)[1]
    except CkksError as exc:
        raise ConfigError(f"cannot export the backend's public context: {exc}") from None
    if kind != KIND_PUBLIC:
        raise RuntimeError(f"the {be.name} backend's public_context() returned a "
                           f"{KIND_NAMES.get(kind, kind)}; refusing to send it to the workers")
    return context


def share_context(runner: Any, workers: Sequence[str], context: bytes, digest: str, insecure_study: bool) -> None:
    """The public ``context`` (from :func:`public_context`) to every one of ``workers`` that does
    not hold its backend yet; each rebuilds it there (:func:`load_backend`)."""
    have = runner.gather([runner.submit(has_backend, digest, worker=a) for a in workers])
    lacking = [a for a, h in zip(workers, have) if not h]
    if lacking:
        ctx_f = runner.scatter(context, broadcast=True, workers=lacking)
        runner.gather([runner.submit(load_backend, ctx_f, digest, insecure_study, worker=a) for a in lacking])
        del ctx_f
