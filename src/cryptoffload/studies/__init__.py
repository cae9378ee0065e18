"""Studies: one module per source paper (workload + platform + policies + the paper's tables).

The registry maps a study name to its module so the CLI, ``cryptoffload report`` and the tests
find every study the same way. Each module exposes ``NAME``, ``TITLE``, a config dataclass and
``run(cfg, out, progress) -> StudyResult``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from cryptoffload.errors import ConfigError

STUDIES: dict[str, str] = {
    "bsgs-multidevice": "cryptoffload.studies.bsgs_multidevice",
    "fpga-reconfig": "cryptoffload.studies.fpga_reconfig",
    "isc-he-cnn": "cryptoffload.studies.isc_he_cnn",
    "paillier-offload": "cryptoffload.studies.paillier_offload",
    "ridge": "cryptoffload.studies.ridge",
    "tls-offload": "cryptoffload.studies.tls_offload",
}


def study_module(name: str) -> ModuleType:
    try:
        return importlib.import_module(STUDIES[name])
    except KeyError:
        raise ConfigError(f"unknown study '{name}' (known: {', '.join(STUDIES)})") from None
