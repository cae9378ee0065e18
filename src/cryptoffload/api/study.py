"""Studies for Python users: run one (a paper reproduced and extended) and read its result.

    >>> from cryptoffload import study
    >>> study.names()
    ['bsgs-multidevice', 'fpga-reconfig', 'isc-he-cnn', 'paillier-offload', 'ridge', 'tls-offload']
    >>> result = study.run("fpga-reconfig", "out/fpga", requests=5000, seeds=1, rates=[100])
    >>> result.headline                                  # the findings, one sentence each
    >>> table = result.tables["table6_p90_vs_oracle"]    # tables by id: columns, rows, the paper's
    >>> study.read("out/fpga").study                     # the same result, from its result.json

A study is the command ``cryptoffload study NAME``: the same options (by their config field
name: ``rates=[100, 1000]`` for ``--rates 100,1000``, ``reconfig_ms=60`` for ``--reconfig-ms
60``; :func:`options` lists them with their help), read and bounded by the same rules, the same
files written to ``out`` (``result.json`` last: the contract in ``docs/result-contract.md``).
``quick=True`` by default, as in the report. The result is a
:class:`~cryptoffload.report.result.StudyResult`: ``tables`` (each with ``columns``, ``rows``,
the paper's rows and a provenance), ``claims``, ``headline``, ``notes``, ``figures``.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional

from cryptoffload.errors import ConfigError
from cryptoffload.report.result import StudyResult, Table, load_result

if TYPE_CHECKING:
    from cryptoffload.studies.registry import StudySpec

__all__ = ["StudyResult", "Table", "names", "options", "read", "run"]


def names() -> list[str]:
    """Every registered study, by name (as ``cryptoffload study list``)."""
    from cryptoffload.studies import all_studies

    return list(all_studies())


def _spec(name: str) -> StudySpec:
    """The registered study ``name``; an unknown name is refused with the closest names."""
    from cryptoffload.studies import all_studies

    studies = all_studies()
    if not isinstance(name, str) or name not in studies:
        close = difflib.get_close_matches(str(name), list(studies), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise ConfigError(f"unknown study {name!r} (known: {', '.join(studies)}){hint}")
    return studies[name]


def options(name: str) -> dict[str, str]:
    """The options of study ``name``: config field name -> help (``quick`` and ``seed`` are
    :func:`run`'s own arguments)."""
    spec = _spec(name)
    return {opt.field: opt.help for opt in spec.options}


def _as_typed(value: object) -> object:
    """A Python value as the command line would have typed it: a list as comma-separated text
    (the option's own reader then checks every item against its bound)."""
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return value


def run(name: str, out: str | os.PathLike[str] | None = None, *, quick: bool = True, seed: Optional[int] = None,
        progress: Optional[Callable[[int], Callable[[str], None]]] = None, **study_options: object) -> StudyResult:
    """Run study ``name`` into ``out`` (default ``out/NAME``) and return its result; options by
    their config field (see :func:`options`). Bad options are refused before anything runs or
    is written, as on the command line. ``progress``: ``progress(total) -> advance(label)``."""
    from cryptoffload.checks import SEED
    from cryptoffload.io import check_output_folder

    spec = _spec(name)
    fields = {opt.field for opt in spec.options}
    unknown = sorted(set(study_options) - fields)
    if unknown:
        close = difflib.get_close_matches(unknown[0], sorted(fields), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"study {name}: no option {unknown[0]!r}{hint}; its options: {', '.join(sorted(fields))}")
    values: dict[str, object] = {"quick": bool(quick)}
    if spec.seed_help is not None:
        import inspect

        default = inspect.signature(spec.config).parameters["seed"].default
        values["seed"] = SEED.check("seed", default if seed is None else seed)
    elif seed is not None:
        raise ConfigError(f"study {name} has no seed (it draws nothing at random, or only cryptographic keys)")
    values.update({k: _as_typed(v) for k, v in study_options.items()})
    folder = check_output_folder(Path(out) if out is not None else Path("out") / name)
    cfg = spec.make_config(values)
    cfg.validate()
    return spec.run(cfg, folder, progress)


def read(path: str | os.PathLike[str]) -> StudyResult:
    """A study's result from its ``result.json`` (or the folder holding it)."""
    target = Path(path)
    return load_result(target / "result.json" if target.is_dir() else target)
