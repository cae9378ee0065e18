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
    """A kind of field and the values it admits: a sign (``minimum``, ``strict``), whole numbers
    or not, and a physical range ``floor`` .. ``ceiling`` in the kind's base ``unit`` (seconds,
    per second, bytes, ...) that every non-zero value must lie in. The field's own unit word
    (``_ms``, ``_gbps``, ``_tb``) rescales the range, so ``cpu_ms`` reads its range in ms."""

    what: str            # "a rate", named in the message
    minimum: float = 0.0
    strict: bool = False  # value > minimum rather than >=
    integer: bool = False
    fix: str = ""        # what to write instead
    floor: float = 0.0   # smallest non-zero value, in ``unit``
    ceiling: float = math.inf  # largest value, in ``unit``
    unit: str = ""

    def requirement(self, scale: float = 1.0, unit: str | None = None) -> str:
        """The values admitted, in words, in a unit ``scale`` times the base unit."""
        unit = self.unit if unit is None else unit
        shown = f" {unit}" if unit else ""
        high = self.ceiling / scale
        if self.integer:
            return f"a whole number between {self.minimum:g} and {high:g}{shown}"
        span = f"between {self.floor / scale:g} and {high:g}{shown}"
        zero = self.minimum == 0 and not self.strict and self.floor > 0
        return f"0 or a number {span}" if zero else f"a number {span}"

    def admits(self, v: float, scale: float = 1.0) -> bool:
        """Whether ``v`` (in a unit ``scale`` times the base unit) suits the kind."""
        if not math.isfinite(v) or (self.integer and not float(v).is_integer()):
            return False
        if v < self.minimum or (self.strict and v == self.minimum):
            return False
        if v == 0:
            return True
        base = v * scale
        return self.floor <= base <= self.ceiling


# Physical ranges, in each kind's base unit. Wide enough for any device a study models (a
# picosecond step to an 11-day job, a 1 B/s link to a petabyte per second, a DRAM of a byte to
# an exabyte), narrow enough that a typo (1e308, 1e-300) is refused instead of overflowing to
# inf in a product or rounding to nothing in a sum.
RATE = FieldRule("a rate", strict=True, floor=1.0, ceiling=1e15, unit="per s",
                 fix="a rate of zero would make every transfer take forever; give the measured or cited rate")
DURATION = FieldRule("a duration", floor=1e-12, ceiling=1e6, unit="s",
                     fix="costs cannot be negative (0 for a free step)")
BYTES = FieldRule("a number of bytes", integer=True, ceiling=1e15, unit="bytes",
                  fix="give a whole number of bytes (0 for none)")
BITS = FieldRule("a number of bits", minimum=1, integer=True, ceiling=1e12, unit="bits",
                 fix="give a whole number of bits, at least 1")
CAPACITY = FieldRule("a capacity", strict=True, floor=1.0, ceiling=1e18, unit="bytes",
                     fix="give the device's capacity, above 0")
AMOUNT = FieldRule("an amount of data", floor=1.0, ceiling=1e18, unit="bytes", fix="amounts cannot be negative")
FRACTION = FieldRule("a fraction", floor=1e-12, ceiling=1.0,
                     fix="write a fraction between 0 and 1 (e.g. 0.25 for 25 %)")
PERCENT = FieldRule("a percentage", floor=1e-10, ceiling=100.0, unit="%", fix="write a percentage between 0 and 100")
COUNT = FieldRule("a count", minimum=1, integer=True, ceiling=1e9,
                  fix="write a whole number, at least 1 (counts are never truncated)")
INDEX = FieldRule("a level", integer=True, ceiling=1000, fix="write a whole number, 0 or more")
RATIO = FieldRule("a ratio", strict=True, floor=1e-9, ceiling=1e9, fix="write a ratio above 0")
DEFAULT = FieldRule("a cost", floor=1e-12, ceiling=1e15, fix="no cost, size or rate in a profile is negative")

_TIME_UNITS = frozenset({"s", "ms", "us", "ns"})

# a unit word of a field's name: (how it is shown, its size in the rule's base unit)
UNITS: dict[str, tuple[str, float]] = {
    "s": ("s", 1.0), "ms": ("ms", 1e-3), "us": ("us", 1e-6), "ns": ("ns", 1e-9),
    "hz": ("Hz", 1.0), "bps": ("bps", 1.0), "Bps": ("B/s", 1.0), "kbps": ("kbps", 1e3), "mbps": ("mbps", 1e6),
    "gbps": ("gbps", 1e9), "MBps": ("MB/s", 1e6), "GBps": ("GB/s", 1e9),
    "kb": ("KB", 1e3), "mb": ("MB", 1e6), "gb": ("GB", 1e9), "tb": ("TB", 1e12), "pct": ("%", 1.0),
}

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
                "encryptions", "width", "order", "baby", "ring", "pairs", "repeats", "workers", "cores", "size", "items",
                "classes", "hidden", "image", "kernel", "stride", "channels", "devices", "clients"}), COUNT),
    (frozenset({"scale", "range"}), BITS),  # EVA's input_scale and output_range: log2 of a scale
    (frozenset({"level"}), INDEX),
    (frozenset({"over", "ratio", "factor", "gain", "slowdown", "speedup"}), RATIO),
)

_BOUND_SUFFIXES = ("min", "max")
#: the words a field's name may end with, as a refusal lists them
UNIT_WORDS = ("_s", "_ms", "_us", "_ns", "_per_s", "_mbps", "_gbps", "_Bps", "_hz", "_bytes", "_bits", "_gb", "_tb",
              "_share", "_fraction", "_pct", "_ratio", "_factor", "_level", "_slots", "_lanes", "_threads", "...")


def rule_for(dotted: str) -> FieldRule:
    """The rule for a dotted field name (its last part decides)."""
    words = _words(dotted)
    present = set(words)
    if _per_time(words):  # h2d_bytes_per_s, requests_per_s (but per_item_s is a duration)
        return RATE
    for names, rule in RULES:
        if rule is CAPACITY and not ({"gb", "tb", "mb", "kb"} & present):
            continue
        if names & present:
            return rule
    return DEFAULT


def _per_time(words: list[str]) -> bool:
    """``..._per_s``: something per unit of time (a rate); ``per_item_s`` is seconds per item."""
    return len(words) >= 2 and words[-2] == "per" and words[-1] in _TIME_UNITS


def _words(dotted: str) -> list[str]:
    words = dotted.rsplit(".", 1)[-1].split("_")
    return words[:-1] if words[-1] in _BOUND_SUFFIXES and len(words) > 1 else words


def unit_of(dotted: str, rule: FieldRule) -> tuple[str, float]:
    """The unit a field's value is written in, as shown, and its size in ``rule``'s base unit:
    ``cpu_ms`` -> ("ms", 1e-3), ``h2d_bytes_per_s`` -> ("bytes/s", 1), ``bounce_copy_s_per_byte``
    -> ("s/byte", 1); a field without a unit word is in the rule's base unit."""
    words = _words(dotted)
    if rule is RATE and _per_time(words):  # h2d_bytes_per_s
        return ("bytes/s" if "bytes" in words else "per s"), 1.0
    for i, word in enumerate(words):
        if word in UNITS and rule.unit:
            label, scale = UNITS[word]
            if words[i + 1:i + 2] == ["per"] and i + 2 < len(words):
                label = f"{label}/{words[i + 2]}"
            return label, scale
    return rule.unit, 1.0


def check_value(dotted: str, value: float) -> str | None:
    """None when ``value`` suits the field, else the reason with its unit, range and fix
    (without the file). A field whose name selects no rule has no unit or kind to bound it by,
    and is refused whatever its value (issue 32: every number of a profile has a floor and a
    ceiling in its unit)."""
    rule = rule_for(dotted)
    if rule is DEFAULT:
        return (f"field '{dotted}' names no unit or kind, so its value {value!r} cannot be bounded; end its name "
                f"with a unit or kind word ({', '.join(UNIT_WORDS)})")
    unit, scale = unit_of(dotted, rule)
    if not rule.admits(value, scale):
        return (f"field '{dotted}' is {rule.what} {f'in {unit}' if unit else '(no unit)'} and must be "
                f"{rule.requirement(scale, unit)}, got {value!r}{'' if math.isfinite(value) else ' (not a finite number)'}; "
                f"{rule.fix}")
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
