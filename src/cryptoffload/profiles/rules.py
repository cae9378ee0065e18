"""What each profile field may hold, read from its name.

Why from the name: profile fields follow one naming convention (a unit or a kind as the last
words: ``_s``, ``_mbps``, ``_bytes``, ``_share``, ``_lanes``, ...), and a rule attached to that
convention protects every profile, built-in or user-written, and every consumer at once. A
negative cost became a negative latency, a zero rate a division by zero, a fractional count
was truncated: each is now refused on load with the file, the field and the fix.

The table :data:`RULES` is read top to bottom; the first rule whose words occur in the field's
last name part applies. A field no rule names must still be finite and not negative (no cost,
size or rate in a profile is below zero). Pairs ``x_min``/``x_max`` must be ordered, with
``x`` between them when present.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class FieldRule:
    """A kind of field and the values it admits."""

    what: str            # "a rate", named in the message
    minimum: float = 0.0
    strict: bool = False  # value > minimum rather than >=
    maximum: float | None = None
    integer: bool = False
    fix: str = ""        # what to write instead

    def requirement(self) -> str:
        kind = "a whole number" if self.integer else "a number"
        low = f"> {self.minimum:g}" if self.strict else f">= {self.minimum:g}"
        high = f" and <= {self.maximum:g}" if self.maximum is not None else ""
        return f"{kind} {low}{high}"

    def admits(self, v: float) -> bool:
        if self.integer and not float(v).is_integer():
            return False
        if v < self.minimum or (self.strict and v == self.minimum):
            return False
        return self.maximum is None or v <= self.maximum


RATE = FieldRule("a rate", strict=True, fix="a rate of zero would make every transfer take forever; give the measured or cited rate")
DURATION = FieldRule("a duration", fix="costs cannot be negative (0 for a free step)")
BYTES = FieldRule("a number of bytes", integer=True, fix="give a whole number of bytes (0 for none)")
BITS = FieldRule("a number of bits", minimum=1, integer=True, fix="give a whole number of bits, at least 1")
CAPACITY = FieldRule("a capacity", strict=True, fix="give the device's capacity, above 0")
AMOUNT = FieldRule("an amount of data", fix="amounts cannot be negative")
FRACTION = FieldRule("a fraction", maximum=1.0, fix="write a fraction between 0 and 1 (e.g. 0.25 for 25 %)")
PERCENT = FieldRule("a percentage", maximum=100.0, fix="write a percentage between 0 and 100")
COUNT = FieldRule("a count", minimum=1, integer=True, fix="write a whole number, at least 1 (counts are never truncated)")
INDEX = FieldRule("a level", integer=True, fix="write a whole number, 0 or more")
RATIO = FieldRule("a ratio", strict=True, fix="write a ratio above 0")
DEFAULT = FieldRule("a cost", fix="no cost, size or rate in a profile is negative")

_TIME_UNITS = frozenset({"s", "ms", "us", "ns"})

# (words any of which in the field's last name part selects the rule, the rule); first match wins
RULES: tuple[tuple[frozenset[str], FieldRule], ...] = (
    (frozenset({"hz", "bps", "kbps", "mbps", "gbps", "Bps", "MBps", "GBps"}), RATE),
    (_TIME_UNITS, DURATION),
    (frozenset({"bytes"}), BYTES),
    (frozenset({"bits", "log"}), BITS),
    (frozenset({"capacity", "dram"}), CAPACITY),  # with gb/tb; a ring capacity is a count (below)
    (frozenset({"gb", "tb", "mb", "kb"}), AMOUNT),
    (frozenset({"share", "fraction", "saving"}), FRACTION),
    (frozenset({"pct"}), PERCENT),
    (frozenset({"rate"}), FRACTION),  # a unitless rate is a probability (retransmit_rate)
    (frozenset({"slots", "lanes", "engines", "threads", "coroutines", "diagonals", "limbs", "degree",
                "encryptions", "width", "order", "baby", "ring"}), COUNT),
    (frozenset({"level"}), INDEX),
    (frozenset({"over", "ratio", "factor", "gain"}), RATIO),
)

_BOUND_SUFFIXES = ("min", "max")


def rule_for(dotted: str) -> FieldRule:
    """The rule for a dotted field name (its last part decides)."""
    words = dotted.rsplit(".", 1)[-1].split("_")
    if words[-1] in _BOUND_SUFFIXES and len(words) > 1:
        words = words[:-1]
    present = set(words)
    if "per" in present and words[-1] in _TIME_UNITS:  # h2d_bytes_per_s, requests_per_s
        return RATE
    for names, rule in RULES:
        if rule is CAPACITY and not ({"gb", "tb", "mb", "kb"} & present):
            continue
        if names & present:
            return rule
    return DEFAULT


def check_value(dotted: str, value: float) -> str | None:
    """None when ``value`` suits the field, else the reason with its fix (without the file)."""
    rule = rule_for(dotted)
    if not math.isfinite(value) or not rule.admits(value):
        return (f"field '{dotted}' is {rule.what} and must be {rule.requirement()}, got {value!r}; {rule.fix}")
    return None


def check_bounds(values: dict[str, float]) -> str | None:
    """None when every ``x_min``/``x_max`` pair is ordered with ``x`` between, else the reason."""
    for name, low in values.items():
        if not name.endswith("_min"):
            continue
        base = name[: -len("_min")]
        high = values.get(base + "_max")
        if high is not None and low > high:
            return (f"field '{name}' ({low:g}) is above '{base}_max' ({high:g}); "
                    "swap them or correct one")
        mid = values.get(base)
        if mid is not None and (mid < low or (high is not None and mid > high)):
            return (f"field '{base}' ({mid:g}) lies outside ['{name}', '{base}_max'] "
                    f"({low:g} .. {high if high is not None else math.inf:g}); correct the value or its bounds")
    return None
