"""The benchmark scripts are not a package: tests import them from benchmarks/ by name."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def benchmark_module(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` imported (with benchmarks/ on the path while it imports, so its
    sibling modules resolve; they stay cached in ``sys.modules``)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
