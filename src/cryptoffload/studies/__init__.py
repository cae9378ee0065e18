"""Studies: one subpackage per source paper (workload + platform + policies + the paper's tables).

Each study is a room of its own, ``studies/<study>/``: its ``study.py`` registers the study with
:func:`register_study` (see :mod:`.registry`) on its ``run(cfg) -> Sections``, beside the paper's
data, tables, claims, bands and figures (each subpackage's docstring is its map). A run returns
what it found as values; one frame (:mod:`.frame`) validates the settings, times the run, gives
it its progress bar as a context, assembles the result with the machine's description and
writes it. The CLI, ``cryptoffload report`` and the tests find every study through
:func:`all_studies` and :func:`get_study`. Studies are found by listing this package's
subpackages, so adding one is adding its folder; they are imported only when a study is asked
for (importing all of them takes seconds, and most commands need none).

A study's ``run`` reads as its table of contents (one named function per table or claim);
its rows are typed records (``report/rows.py``). The studies:

* ``isc_he_cnn`` -- in-storage HE CNN inference.
* ``bsgs_multidevice`` -- BSGS tuned for N devices, modelled and measured on Dask.
* ``fpga_reconfig`` -- reconfiguration with request prediction.
* ``paillier_offload`` -- Paillier on QAT and on this machine.
* ``ridge`` -- private ridge regression at the paper's scale.
* ``tls_offload`` -- nginx in four modes.

Shared by all, public modules of this package: :mod:`.bands` (a figure's band and its tables),
:mod:`.verdicts` (a verdict for every cell beside a paper value, by the one rule of
``report/verdicts.py``, and the ``verdicts`` table) and :mod:`.paillier_gpu` (the GPU rows of
paillier-offload and ridge). ``data/`` holds stored results the studies show (package data).
:mod:`.runner` runs them all for the report. Where to start reading: :mod:`.registry` and
:mod:`.frame`, then ``isc_he_cnn/study.py``.
"""

from __future__ import annotations

import importlib
import pkgutil

from cryptoffload.studies.registry import (
    Option, ReportContext, ReportRun, StudySpec, register_study, registered, unknown_study)

#: Subpackages that are not studies (stored results, package data).
_NOT_STUDIES = {"data"}


def _study_packages() -> list[str]:
    return [m.name for m in pkgutil.iter_modules(__path__)
            if m.ispkg and not m.name.startswith("_") and m.name not in _NOT_STUDIES]


def _import_study(package: str) -> None:
    importlib.import_module(f"{__name__}.{package}.study")


def all_studies() -> dict[str, StudySpec]:
    """Every study, by name (imports every study's ``study`` module)."""
    for package in _study_packages():
        _import_study(package)
    return registered()


def get_study(name: str) -> StudySpec:
    """One study by name: its subpackage is tried first under the study's own name
    (``fpga-reconfig`` -> ``fpga_reconfig``), then every one; unknown names are a
    :class:`~cryptoffload.errors.ConfigError` listing the known ones."""
    package = name.replace("-", "_")
    if package in _study_packages():
        _import_study(package)
    spec = registered().get(name)
    if spec is None:
        spec = all_studies().get(name)
    if spec is None:
        raise unknown_study(name)
    return spec


__all__ = ["Option", "ReportContext", "ReportRun", "StudySpec", "all_studies", "get_study", "register_study"]
