"""Studies: one module per source paper (workload + platform + policies + the paper's tables).

Each study module registers itself with :func:`register_study` (see :mod:`.registry`) on its
``run(cfg, out, progress) -> StudyResult``; the CLI, ``cryptoffload report`` and the tests find
every study through :func:`all_studies` and :func:`get_study`. Study modules are found by
listing this package, so adding one is adding its file; they are imported only when a study
is asked for (importing all of them takes seconds, and most commands need none).

A study's ``run`` reads as its table of contents (one named function per table or claim);
its rows are typed records (``report/rows.py``). The studies and their private modules:

* ``isc_he_cnn`` -- in-storage HE CNN inference (``_isc_paper``: the paper's numbers,
  ``_isc_tables``, ``_isc_claims``, ``_isc_figures``, ``_isc_plan_table``; ``isc_gap``: where
  the prediction parts from Table 2, input by input).
* ``bsgs_multidevice`` -- BSGS tuned for N devices (``_bsgs_paper``: the U280 model and
  Table 1, ``_bsgs_bootstrap``, ``_bsgs_measured``: real Dask runs beside the model).
* ``fpga_reconfig`` -- reconfiguration with request prediction (``_reconfig_paper``,
  ``_reconfig_sweep``: the seeds' runs, ``_reconfig_tables``, ``_reconfig_verdicts``: a verdict
  for every cell beside the paper's).
* ``paillier_offload`` -- Paillier on QAT and on this machine (``_qat_model``,
  ``_paillier_measured``, ``_gpu``: GPU rows shared with ridge).
* ``ridge`` -- private ridge regression at the paper's scale.
* ``tls_offload`` -- nginx in four modes (``_tls_model``).

Shared by all: ``_bands`` (a figure's band and its tables) and ``_verdicts`` (a verdict for every
cell beside a paper value, by the one rule of ``report/verdicts.py``, and the ``verdicts`` table).
:mod:`.runner` runs them all for the report. Where to start reading: :mod:`.registry`, then
``isc_he_cnn.run``.
"""

from __future__ import annotations

import importlib
import pkgutil

from cryptoffload.studies.registry import (
    Option, ReportContext, ReportRun, StudySpec, register_study, registered, unknown_study)

_INFRASTRUCTURE = {"registry", "runner"}


def _study_modules() -> list[str]:
    return [m.name for m in pkgutil.iter_modules(__path__)
            if not m.name.startswith("_") and m.name not in _INFRASTRUCTURE]


def all_studies() -> dict[str, StudySpec]:
    """Every study, by name (imports every study module)."""
    for module in _study_modules():
        importlib.import_module(f"{__name__}.{module}")
    return registered()


def get_study(name: str) -> StudySpec:
    """One study by name: its module is tried first under the study's own name
    (``fpga-reconfig`` -> ``fpga_reconfig``), then every module; unknown names are a
    :class:`~cryptoffload.errors.ConfigError` listing the known ones."""
    module = name.replace("-", "_")
    if module in _study_modules():
        importlib.import_module(f"{__name__}.{module}")
    spec = registered().get(name)
    if spec is None:
        spec = all_studies().get(name)
    if spec is None:
        raise unknown_study(name)
    return spec


__all__ = ["Option", "ReportContext", "ReportRun", "StudySpec", "all_studies", "get_study", "register_study"]
