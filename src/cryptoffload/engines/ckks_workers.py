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

What an execution keeps on a worker between its tasks is a :class:`WorkerSession` (the context's
digest, the ciphertexts alive per repeat and device, the tasks' :class:`WorkerRecord` per
repeat), one per execution id in :data:`SESSIONS`; :func:`collect_records` hands a repeat's
records back and frees its ciphertexts, :func:`end_session` drops the rest. Each execution
(:mod:`.bsgs_run`, :mod:`.bootstrap_run`) extends the session with its own inputs.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Generic, NamedTuple, Sequence, TypeVar

from cryptoffload.crypto.ckks import KIND_PUBLIC, Ciphertext, CkksBackend, CkksError, backend_from_context, peek_context
from cryptoffload.crypto.ckks.framing import KIND_NAMES
from cryptoffload.errors import ConfigError
from cryptoffload.lru import LruCache

__all__ = ["BACKENDS", "MAX_BACKENDS", "SESSIONS", "WorkerRecord", "WorkerSession", "backend", "check_rotation_keys",
           "collect_records", "context_digest", "end_session", "has_backend", "input_bytes", "load_backend", "public_context", "session", "share_context"]

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


class WorkerRecord(NamedTuple):
    """One task's record as a worker keeps it (the client adds the worker's address): the
    device, what ran, its worker-side start and end, the ops it ran, the bytes it received,
    the seconds of each op."""

    device: int
    kind: str
    label: str
    start: float
    end: float
    ops: dict[str, int]
    bytes_in: int
    op_s: dict[str, float]


L = TypeVar("L")   # what a device's tasks keep alive within one repeat


@dataclass(kw_only=True)
class WorkerSession(Generic[L]):
    """What one execution keeps on a worker between its tasks (see the module docstring)."""

    digest: str
    live: dict[tuple[int, int], L] = field(default_factory=dict)    # (repeat, device) -> alive
    records: dict[int, list[WorkerRecord]] = field(default_factory=dict)

    def record(self, rep: int, rec: WorkerRecord) -> None:
        self.records.setdefault(rep, []).append(rec)


SESSIONS: dict[str, WorkerSession[Any]] = {}   # execution id -> its state on this worker

S = TypeVar("S", bound=WorkerSession[Any])


def session(sid: str, kind: type[S]) -> S:
    """This worker's session ``sid``, of the execution's own class ``kind``."""
    st = SESSIONS[sid]
    if not isinstance(st, kind):
        raise TypeError(f"session {sid} is a {type(st).__name__}, not a {kind.__name__}")
    return st


def collect_records(sid: str, rep: int) -> list[WorkerRecord]:
    """This worker's task records of one repeat; frees that repeat's ciphertexts."""
    st = SESSIONS.get(sid)
    if st is None:
        return []
    for key in [k for k in st.live if k[0] == rep]:
        del st.live[key]
    return st.records.pop(rep, [])


def end_session(sid: str) -> bool:
    """Drop the session's state on this worker (False: it held none)."""
    return SESSIONS.pop(sid, None) is not None


# ---- client side -------------------------------------------------------------------------------
def context_digest(context: bytes) -> str:
    return hashlib.blake2b(context, digest_size=16).hexdigest()


def input_bytes(backend: CkksBackend, ct: Ciphertext, level: int, fix: str) -> bytes:
    """The ciphertext an execution starts from, serialised for the workers, once checked to be
    a size-2 ciphertext of ``backend`` at ``level`` (``fix``: what the caller should do when it
    is at another level)."""
    try:
        at, size, data = backend.level(ct), backend.size(ct), backend.serialize_ciphertext(ct)
    except CkksError as exc:
        raise ConfigError(f"the input ciphertext cannot be used with this backend: {exc}") from None
    if at != level:
        raise ConfigError(f"the input ciphertext is at level {at}, {fix}")
    if size != 2:
        raise ConfigError("the input ciphertext must be size 2 (relinearize it first)")
    return data


def check_rotation_keys(backend: CkksBackend, steps: Sequence[int], fix: str) -> None:
    """Refuse, before anything is sent, an execution whose rotation ``steps`` lack Galois keys
    (``fix``: how to make them)."""
    missing = []
    for s in steps:
        try:
            backend.rotation_plan(s)
        except CkksError:
            missing.append(s)
    if missing:
        raise ConfigError(f"the backend has no Galois keys for rotation steps {missing}; {fix}")


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
