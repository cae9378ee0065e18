"""The plan's encoded weights kept beside the keys, so that a later call reads them back instead
of encoding them again: :func:`prepared_weights`.

Why: encoding the 169 masks and diagonals of the per-channel plan took 0.32 s of a 1.8-s
``he-cnn infer`` once the keys were read in place (:mod:`.keys`); SEAL reads the same
plaintexts back, stored whole (92 MB at N = 16384), in a quarter of that.

Why it is safe: the plaintexts are the public model's weights, no secret -- but they sit in the
key folder, so they follow its rules all the same (:mod:`.keys`): a private file (0600, ours,
no link) written by the backend's ``save_plaintext_file`` (the key file's layout,
:mod:`cryptoffload.crypto.ckks.keyfile`: a digest over the plaintexts, a checksummed frame
bound to the key set's id and the parameters). What makes a file *the right one* is its
name: the key file's name and :meth:`~.packing.PerChannelPlan.weights_digest`, a digest of
every vector encoded (values, place, level), the parameters, and the library that encodes
(its version). Another model, another packing, another library version: another file. A file
of ours that does not read back (corrupted, another key set) is encoded again and replaced; one
that breaks the rule for secrets is refused, as a key file is.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Callable

from cryptoffload.apps.he_cnn.keys import KeySet
from cryptoffload.apps.he_cnn.packing import PerChannelPlan, PreparedWeights
from cryptoffload.crypto.ckks import CkksBackend, CkksError
from cryptoffload.errors import ConfigError, CryptoffloadError


def weights_file(keys: KeySet, plan: PerChannelPlan) -> Path | None:
    """Where the encoded weights of ``plan`` for ``keys`` are kept: beside the key file, named
    after it and the digest of what is encoded; None when the keys are kept nowhere or the
    backend keeps no plaintexts in files."""
    if keys.path is None or not keys.backend.keeps_plaintexts:
        return None
    h = hashlib.blake2b(plan.weights_digest(), digest_size=8, person=b"he-cnn-weights")
    h.update(f"{keys.backend.name}:{keys.backend.library}".encode())
    return keys.path.with_name(f"{keys.path.stem}.{h.hexdigest()}.weights")


def prepared_weights(plan: PerChannelPlan, keys: KeySet, encoder: CkksBackend | None = None, *, reuse: bool = True,
                     log: Callable[[str], None] | None = None) -> tuple[PreparedWeights, str]:
    """The plan's encoded weights for ``keys`` and how they came: ``"reused"`` (read from the
    key folder) or ``"encoded"`` (by ``encoder``, default the keys' backend, and kept in the
    key folder for the next call where the keys are kept). ``reuse=False``: encoded, nothing
    read or kept (a trace whose ``weights`` phase must hold the encode ops)."""
    path = weights_file(keys, plan) if reuse else None
    if path is None:
        return plan.prepare(encoder or keys.backend), "encoded"
    if os.path.lexists(path):
        kept = None
        try:
            # the rule for secrets first, its refusal (a ConfigError) raised; a file of ours that
            # does not read back is encoded again below and replaced
            kept = keys.backend.load_plaintext_file(path, error=ConfigError)
        except CkksError:
            pass
        if kept is not None and len(kept) == plan.weight_count():
            return plan.weights_from(kept, keys.backend), "reused"
    weights = plan.prepare(encoder or keys.backend)
    flat = [p for rows in (weights.conv, weights.fc1, weights.fc2) for row in rows for p in row if p is not None]
    try:
        keys.backend.save_plaintext_file(path, flat)
    except (CkksError, CryptoffloadError) as exc:
        if log is not None:
            log(f"encoded the weights; could not keep them ({exc})")
    return weights, "encoded"
