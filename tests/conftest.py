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
