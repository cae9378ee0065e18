"""Cost profiles: TOML files in which every number carries its source.

Why a source per value: a simulator is only as trustworthy as its inputs, and a reader of a
report must be able to tell a number cited from a paper table from one measured on this
machine. So a profile value is always written as an inline table::

    [ciphers.aes-ecb]
    software_mbps = { value = 266.7, source = "Niwa et al. 2005, Table 2", provenance = "cited",
                      range = [266.65, 266.75], range_why = "stated to 4 significant digits" }

and the file has a ``[meta]`` table with ``name``, ``kind`` ("cited" or "measured") and
``description``. :func:`load_profile` refuses a file with a missing or non-numeric field with a
message naming the file and the dotted field, so a typo never turns into a silent default; and
a value its field cannot hold (a negative cost, a zero rate, a fractional count: the rules in
:mod:`.rules`) with the fix. Files are bounded (size, nesting) before they are parsed.

Why a ``provenance`` and a ``range`` per value (issue 26): a prediction is only as firm as its
least certain input, so every assumed or fitted value carries the plausible ``range`` its
``range_why`` justifies, and a cited one its source's stated precision; the sensitivity bands
(:mod:`.sensitivity`) move each input over that range. ``provenance`` says the value's kind in
one word (:data:`VALUE_KINDS`) so no consumer parses the first word of ``source``; a file
written before it existed gets it inferred once, here (:func:`infer_provenance`). A source that
could not be checked says so in ``unverified``.
"""

from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import ModuleType
from typing import Iterable

from cryptoffload.errors import BackendUnavailable, ProfileError
from cryptoffload.io import atomic_write, read_input
from cryptoffload.profiles.rules import check_bounds, check_value

PROFILE_KINDS = ("cited", "measured", "derived")
#: What one value is: copied from a publication (``cited``), chosen where no source gives it
#: (``assumed``), fitted to a paper's result (``fitted``), arithmetic on other values
#: (``derived``), measured by ``calibrate`` in this run's machine (``measured``) or our own
#: earlier measurement shipped with its machine and date (``stored``).
VALUE_KINDS = ("cited", "assumed", "fitted", "derived", "measured", "stored")
#: Keys a value's inline table may hold; any other is a typo, refused.
VALUE_KEYS = frozenset({"value", "source", "provenance", "range", "range_why", "unverified"})
# the opening word of an older file's source, read as its kind (``infer_provenance``)
_SOURCE_WORDS = {"cited": "cited", "measured": "measured", "fitted": "fitted", "derived": "derived",
                 "assumed": "assumed", "assumption": "assumed", "bound": "assumed", "stored": "stored"}
MAX_PROFILE_BYTES = 4 * 1024 * 1024  # the largest built-in profile is a few KB
MAX_DEPTH = 16  # dotted levels of a field name (the built-in profiles use at most 4)


def toml_writer() -> ModuleType:
    """The ``tomli_w`` module, imported on first use: only writing a profile needs it (reading
    uses the standard library), so a machine without it -- the lent GPU machine before its
    wheels are installed -- still imports everything that reads profiles. Raises
    :class:`BackendUnavailable` (one line) without it; a calibration calls this before it
    measures, so a missing writer is said before minutes of measuring, not after."""
    try:
        import tomli_w  # noqa: PLC0415 -- a dependency, imported where it is used
    except ImportError as exc:
        raise BackendUnavailable(f"writing a profile needs tomli-w (pip install tomli-w==1.2.0): {exc}") from None
    return tomli_w


@dataclass(frozen=True)
class ProfileValue:
    """One number, where it comes from, what kind of number it is and how far it may move.

    ``range`` is ``(low, high)`` with ``low <= value <= high`` (``None``: exact, or not yet
    bounded), ``range_why`` the reason for its ends; ``unverified`` says why a cited source
    could not be checked (``""``: checked)."""

    value: float
    source: str
    provenance: str = ""
    range: tuple[float, float] | None = None
    range_why: str = ""
    unverified: str = ""


@dataclass
class Profile:
    """A validated cost profile: ``values`` maps dotted field names to :class:`ProfileValue`."""

    path: str
    name: str
    kind: str
    description: str
    values: dict[str, ProfileValue] = field(default_factory=dict)
    meta: dict[str, object] = field(default_factory=dict)

    def value(self, dotted: str) -> float:
        try:
            return self.values[dotted].value
        except KeyError:
            raise ProfileError(f"{self.path}: field '{dotted}' is missing") from None

    def source(self, dotted: str) -> str:
        try:
            return self.values[dotted].source
        except KeyError:
            raise ProfileError(f"{self.path}: field '{dotted}' is missing") from None

    def provenance(self, dotted: str) -> str:
        """The value's kind (one of :data:`VALUE_KINDS`)."""
        return self._entry(dotted).provenance

    def range(self, dotted: str) -> tuple[float, float] | None:
        """The value's plausible ``(low, high)``, ``None`` when it has none."""
        return self._entry(dotted).range

    def _entry(self, dotted: str) -> ProfileValue:
        try:
            return self.values[dotted]
        except KeyError:
            raise ProfileError(f"{self.path}: field '{dotted}' is missing") from None

    def get(self, dotted: str, default: float | None = None) -> float | None:
        v = self.values.get(dotted)
        return default if v is None else v.value

    def section(self, prefix: str) -> dict[str, dict[str, float]]:
        """Group ``prefix.<key>.<field>`` values as ``{key: {field: value}}``."""
        out: dict[str, dict[str, float]] = {}
        pre = prefix + "."
        for name, pv in self.values.items():
            if name.startswith(pre):
                rest = name[len(pre):]
                if "." in rest:
                    key, fld = rest.rsplit(".", 1)
                    out.setdefault(key, {})[fld] = pv.value
        return out


def builtin_profile_path(name: str) -> Path:
    """Path of a profile shipped with the package (``name`` without ``.toml``)."""
    res = resources.files("cryptoffload.profiles").joinpath(f"{name}.toml")
    return Path(str(res))


def resolve_profile(name_or_path: str | os.PathLike[str]) -> Path:
    """Accept a path to a TOML file or the name of a built-in profile."""
    p = Path(name_or_path)
    if p.suffix == ".toml" or p.exists() or os.sep in str(name_or_path):
        if not p.exists():
            raise ProfileError(f"{p}: profile file not found")
        if not p.is_file():
            raise ProfileError(f"profile {p} is not a regular file (a folder, a FIFO or a device); give a TOML file")
        return p
    builtin = builtin_profile_path(str(name_or_path))
    if not builtin.is_file():
        raise ProfileError(f"unknown profile '{name_or_path}' (not a file and not a built-in profile)")
    return builtin


def _as_float(raw: int | float) -> float:
    """``raw`` as a float; an integer too large for one (TOML integers are unbounded: 10**400
    raised OverflowError in ``float()``) becomes an infinity, which no field admits."""
    try:
        return float(raw)
    except OverflowError:
        return math.inf if raw > 0 else -math.inf


def infer_provenance(source: str, profile_kind: str) -> str:
    """The kind of a value whose file does not say it (written before ``provenance`` existed,
    or by ``calibrate``): a cited or measured profile's kind, else the source's opening word
    where it names one, else ``cited`` (a derived profile's unlabelled values quote a paper)."""
    if profile_kind in ("cited", "measured"):
        return profile_kind
    word = (source.split(":", 1)[0].split() or [""])[0].lower().rstrip(",;(")
    return _SOURCE_WORDS.get(word, "cited")


def _read_range(dotted: str, val: dict[str, object], value: float, path: str) -> tuple[float, float] | None:
    """The value's ``range``, checked: two numbers, ordered around the value, each one its field
    can hold, with a ``range_why``."""
    raw = val.get("range")
    if raw is None:
        if "range_why" in val:
            raise ProfileError(f"{path}: field '{dotted}' has a range_why but no range")
        return None
    if (not isinstance(raw, list) or len(raw) != 2
            or any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in raw)):
        raise ProfileError(f"{path}: field '{dotted}' range must be [low, high] (two numbers), got {raw!r}")
    low, high = _as_float(raw[0]), _as_float(raw[1])
    for end in (low, high):
        problem = check_value(dotted, end)
        if problem:
            raise ProfileError(f"{path}: range end of {problem}")
    if not low <= value <= high:
        raise ProfileError(f"{path}: field '{dotted}' ({value:g}) lies outside its range [{low:g}, {high:g}]; "
                           "correct the value or its range")
    why = val.get("range_why")
    if not isinstance(why, str) or not why.strip():
        raise ProfileError(f"{path}: field '{dotted}' has a range but no range_why (the reason for its ends)")
    return (low, high)


def _read_value(dotted: str, val: dict[str, object], path: str, profile_kind: str) -> ProfileValue:
    """One ``{ value = ..., source = "...", ... }`` table, validated."""
    if "value" not in val:
        raise ProfileError(f"{path}: field '{dotted}' has a source but no value")
    unknown = sorted(set(val) - VALUE_KEYS)
    if unknown:
        raise ProfileError(f"{path}: field '{dotted}' has unknown key(s) {', '.join(unknown)}; "
                           f"a value may hold {', '.join(sorted(VALUE_KEYS))}")
    raw = val["value"]
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        raise ProfileError(f"{path}: field '{dotted}' is not a finite number: {raw!r}")
    problem = check_value(dotted, _as_float(raw))
    if problem:
        raise ProfileError(f"{path}: {problem}")
    src = val.get("source")
    if not isinstance(src, str) or not src.strip():
        raise ProfileError(f"{path}: field '{dotted}' has no source")
    prov = val.get("provenance", infer_provenance(src, profile_kind))
    if prov not in VALUE_KINDS:
        raise ProfileError(f"{path}: field '{dotted}' provenance must be one of {', '.join(VALUE_KINDS)}, got {prov!r}")
    unverified = val.get("unverified", "")
    if not isinstance(unverified, str):
        raise ProfileError(f"{path}: field '{dotted}' unverified must be the reason, as text")
    rng = _read_range(dotted, val, float(raw), path)
    why = val.get("range_why", "") if rng else ""
    return ProfileValue(float(raw), src, prov, rng, str(why), unverified)


def _walk(node: dict[str, object], prefix: str, path: str, out: dict[str, ProfileValue], depth: int = 1,
          profile_kind: str = "cited") -> None:
    if depth > MAX_DEPTH:
        raise ProfileError(f"{path}: field '{prefix[:80]}...' is nested more than {MAX_DEPTH} levels deep; "
                           "profiles group fields in a few tables")
    for key, val in node.items():
        dotted = f"{prefix}.{key}" if prefix else key
        if isinstance(val, dict) and ("value" in val or "source" in val):
            out[dotted] = _read_value(dotted, val, path, profile_kind)
        elif isinstance(val, dict):
            _walk(val, dotted, path, out, depth + 1, profile_kind)
        else:
            raise ProfileError(
                f"{path}: field '{dotted}' must be {{ value = <number>, source = \"...\" }}, got {val!r}"
            )


def load_profile(name_or_path: str | os.PathLike[str], required: Iterable[str] = ()) -> Profile:
    """Load and validate a profile; ``required`` lists dotted fields that must be present."""
    path = resolve_profile(name_or_path)
    shown = f"profiles/{path.name}" if path == builtin_profile_path(path.stem) else str(path)
    raw = read_input(path, "profile", max_bytes=MAX_PROFILE_BYTES, error=ProfileError)
    return parse_profile(raw, shown, required)


def parse_profile(raw: bytes, shown: str = "profile", required: Iterable[str] = ()) -> Profile:
    """A profile from its TOML bytes (``shown`` names it in messages), validated as
    :func:`load_profile` validates a file: every value a number its field's kind admits, with
    a source; a ProfileError otherwise."""
    if len(raw) > MAX_PROFILE_BYTES:
        raise ProfileError(f"{shown} is {len(raw):,} bytes; a profile is at most {MAX_PROFILE_BYTES:,}")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"{shown}: not valid TOML ({exc})") from None
    except ValueError as exc:   # an integer past Python's 4,300-digit conversion limit
        raise ProfileError(f"{shown}: a number too long to be a profile value ({exc.args[0][:60]}...)") from None
    except RecursionError:
        raise ProfileError(f"{shown}: arrays or inline tables nested too deeply to be a profile") from None
    except UnicodeDecodeError as exc:
        raise ProfileError(f"{shown}: not UTF-8 text (byte {exc.start}); save the profile as UTF-8") from None
    meta = data.pop("meta", None)
    if not isinstance(meta, dict):
        raise ProfileError(f"{shown}: field 'meta' is missing")
    for key in ("name", "kind", "description"):
        if not isinstance(meta.get(key), str) or not meta[key].strip():
            raise ProfileError(f"{shown}: field 'meta.{key}' is missing")
    if meta["kind"] not in PROFILE_KINDS:
        raise ProfileError(f"{shown}: field 'meta.kind' must be one of {', '.join(PROFILE_KINDS)}")
    values: dict[str, ProfileValue] = {}
    _walk(data, "", shown, values, profile_kind=meta["kind"])
    problem = check_bounds({k: v.value for k, v in values.items()})
    if problem:
        raise ProfileError(f"{shown}: {problem}")
    for req in required:
        if req not in values:
            raise ProfileError(f"{shown}: field '{req}' is missing")
    return Profile(shown, meta["name"], meta["kind"], meta["description"], values, meta)


def write_profile(
    path: str | os.PathLike[str],
    meta: dict[str, object],
    values: dict[str, ProfileValue],
) -> Path:
    """Write a profile atomically (temp file + rename) so a crash never leaves half a file.

    Refuses (``ProfileError``) anything :func:`load_profile` would not read back as given: a
    non-finite value, an empty source, a range the value is outside, an unknown kind, an empty name part, a field under ``meta``, a table
    named ``value`` or ``source``, or a field that is also a table of other fields."""
    out = Path(path)
    tree: dict[str, object] = {"meta": dict(meta)}
    names = set(values)
    for dotted, pv in values.items():
        parts = dotted.split(".")
        raw = pv.value
        if isinstance(raw, bool) or not isinstance(raw, (int, float)):
            raise ProfileError(f"{out}: field '{dotted}' is not a finite number: {raw!r}")
        problem = check_value(dotted, _as_float(raw))
        if problem:
            raise ProfileError(f"{out}: {problem}")
        if not isinstance(pv.source, str) or not pv.source.strip():
            raise ProfileError(f"{out}: field '{dotted}' has no source")
        if (not all(parts) or parts[0] == "meta" or any(p in ("value", "source") for p in parts[:-1])
                or any(".".join(parts[:i]) in names for i in range(1, len(parts)))):
            raise ProfileError(f"{out}: field name '{dotted}' cannot be written as a profile field")
        node = tree
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):   # refused above: a field's parent is never a value
                raise AssertionError(f"{dotted}: {part} is a value")
            node = child
        entry = _entry_table(pv)
        entry.setdefault("provenance", infer_provenance(pv.source, str(meta.get("kind", ""))))  # stated, not left to a reader
        _read_value(dotted, entry, str(out), str(meta.get("kind", "")))  # its kind and range, as a load checks them
        node[parts[-1]] = entry
    text = toml_writer().dumps(tree)
    out.parent.mkdir(parents=True, exist_ok=True)
    return atomic_write(out, text)


def _entry_table(pv: ProfileValue) -> dict[str, object]:
    """A value as its inline table: value and source, and the optional keys it sets."""
    entry: dict[str, object] = {"value": pv.value, "source": pv.source}
    if pv.provenance:
        entry["provenance"] = pv.provenance
    if pv.range is not None:
        entry["range"] = list(pv.range)
        entry["range_why"] = pv.range_why
    if pv.unverified:
        entry["unverified"] = pv.unverified
    return entry
