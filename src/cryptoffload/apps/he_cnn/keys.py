"""The client's CKKS keys kept between calls: a key folder, one key file per key set.

Why: ``he-cnn infer`` made a new key set every call -- 28 Galois keys at N = 16384, about 7 s
of a 7-s call on a loaded 2-core machine -- so "one image in under a second" was never what a
user saw. A key set depends only on the backend, the parameters and the rotation steps the
plan needs, so it is made once, written to the key folder, and read back by every later call
whose backend, parameters and steps are the same (the file's name is their digest). The file
is the backend's *key file* (:mod:`cryptoffload.crypto.ckks.keyfile`): SEAL's keeps the Galois
keys whole and uncompressed, read back in a tenth of the time a secret context took (SEAL's
seeded, compressed form: 1.5 s of a 3-s call), for 2.6 times the disk space (about 420 MB at
N = 16384, the compact form kept beside for a public context).

What protects it: the files hold the secret key. The folder is a private folder and each file a
private file under the project's one rule for secrets (:mod:`cryptoffload.private_files`): the
running user's own, 0700 and 0600, never reached through a link, under folders no other user
can write; a folder or file another user made or can read is refused with the fix, never used
and never silently replaced (a planted key would encrypt under its planter's key). A file that
holds another key set than its name stands for (other parameters, other rotations: renamed or
copied by hand) is refused too, naming the fix. A file that is ours but unreadable as a key
file (truncated, corrupted, another version) is replaced by a new key set, and the caller is
told.

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
from cryptoffload.crypto.ckks.registry import backend_class
from cryptoffload.crypto.ckks.timing import timed
from cryptoffload.errors import ConfigError, CryptoffloadError
from cryptoffload.private_files import private_dir

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
    """``seal-16384-<digest>.keys``: one file per backend, parameters and rotation steps."""
    canon = json.dumps([backend, params.digest().hex(), sorted(int(s) for s in steps), "relin"]).encode()
    digest = hashlib.blake2b(canon, digest_size=8, person=b"he-cnn-keys").hexdigest()
    return f"{backend}-{params.poly_modulus_degree}-{digest}.keys"


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


def _mismatch(be: CkksBackend, params: CkksParams, steps: Sequence[int]) -> str | None:
    """Why a loaded key set is not the one asked for (None when it is): the same parameters,
    the secret and relinearisation keys, and each step's own Galois key (not a composition,
    which would cost more rotations)."""
    if be.params != params:
        return "other CKKS parameters"
    if not be.can_decrypt or "relin" not in be.key_bytes():
        return "no secret or no relinearisation key"
    missing = [int(s) for s in steps if not _own_key(be, int(s))]
    return f"no Galois key for rotations {missing}" if missing else None


def _own_key(be: CkksBackend, step: int) -> bool:
    try:
        return len(be.rotation_plan(step)) == 1
    except CkksError:  # no key, and none to compose it from
        return False


def _load(path: Path, backend: str, params: CkksParams, steps: Sequence[int]) -> tuple[CkksBackend, float] | None:
    """The key set in ``path``, or None when there is none or it is no longer readable (then
    made anew). A file that fails the rule for secrets, or holds another key set than its name
    says, is an error (raised), not a miss: never used, never silently replaced."""
    if not os.path.lexists(path):
        return None
    start = time.perf_counter()
    try:
        # the rule for secrets first, its refusal (a ConfigError) raised: a planted or exposed
        # key set is never used and never silently replaced
        be = backend_class(backend).load_key_file(path, error=ConfigError)
    except CkksError:
        return None  # ours but not a readable key file (truncated, corrupted, an older format): made anew
    seconds = time.perf_counter() - start
    why = _mismatch(be, params, steps)
    if why is not None:
        raise ConfigError(f"the {WHAT} file {path} holds {why}, not the key set its name stands for (renamed or "
                          f"copied by hand?): remove it (cryptoffload makes a new key set), or give another key "
                          f"folder")
    return be, seconds


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
        be.save_key_file(path)
    except (CkksError, CryptoffloadError) as exc:
        if log is not None:
            log(f"made new keys in {seconds:.1f} s; could not keep them ({exc})")
        return KeySet(be, "made", seconds)
    if log is not None:
        log(f"made new keys in {seconds:.1f} s ({len(steps)} Galois keys, {backend}, N = "
            f"{params.poly_modulus_degree}), kept for the next call in {path}")
    return KeySet(be, "made", seconds, path)
