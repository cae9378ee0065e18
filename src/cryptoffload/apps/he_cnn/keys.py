"""The client's CKKS keys kept between calls: a key folder, one secret context per key set.

Why: ``he-cnn infer`` made a new key set every call -- 28 Galois keys at N = 16384, about 7 s
of a 7-s call on a loaded 2-core machine -- so "one image in under a second" was never what a
user saw. A key set depends only on the backend, the parameters and the rotation steps the
plan needs, so it is made once, written to the key folder, and read back by every later call
whose backend, parameters and steps are the same (the file's name is their digest).

What protects it: the files hold the secret key. The folder is a private folder and each file a
private file under the project's one rule for secrets (:mod:`cryptoffload.private_files`): the
running user's own, 0700 and 0600, never reached through a link, under folders no other user
can write; a folder or file another user made or can read is refused with the fix, never used
and never silently replaced (a planted key would encrypt under its planter's key). A file that
is ours but unreadable as a context (truncated, another version) is replaced by a new key set,
and the caller is told.

Where: ``--key-dir`` (the API's ``key_dir``), else :func:`default_key_dir`:
``$CRYPTOFFLOAD_HE_CNN_KEYS`` when set, else ``he-cnn-keys`` in the project's cache folder (the
one the compiled kernels and Paillier windows use: ``$CRYPTOFFLOAD_CACHE``, else
``$XDG_CACHE_HOME/cryptoffload``, else ``~/.cache/cryptoffload``) -- a cache, since losing it
costs one key generation and nothing else.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from cryptoffload.crypto.ckks import CkksBackend, CkksError, CkksParams, make_backend
from cryptoffload.crypto.ckks.backend import MAX_CONTEXT_BYTES
from cryptoffload.crypto.ckks.registry import backend_class
from cryptoffload.crypto.ckks.timing import timed
from cryptoffload.errors import CryptoffloadError
from cryptoffload.private_files import private_dir, read_private

#: what a key folder is called in messages (and by :mod:`cryptoffload.private_files`)
WHAT = "he-cnn key"


#: the environment variable naming the key folder outright (tests point it at a folder of their
#: own, leaving the project's other caches where they are)
KEY_DIR_ENV = "CRYPTOFFLOAD_HE_CNN_KEYS"


def default_key_dir() -> Path:
    """The key folder when none is given (see the module docstring); relative values of the
    variables are ignored, as the XDG specification asks."""
    for name, tail in ((KEY_DIR_ENV, ()), ("CRYPTOFFLOAD_CACHE", ("he-cnn-keys",)),
                       ("XDG_CACHE_HOME", ("cryptoffload", "he-cnn-keys"))):
        value = os.environ.get(name, "").strip()
        if value and os.path.isabs(value):
            return Path(value, *tail)
    return Path.home() / ".cache" / "cryptoffload" / "he-cnn-keys"


def key_file_name(backend: str, params: CkksParams, steps: Sequence[int]) -> str:
    """``seal-16384-<digest>.ctx``: one file per backend, parameters and rotation steps."""
    canon = json.dumps([backend, params.digest().hex(), sorted(int(s) for s in steps), "relin"]).encode()
    digest = hashlib.blake2b(canon, digest_size=8, person=b"he-cnn-keys").hexdigest()
    return f"{backend}-{params.poly_modulus_degree}-{digest}.ctx"


@dataclass(frozen=True)
class KeySet:
    """A backend keyed for a plan and how its keys came: ``made`` (new, and ``kept`` in
    ``path`` unless no folder was given) or ``reused`` (read from ``path``); ``seconds``: the
    key generation or the read."""

    backend: CkksBackend
    how: str
    seconds: float
    path: Path | None = None

    @property
    def reused(self) -> bool:
        return self.how == "reused"


def _fresh(backend: str, params: CkksParams, steps: Sequence[int]) -> tuple[CkksBackend, float]:
    be = make_backend(backend, params)
    with timed(be) as t:
        be.keygen(rotations=list(steps), relin=True)
    return be, t.seconds


def _fits(be: CkksBackend, params: CkksParams, steps: Sequence[int]) -> bool:
    """Whether a loaded key set is the one asked for: same parameters, a relinearisation key,
    and each step's own Galois key (not a composition, which would cost more rotations)."""
    if be.params != params or not be.can_decrypt or "relin" not in be.key_bytes():
        return False
    try:
        return all(len(be.rotation_plan(int(s))) == 1 for s in steps)
    except CkksError:
        return False


def _load(path: Path, backend: str, params: CkksParams, steps: Sequence[int]) -> tuple[CkksBackend, float] | None:
    """The key set in ``path``, or None when there is none or it is not the one asked for.
    A file that fails the rule for secrets is an error (raised), not a miss."""
    if not os.path.lexists(path):
        return None
    start = time.perf_counter()
    # the rule for secrets first, its refusal raised: a planted or exposed key set is never
    # used and never silently replaced
    data = read_private(path, "CKKS secret context", max_bytes=MAX_CONTEXT_BYTES)
    try:
        be = backend_class(backend).from_secret_context(data)
    except CkksError:
        return None  # ours but not a readable context (an older format, truncated): made anew
    seconds = time.perf_counter() - start
    return (be, seconds) if _fits(be, params, steps) else None


def keyed_backend(backend: str, params: CkksParams, steps: Sequence[int], key_dir: str | os.PathLike[str] | None,
                  log: Callable[[str], None] | None = None) -> KeySet:
    """A backend with secret, relinearisation and the Galois keys of ``steps``: read from
    ``key_dir`` when it holds them, else made (and written there). ``key_dir`` None: new keys,
    kept nowhere. ``log`` hears when new keys are made (and why)."""
    if key_dir is None:
        be, seconds = _fresh(backend, params, steps)
        return KeySet(be, "made", seconds)
    folder = private_dir(key_dir, WHAT)
    path = folder / key_file_name(backend, params, steps)
    loaded = _load(path, backend, params, steps)
    if loaded is not None:
        return KeySet(loaded[0], "reused", loaded[1], path)
    be, seconds = _fresh(backend, params, steps)
    try:
        be.save_secret_context(path)
    except (CkksError, CryptoffloadError) as exc:
        if log is not None:
            log(f"made new keys in {seconds:.1f} s; could not keep them ({exc})")
        return KeySet(be, "made", seconds)
    if log is not None:
        log(f"made new keys in {seconds:.1f} s ({len(steps)} Galois keys, {backend}, N = "
            f"{params.poly_modulus_degree}), kept for the next call in {path}")
    return KeySet(be, "made", seconds, path)
