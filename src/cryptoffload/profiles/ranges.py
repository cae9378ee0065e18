"""Where each end of a profile value's range comes from (issue 35).

Why each end: a band is only as honest as the ends its inputs move between. An end taken from the
paper's own result makes every figure judged with it a fit, however the nominal value was
found; an end that is merely a parameter's whole domain, with no reason, lets a band admit every
outcome. So every range end is *sourced* -- a citation, a measurement, or a named assumption
with its why -- and the fit checker (``profiles/fits.py``) follows the ends as well as the
nominal values.

A profile states an end's source in its ``range_why`` (the loader's keys are unchanged), one of:

* ``"low: <source>; high: <source>"`` -- each end its own source; an end whose source starts with
  one of :data:`~cryptoffload.profiles.loader.VALUE_KINDS` (``"fitted to Table 1: ..."``,
  ``"assumed: ..."``) is of that kind, otherwise of the value's own;
* ``"<name>_min .. <name>_max ..."`` (or ``"<name>_min .. _max"``) -- the ends are the sibling
  values of those names, each with its own source and provenance;
* any other text -- one reason for both ends (a stated precision, a grid's points), of the
  value's own kind unless it starts with ``fitted``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cryptoffload.profiles.loader import VALUE_KINDS, Profile
from cryptoffload.report.provenance import fitted_target, provenance_word

_SIBLINGS = re.compile(r"^\s*(?P<low>[A-Za-z0-9_]+_min)\s*\.\.\s*(?P<high>[A-Za-z0-9_]*_max)\b")
_PER_END = re.compile(r"^\s*low:\s*(?P<low>.*?);\s*high:\s*(?P<high>.*)$", re.DOTALL)


@dataclass(frozen=True)
class RangeEnd:
    """One end of a range: its value, where it comes from, and its kind."""

    value: float
    source: str
    provenance: str


def _kind(source: str, default: str) -> str:
    """An end's kind: the first word of its source when that is a value kind, else ``default``."""
    if fitted_target(source) is not None:
        return "fitted"
    word = provenance_word(source)
    return word if word in VALUE_KINDS else default


def _sibling(profile: Profile, dotted: str, name: str) -> str:
    """The dotted name of sibling ``name`` (``cpu_fraction_max`` beside ``ktls.cpu_fraction``;
    ``_max`` alone: the value's own name with the suffix)."""
    section, _, field = dotted.rpartition(".")
    own = name if not name.startswith("_") else field + name
    return f"{section}.{own}" if section else own


def range_ends(profile: Profile, dotted: str) -> tuple[RangeEnd, RangeEnd] | None:
    """The two ends of ``dotted``'s range with their sources (``None``: the value has no range)."""
    pv = profile.values[dotted]
    if pv.range is None:
        return None
    low, high = pv.range
    why, kind = pv.range_why, pv.provenance
    sib = _SIBLINGS.match(why)
    if sib is not None:
        ends = []
        for end, name in ((low, sib.group("low")), (high, sib.group("high"))):
            other = profile.values.get(_sibling(profile, dotted, name))
            if other is None or other.value != end:
                ends.append(RangeEnd(end, "", kind))  # names a sibling that is not there: unsourced
            else:
                ends.append(RangeEnd(end, other.source, other.provenance or _kind(other.source, kind)))
        return ends[0], ends[1]
    per = _PER_END.match(why)
    if per is not None:
        lo, hi = per.group("low").strip(), per.group("high").strip()
        return RangeEnd(low, lo, _kind(lo, kind)), RangeEnd(high, hi, _kind(hi, kind))
    return RangeEnd(low, why, _kind(why, kind)), RangeEnd(high, why, _kind(why, kind))


def unsourced_ends(profile: Profile) -> list[str]:
    """Every range end of ``profile`` without a source: ``"name:field low"``; empty when every
    moving range says where each end comes from."""
    out = []
    for dotted, pv in profile.values.items():
        ends = range_ends(profile, dotted)
        if ends is None or pv.range is None or pv.range[0] == pv.range[1]:
            continue
        for side, end in zip(("low", "high"), ends):
            if not end.source.strip():
                out.append(f"{profile.name}:{dotted} {side}")
    return out


def fitted_ends(profile: Profile) -> dict[str, str]:
    """``{"name:field": target}`` for every value that is not itself fitted but has a range end
    fitted to one of the paper's results (its target table, ``""`` for none named): a figure
    banded to that end rests on the paper's own result, so it is fitted."""
    out = {}
    for dotted, pv in profile.values.items():
        if fitted_target(pv.source) is not None:
            continue  # a fitted value: its own source declares the fit (``fits_from_sources``)
        for end in range_ends(profile, dotted) or ():
            if end.provenance == "fitted":
                out[f"{profile.name}:{dotted}"] = fitted_target(end.source) or ""
    return out


__all__ = ["RangeEnd", "fitted_ends", "range_ends", "unsourced_ends"]
