"""The record of a bootstrap split run (issue 33) as typed values: what
``benchmarks/bootstrap_split.py`` writes and the bsgs-multidevice study's quick run reads back
(its stored copy), and what ``bootstrap_split``'s tables, bands and verdicts are made from.

Why its own module: the record enters from a JSON file, so it is checked once, where it
enters (:meth:`SplitRecord.from_json`: every field's type, the samples' lengths, a tuned count
per stage and worker count, the run's settings as :class:`SplitSettings` checks them); below
that the code reads typed fields, never a key it hopes is there. :meth:`SplitRecord.to_json`
writes the same JSON back, key for key.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping, TypeVar

from cryptoffload.checks import JsonDict, JsonValue
from cryptoffload.crypto.ckks.bootstrap.plan import BootstrapPlan
from cryptoffload.errors import ConfigError, CryptoffloadError
from cryptoffload.profiles.sensitivity import MIN_SAMPLES

T = TypeVar("T")

KINDS = ("naive", "tuned")
SPLIT_SECURITY = ("INSECURE study setting: a ring of 2^10 to 2^13 with a modulus of about 1,100 bits is far below "
                  "128-bit security; timings and agreement only, never use these parameters for data")
#: what the record's ``benchmark`` field says
BENCHMARK = "bootstrap_split"


class RecordRefused(ValueError):
    """A stored record that is not what a split run writes; the message names the field."""


@dataclass(frozen=True)
class SplitSettings:
    """What :func:`~.bootstrap_split.measure_split` runs: the ring (insecure study
    parameters: ``q_0`` 60 bits, ``levels`` of 59, ``dnum``), the plan, the stages (names such as
    ``"CoeffToSlot 1"``; empty: every stage), the worker counts, the rounds and the timed passes
    of the part costs per round."""

    ring: int = 2048
    levels: int = 17
    plan: BootstrapPlan = BootstrapPlan((2, 2))
    stages: tuple[str, ...] = ()
    workers: tuple[int, ...] = (1, 2)
    rounds: int = MIN_SAMPLES
    passes: int = 1
    dnum: int = 3

    def validate(self) -> None:
        if self.ring not in (1024, 2048, 4096, 8192):
            raise ConfigError(f"the split stages run at an insecure study ring of 2^10 to 2^13, got N = {self.ring}")
        if not self.workers or any(isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 16
                                   for n in self.workers):
            raise ConfigError(f"worker counts are 1 to 16, got {self.workers!r}")
        if self.rounds < 1 or self.passes < 1:
            raise ConfigError(f"rounds and passes must be at least 1, got {self.rounds} and {self.passes}")

    def to_dict(self) -> JsonDict:
        return {"ring": self.ring, "levels": self.levels, "plan": self.plan.to_dict(), "stages": list(self.stages),
                "workers": list(self.workers), "rounds": self.rounds, "passes": self.passes, "dnum": self.dnum}

    @classmethod
    def from_json(cls, value: object, where: str = "settings") -> SplitSettings:
        """Settings as :meth:`to_dict` wrote them, checked as :meth:`validate` checks a run's."""
        d = _object(value, where)
        p = _object(_get(d, "plan", where), f"{where}.plan")
        try:
            plan = BootstrapPlan(_pair(_get(p, "level_budget", f"{where}.plan"), f"{where}.plan.level_budget"),
                                 _pair(_get(p, "dim1", f"{where}.plan"), f"{where}.plan.dim1"),
                                 _int(_get(p, "slots", f"{where}.plan"), f"{where}.plan.slots"))
            made = cls(_int(_get(d, "ring", where), f"{where}.ring"), _int(_get(d, "levels", where), f"{where}.levels"),
                       plan, tuple(_list(_get(d, "stages", where), f"{where}.stages", _str)),
                       tuple(_list(_get(d, "workers", where), f"{where}.workers", _int)),
                       _int(_get(d, "rounds", where), f"{where}.rounds"), _int(_get(d, "passes", where),
                                                                              f"{where}.passes"),
                       _int(_get(d, "dnum", where), f"{where}.dnum"))
            made.validate()
        except CryptoffloadError as exc:
            raise RecordRefused(f"{where}: {exc}") from None
        return made


@dataclass(frozen=True)
class SplitConfig:
    """One configuration's samples in a record, one per round: its stage, worker count, kind
    (naive or tuned), baby-step count, giant steps and devices used; the wall and span times,
    the model's predictions (seconds) and the agreement in bits with the stage computed in one
    process (``None``: equal bit for bit)."""

    stage: str
    workers: int
    kind: str
    bs: int
    giants: int
    active: int
    walls: tuple[float, ...]
    spans: tuple[float, ...]
    predicted: tuple[float, ...]
    bits: tuple[float | None, ...]

    def to_json(self) -> JsonDict:
        return {"stage": self.stage, "workers": self.workers, "kind": self.kind, "bs": self.bs,
                "giants": self.giants, "active": self.active, "walls": list(self.walls), "spans": list(self.spans),
                "predicted": list(self.predicted), "bits": list(self.bits)}

    @classmethod
    def from_json(cls, value: object, where: str) -> SplitConfig:
        d = _object(value, where)
        ints = [_int(_get(d, k, where), f"{where}.{k}") for k in ("workers", "bs", "giants", "active")]
        walls, spans, predicted = (tuple(_list(_get(d, k, where), f"{where}.{k}", _float))
                                   for k in ("walls", "spans", "predicted"))
        bits = tuple(_list(_get(d, "bits", where), f"{where}.bits", _bits))
        if not walls or not len(walls) == len(spans) == len(predicted) == len(bits):
            raise RecordRefused(f"{where}: walls, spans, predicted and bits hold one sample per round each, got "
                                f"{len(walls)}, {len(spans)}, {len(predicted)} and {len(bits)}")
        kind = _str(_get(d, "kind", where), f"{where}.kind")
        if kind not in KINDS:
            raise RecordRefused(f"{where}.kind must be one of {KINDS}, got {kind!r}")
        return cls(_str(_get(d, "stage", where), f"{where}.stage"), ints[0], kind, ints[1], ints[2], ints[3],
                   walls, spans, predicted, bits)


@dataclass(frozen=True)
class SplitRecord:
    """A split run's record: the machine and date, the settings, the tuned baby-step count per
    stage and worker count, every configuration's samples, each round's part costs alone (per
    stage) and concurrent slowdown (per stage and worker count), each round's link (``None``:
    not measured), the load average at each round's start, the setup's seconds, the key bytes;
    ``command`` and ``load_average_median``: what the benchmark adds."""

    machine: Mapping[str, JsonValue]
    date: str
    settings: SplitSettings
    workers_on_machine: int
    tuned: Mapping[str, Mapping[int, int]]
    configs: tuple[SplitConfig, ...]
    costs_alone: tuple[Mapping[str, Mapping[str, float]], ...]
    concurrent_slowdown: tuple[Mapping[str, Mapping[int, float]], ...]
    links: tuple[Mapping[str, float] | None, ...]
    load_average_1min: tuple[float, ...]
    setup_s: Mapping[str, float]
    key_bytes: int
    security: str = SPLIT_SECURITY
    command: str | None = None
    load_average_median: float | None = None

    def to_json(self) -> JsonDict:
        out: JsonDict = {
            "benchmark": BENCHMARK, "issue": 33, "security": self.security, "machine": dict(self.machine),
            "date": self.date, "settings": self.settings.to_dict(), "workers_on_machine": self.workers_on_machine,
            "tuned": {st: {str(n): b for n, b in per.items()} for st, per in self.tuned.items()},
            "configs": [c.to_json() for c in self.configs],
            "costs_alone": [{st: dict(c) for st, c in rnd.items()} for rnd in self.costs_alone],
            "concurrent_slowdown": [{st: {str(n): v for n, v in per.items()} for st, per in rnd.items()}
                                    for rnd in self.concurrent_slowdown],
            "links": [None if lk is None else dict(lk) for lk in self.links],
            "load_average_1min": list(self.load_average_1min), "setup_s": dict(self.setup_s),
            "key_bytes": self.key_bytes}
        if self.command is not None:
            out["command"] = self.command
        if self.load_average_median is not None:
            out["load_average_median"] = self.load_average_median
        return out

    @classmethod
    def from_json(cls, value: object) -> SplitRecord:
        """A record as :meth:`to_json` wrote it (read from a file), or :class:`RecordRefused`
        naming the first field that is not: a record that names no machine and date could be
        anyone's, from any time."""
        d = _object(value, "the record")
        if d.get("benchmark") != BENCHMARK:
            raise RecordRefused(f"the record is not a {BENCHMARK} record (benchmark: {d.get('benchmark')!r})")
        machine = _object(_get(d, "machine", "the record"), "machine")
        date = _str(_get(d, "date", "the record"), "date")
        if not machine or not date:
            raise RecordRefused("a stored record names its machine and date")
        settings = SplitSettings.from_json(_get(d, "settings", "the record"))
        cost_maps = _list(_get(d, "costs_alone", "the record"), "costs_alone",
                          lambda v, w: _mapping(v, w, lambda c, w2: _mapping(c, w2, _float)))
        slowdowns = _list(_get(d, "concurrent_slowdown", "the record"), "concurrent_slowdown",
                          lambda v, w: _mapping(v, w, lambda c, w2: _int_keys(_mapping(c, w2, _float), w2)))
        median = d.get("load_average_median")
        command = d.get("command")
        return cls(
            json_object(machine, "machine"), date, settings,
            _int(_get(d, "workers_on_machine", "the record"), "workers_on_machine"),
            _tuned(_get(d, "tuned", "the record"), settings), tuple(_list(_get(d, "configs", "the record"), "configs",
                                                                        SplitConfig.from_json)),
            tuple(cost_maps), tuple(slowdowns),
            tuple(_list(_get(d, "links", "the record"), "links",
                        lambda v, w: None if v is None else _mapping(v, w, _float))),
            tuple(_list(_get(d, "load_average_1min", "the record"), "load_average_1min", _float)),
            _mapping(_get(d, "setup_s", "the record"), "setup_s", _float),
            _int(_get(d, "key_bytes", "the record"), "key_bytes"),
            _str(d.get("security", SPLIT_SECURITY), "security"),
            None if command is None else _str(command, "command"),
            None if median is None else _float(median, "load_average_median"))


def _tuned(value: object, settings: SplitSettings) -> dict[str, dict[int, int]]:
    """Per stage, the tuned baby-step count of every worker count the settings run."""
    tuned = _mapping(value, "tuned", lambda v, w: _int_keys(_mapping(v, w, _int), w))
    for st, per in tuned.items():
        if set(per) != set(settings.workers):
            raise RecordRefused(f"tuned.{st} names worker counts {sorted(per)}, the run's are "
                                f"{sorted(settings.workers)}")
    return tuned


# ---- the readers: one JSON value each, checked, or RecordRefused naming where -------------------------
def _get(d: Mapping[str, object], key: str, where: str) -> object:
    if key not in d:
        raise RecordRefused(f"{where} has no {key!r}")
    return d[key]


def _object(value: object, where: str) -> dict[str, object]:
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise RecordRefused(f"{where} must be a JSON object, got {type(value).__name__}")
    return {str(k): v for k, v in value.items()}


def _list(value: object, where: str, read: Callable[[object, str], T]) -> list[T]:
    if not isinstance(value, list):
        raise RecordRefused(f"{where} must be a JSON array, got {type(value).__name__}")
    return [read(v, f"{where}[{i}]") for i, v in enumerate(value)]


def _mapping(value: object, where: str, read: Callable[[object, str], T]) -> dict[str, T]:
    return {k: read(v, f"{where}.{k}") for k, v in _object(value, where).items()}


def _int_keys(d: Mapping[str, T], where: str) -> dict[int, T]:
    """An object keyed by worker counts (JSON keys are strings)."""
    if not all(k.isascii() and k.isdigit() and len(k) <= 4 for k in d):
        raise RecordRefused(f"{where} must be keyed by worker counts, got keys {sorted(d)[:4]}")
    return {int(k): v for k, v in d.items()}


def _int(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecordRefused(f"{where} must be an integer, got {value!r}")
    return value


def _float(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise RecordRefused(f"{where} must be a finite number, got {value!r}")
    return float(value)


def _bits(value: object, where: str) -> float | None:
    return None if value is None else _float(value, where)


def _str(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise RecordRefused(f"{where} must be a string, got {type(value).__name__}")
    return value


def _pair(value: object, where: str) -> tuple[int, int]:
    items = _list(value, where, _int)
    if len(items) != 2:
        raise RecordRefused(f"{where} must be a pair, got {len(items)} numbers")
    return items[0], items[1]


def json_object(value: Mapping[str, object], where: str) -> dict[str, JsonValue]:
    """``value`` (a machine's description) checked to be JSON all the way down."""
    return {k: _json(v, f"{where}.{k}") for k, v in value.items()}


def _json(value: object, where: str) -> JsonValue:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_json(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {str(k): _json(v, f"{where}.{k}") for k, v in value.items()}
    raise RecordRefused(f"{where} must be JSON, got {type(value).__name__}")


__all__ = ["BENCHMARK", "KINDS", "SPLIT_SECURITY", "RecordRefused", "SplitConfig", "SplitRecord", "SplitSettings",
           "json_object"]
