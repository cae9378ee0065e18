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

# Caches the code keeps between calls (he-cnn's key folder: $XDG_CACHE_HOME/cryptoffload/...)
# go to a folder of this test run, never to the user's home; it is private (0700) as a key
# folder's parents must be, and shared by the tests of one worker (keys are made once).
if not os.environ.get("CRYPTOFFLOAD_TEST_CACHE"):
    import tempfile

    os.environ["CRYPTOFFLOAD_TEST_CACHE"] = tempfile.mkdtemp(prefix="cryptoffload-test-cache-")
    os.environ["XDG_CACHE_HOME"] = os.environ["CRYPTOFFLOAD_TEST_CACHE"]
