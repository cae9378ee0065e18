"""Which values of a profile were fitted, and to which of the paper's tables.

Why here: a profile states every number's source, and ``fitted to Table N: ...`` in a source is
the declaration that propagates to every table computed from it (``report/provenance.py``).
Studies declare their profiles' fits with :func:`profile_fits`; the provenance test reads the
profiles a ``result.json`` lists the same way.
"""

from __future__ import annotations

import os
from pathlib import Path

from cryptoffload.profiles.loader import builtin_profile_path, load_profile
from cryptoffload.profiles.ranges import fitted_ends
from cryptoffload.report.provenance import fits_from_sources


def _resolve(name_or_path: str | os.PathLike[str]) -> str | os.PathLike[str]:
    """``profiles/NAME.toml`` (how a result lists a built-in profile) -> the built-in ``NAME``."""
    p = Path(name_or_path)
    if not p.is_file() and p.parent.name == "profiles" and p.suffix == ".toml" and builtin_profile_path(p.stem).is_file():
        return p.stem
    return name_or_path


def profile_fits(name_or_path: str | os.PathLike[str]) -> dict[str, str]:
    """``{"NAME:field": "table 2"}`` for every value of the profile whose source says it was
    fitted (``""``: fitted to the paper's results without naming a table), and for every value
    with a range end fitted so (issue 35: the fit checker follows range ends as well as
    nominal values, ``profiles/ranges.py``)."""
    prof = load_profile(_resolve(name_or_path))
    return fits_from_sources(prof.name, {k: v.source for k, v in prof.values.items()}) | fitted_ends(prof)


__all__ = ["profile_fits"]
