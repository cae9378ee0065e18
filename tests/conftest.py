"""Shared test set-up. Its presence also puts tests/ on sys.path, so every test module can
import the helpers in tests/cli_helpers.py.

Subprocesses started by tests (the CLI, the ridge parties) run in other folders, so a relative
``PYTHONPATH=src`` would not reach them and they would import whatever ``cryptoffload`` is
installed instead of the code under test: the entries are made absolute here, once."""

from __future__ import annotations

import os
from pathlib import Path

if os.environ.get("PYTHONPATH"):
    os.environ["PYTHONPATH"] = os.pathsep.join(
        str(Path(p).resolve()) for p in os.environ["PYTHONPATH"].split(os.pathsep) if p)

# The he-cnn key folder (apps/he_cnn/keys.py) of a test run is a folder of its own, never the
# user's ~/.cache; it is private (0700) as a key folder's parents must be, and shared by the
# tests of one worker (a key set is made once). Only that folder: the project's other caches
# (compiled kernels, Paillier windows, matplotlib's fonts) stay where they are, or every run
# would rebuild them.
if not os.environ.get("CRYPTOFFLOAD_HE_CNN_KEYS"):
    import atexit
    import shutil
    import tempfile

    _KEYS = tempfile.mkdtemp(prefix="cryptoffload-test-keys-")  # the workers inherit it; this process removes it
    os.environ["CRYPTOFFLOAD_HE_CNN_KEYS"] = os.path.join(_KEYS, "he-cnn-keys")
    atexit.register(shutil.rmtree, _KEYS, True)  # a SEAL key set is 112 MB
