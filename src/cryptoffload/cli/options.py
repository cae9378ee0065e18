"""Parsing of the comma-separated option values several command groups accept; a bad value is
a :class:`~cryptoffload.errors.ConfigError` naming the option."""

from __future__ import annotations

from typing import Optional

from cryptoffload.errors import ConfigError


def parse_floats(text: Optional[str], what: str) -> Optional[list[float]]:
    if text is None:
        return None
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ConfigError(f"{what} must be comma-separated numbers, got '{text}'") from None


def parse_ints(text: str, what: str) -> list[int]:
    try:
        vals = [int(v) for v in text.replace(" ", "").split(",") if v]
    except ValueError:
        raise ConfigError(f"{what} must be a comma-separated list of positive integers, got {text!r}") from None
    if not vals or any(v < 1 for v in vals):
        raise ConfigError(f"{what} must be a comma-separated list of positive integers, got {text!r}")
    return vals


def split_list(text: str, what: str) -> list[str]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise ConfigError(f"{what}: give at least one value")
    return items
